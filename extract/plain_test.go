package extract

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

func TestPlainText(t *testing.T) {
	tests := []struct {
		name   string
		data   []byte
		want   string
		wantOK bool
	}{
		{"OK", []byte("hello world\n"), "hello world", true},
		{"OKInvalidUTF8Replaced", []byte("caf\xe9 au lait, na\xefve but mostly fine text"), "caf\uFFFD au lait, na\uFFFDve but mostly fine text", true},
		{"OKUTF8BOMSkipped", []byte("\xef\xbb\xbfbonjour"), "bonjour", true},
		{"OKUTF16LE", utf16LE("\ufeffhello\r\nwörld 😀"), "hello\nwörld 😀", true},
		{"OKUTF16BE", utf16BE("\ufeffhello"), "hello", true},
		{"OKFewControlCharacters", []byte("text\x01with a stray control byte"), "textwith a stray control byte", true},
		{"ErrEmpty", nil, "", false},
		{"ErrWhiteSpaceOnly", []byte(" \t\r\n\n  \f\v\u00a0\u3000"), "", false},
		{"ErrNULByte", []byte("looks like text\x00but is not"), "", false},
		{"ErrNULByteLate", append(bytes.Repeat([]byte("text "), 50000), 0), "", false},
		{"ErrMostlyControl", bytes.Repeat([]byte("\x01\x02\x03a\x04\x05"), 100), "", false},
		{"ErrMostlyInvalidUTF8", bytes.Repeat([]byte{'a', 0xff, 0xfe, 0x80, 0x81}, 10000), "", false},
		{"ErrPNGHeader", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := plainText(context.Background(), bytes.NewReader(tt.data), int64(len(tt.data)), DefaultLimits())
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("plainText = %.80q, %v; want %q, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestPlainTextStopsAtMaxText(t *testing.T) {
	lim := DefaultLimits()
	lim.MaxText = 10
	// "ééééé..." is two bytes a rune: the cap must not split one.
	data := strings.Repeat("é", 100)
	got, ok := plainText(context.Background(), strings.NewReader(data), int64(len(data)), lim)
	if !ok || got != strings.Repeat("é", 5) {
		t.Errorf("plainText = %q, %v; want five é", got, ok)
	}
	lim.MaxText = 9
	got, _ = plainText(context.Background(), strings.NewReader(data), int64(len(data)), lim)
	if got != strings.Repeat("é", 4) || !utf8.ValidString(got) {
		t.Errorf("plainText with an odd cap = %q; want four é", got)
	}
}

func TestPlainTextReadsNoMoreThanNeeded(t *testing.T) {
	lim := DefaultLimits()
	lim.MaxText = 1000
	r := &countingReader{r: strings.NewReader(strings.Repeat("word ", 2_000_000))}
	if _, ok := plainText(context.Background(), r, 10_000_000, lim); !ok {
		t.Fatal("plainText found no text")
	}
	if r.n > 1<<20 {
		t.Errorf("read %d bytes for %d bytes of text; want it to stop early", r.n, lim.MaxText)
	}
}

func TestSinkNormalises(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"SpacesCollapse", "a    b", "a b"},
		{"TabWinsInARun", "a  \t  b", "a\tb"},
		{"LineEndsUnify", "a\r\nb\rc\nd", "a\nb\nc\nd"},
		{"CRLFIsOneBreak", "a\r\n\r\nb", "a\n\nb"},
		{"BlankLinesCollapse", "a\n\n\n\n\nb", "a\n\nb"},
		{"EdgesTrimmed", " \n\t a b \n\n", "a b"},
		{"TrailingSpaceDropped", "a   \nb", "a\nb"},
		{"LeadingSpaceDropped", "a\n   b", "a\nb"},
		{"UnicodeSpaces", "a\u00a0\u2003b\u2028c", "a b\nc"},
		{"ControlsDropped", "a\x01\x7f\u0090b", "ab"},
		{"ZeroWidthDropped", "a\ufeff\u200bb", "ab"},
		{"FormFeedBreaks", "a\fb\vc", "a\nb\nc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSink(1000, 0)
			if err := s.writeString(tt.in); err != nil {
				t.Fatal(err)
			}
			if got := s.buf.String(); got != tt.want {
				t.Errorf("sink(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestSinkFull(t *testing.T) {
	s := newSink(5, 0)
	err := s.writeString("ab cd ef")
	if err != errFull || s.buf.String() != "ab cd" {
		t.Fatalf("writeString = %v, buf %q; want errFull, \"ab cd\"", err, s.buf.String())
	}
	if err := s.writeRune('x'); err != errFull {
		t.Errorf("writeRune on a full sink = %v, want errFull", err)
	}
}

func TestSinkSeparatorNeedsRoomForText(t *testing.T) {
	s := newSink(3, 0)
	s.writeString("abc")
	s.newline()
	if err := s.writeString("d"); err != errFull || s.buf.String() != "abc" {
		t.Errorf("writeString = %v, buf %q; want errFull and no dangling separator", err, s.buf.String())
	}
}

func utf16LE(s string) []byte {
	var b []byte
	for _, u := range utf16.Encode([]rune(s)) {
		b = append(b, byte(u), byte(u>>8))
	}
	return b
}

func utf16BE(s string) []byte {
	var b []byte
	for _, u := range utf16.Encode([]rune(s)) {
		b = append(b, byte(u>>8), byte(u))
	}
	return b
}
