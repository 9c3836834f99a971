package extract

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mustTextFile writes a text file of about size bytes of lines of words and returns
// its path.
func mustTextFile(b *testing.B, size int) string {
	b.Helper()
	line := "Participant 12 said the onboarding felt slow, but the blue prototype helped.\n"
	path := filepath.Join(b.TempDir(), "notes.txt")
	if err := os.WriteFile(path, []byte(strings.Repeat(line, size/len(line)+1)), 0o600); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkTextFile10MB extracts a 10 MB text file with the default limits: reading
// stops once MaxText (1 MiB) is collected, so memory stays near that whatever the
// file size.
func BenchmarkTextFile10MB(b *testing.B) {
	path := mustTextFile(b, 10<<20)
	lim := DefaultLimits()
	b.ReportAllocs()
	for b.Loop() {
		text, ok, err := File(context.Background(), path, ".txt", lim)
		if err != nil || !ok || len(text) < lim.MaxText-200 {
			b.Fatalf("File = %d bytes, %v, %v", len(text), ok, err)
		}
	}
}

// BenchmarkTextFile10MBWhole reads the whole 10 MB file (MaxText above its size):
// streaming keeps memory at one copy of the output plus a read buffer.
func BenchmarkTextFile10MBWhole(b *testing.B) {
	path := mustTextFile(b, 10<<20)
	lim := DefaultLimits()
	lim.MaxText = 16 << 20
	b.ReportAllocs()
	b.SetBytes(10 << 20)
	for b.Loop() {
		text, ok, err := File(context.Background(), path, ".txt", lim)
		if err != nil || !ok || len(text) < 10<<20 {
			b.Fatalf("File = %d bytes, %v, %v", len(text), ok, err)
		}
	}
}
