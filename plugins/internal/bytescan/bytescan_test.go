package bytescan

import (
	"bytes"
	"testing"
)

// FuzzIndex checks the word-at-a-time searches against byte-at-a-time ones, at every
// starting offset.
func FuzzIndex(f *testing.F) {
	f.Add([]byte("hello, \"world\" \\ \x01 and more text past thirty-two bytes\n"), byte('\n'))
	f.Add([]byte{0x80, 0xff, 0x22, 0x5c, 0x1f, 0x20, 0x7f}, byte(0x80))
	f.Fuzz(func(t *testing.T, s []byte, c byte) {
		for from := 0; from <= len(s); from++ {
			want := bytes.IndexByte(s[from:], c)
			if want < 0 {
				want = len(s)
			} else {
				want += from
			}
			if got := IndexByte(s, from, c); got != want {
				t.Fatalf("IndexByte(%q, %d, %q) = %d, want %d", s, from, c, got, want)
			}
			want = len(s)
			for i := from; i < len(s); i++ {
				if s[i] == '"' || s[i] == '\\' || s[i] < 0x20 {
					want = i
					break
				}
			}
			if got := IndexJSONSpecial(s, from); got != want {
				t.Fatalf("IndexJSONSpecial(%q, %d) = %d, want %d", s, from, got, want)
			}
		}
	})
}

func TestHasBetweenExact(t *testing.T) {
	for m := 0; m <= 127; m += 7 {
		for n := m + 1; n <= 128; n += 5 {
			for c := 0; c < 256; c++ {
				x := Repeat(0x41)&^0xff | uint64(c) // one byte under test, the rest 'A'
				got := HasBetween(x, byte(m), byte(n))&0x80 != 0
				want := c > m && c < n
				if got != want {
					t.Fatalf("HasBetween(byte %#x, %d, %d) = %v, want %v", c, m, n, got, want)
				}
			}
		}
	}
}

// FuzzGatherBytes checks that Bytes marks every equal byte and no other, and that
// Gather turns the marks into bit k for byte k, for every byte value in every place.
func FuzzGatherBytes(f *testing.F) {
	f.Add([]byte("a\"\"\x00\x01#\"!"), byte('"'))
	f.Add([]byte{0, 0, 1, 0, 0xff, 0x80, 0, 0x7f}, byte(0))
	f.Fuzz(func(t *testing.T, b []byte, c byte) {
		var w [8]byte
		copy(w[:], b)
		x := Load(w[:], 0)
		var want uint64
		for k, v := range w {
			if v == c {
				want |= 1 << k
			}
		}
		if got := Gather(Bytes(x, Repeat(c))); got != want {
			t.Fatalf("Gather(Bytes(% x, %#x)) = %08b, want %08b", w, c, got, want)
		}
		if got := Gather(Zeros(x)); got != Gather(Bytes(x, 0)) {
			t.Fatalf("Zeros(% x) = %08b, Bytes(x, 0) = %08b", w, got, Gather(Bytes(x, 0)))
		}
	})
}
