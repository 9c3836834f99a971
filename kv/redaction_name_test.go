package kv

import (
	"regexp"
	"testing"
)

// TestValidPatternNameIsTheDocumentedExpression: the hand-written check accepts exactly
// what ^[A-Z][A-Z0-9_]{0,31}$ does.
func TestValidPatternNameIsTheDocumentedExpression(t *testing.T) {
	re := regexp.MustCompile(`^[A-Z][A-Z0-9_]{0,31}$`)
	for _, name := range []string{"", "A", "a", "_A", "1A", "EMAIL", "EMPLOYEE_ID", "X9_", "AB-C", "ÄB",
		"A234567890123456789012345678901", "A2345678901234567890123456789012", "A23456789012345678901234567890123", "A\n"} {
		if got, want := validPatternName(name), re.MatchString(name); got != want {
			t.Errorf("%q: %v, the expression says %v", name, got, want)
		}
	}
}

func FuzzValidPatternName(f *testing.F) {
	re := regexp.MustCompile(`^[A-Z][A-Z0-9_]{0,31}$`)
	for _, s := range []string{"EMAIL", "a", "", "A_1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if got, want := validPatternName(name), re.MatchString(name); got != want {
			t.Fatalf("%q: %v, the expression says %v", name, got, want)
		}
	})
}
