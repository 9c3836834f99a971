package moderator

import (
	"regexp"
	"testing"
)

// TestBuiltinPatternsCompile compiles every pattern of the built-in engine, as package
// init did before they were made lazy: a bad one fails here, not in a request.
func TestBuiltinPatternsCompile(t *testing.T) {
	if len(builtinPatterns) < 40 {
		t.Fatalf("%d patterns registered; the built-in engine has more than 40", len(builtinPatterns))
	}
	for _, l := range builtinPatterns {
		if _, err := regexp.Compile(l.src); err != nil {
			t.Errorf("%.60s: %v", l.src, err)
		}
		if l.get() == nil {
			t.Errorf("%.60s: not compiled", l.src)
		}
	}
}
