// Package bytescan finds bytes in text eight at a time, with the bits of a uint64.
//
// The built-in plugins run inside wazero with its termination check on (so a runaway
// plugin can be stopped at its deadline), and that check costs an exit from the
// compiled code on every iteration of every loop: a byte-at-a-time loop runs about
// thirty times slower than a loop that looks at 32 bytes per iteration. Every scan
// over the whole of a text in the built-in plugins goes through this package.
//
// The masks follow "Bit Twiddling Hacks" (Sean Eron Anderson): each returns a uint64
// with the high bit of a byte set where that byte matches. Only the lowest set bit is
// exact for HasZero and HasLess (a borrow can mark bytes above a real match), which is
// all a search needs; HasBetween is exact everywhere.
package bytescan

import (
	"encoding/binary"
	"math/bits"
)

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
	low = 0x7f7f7f7f7f7f7f7f
)

// Load returns the eight bytes at s[i:] as a little-endian word (so byte i is the
// lowest). s must have eight bytes from i.
func Load(s []byte, i int) uint64 { return binary.LittleEndian.Uint64(s[i:]) }

// Repeat returns a word of eight bytes c.
func Repeat(c byte) uint64 { return lsb * uint64(c) }

// HasZero marks the zero bytes of x.
func HasZero(x uint64) uint64 { return (x - lsb) & ^x & msb }

// HasByte marks the bytes of x equal to the byte repeated in pattern (see Repeat).
func HasByte(x, pattern uint64) uint64 { return HasZero(x ^ pattern) }

// HasLess marks the bytes of x below n, for n <= 128.
func HasLess(x uint64, n byte) uint64 { return (x - lsb*uint64(n)) & ^x & msb }

// HasBetween marks the bytes of x strictly between m and n, for m <= 127 and n <= 128.
func HasBetween(x uint64, m, n byte) uint64 {
	t := x & low
	return (lsb*(127+uint64(n)) - t) & ^x & (t + lsb*(127-uint64(m))) & msb
}

// First returns the index, 0 to 7, of the lowest marked byte of a non-zero mask.
func First(mask uint64) int { return bits.TrailingZeros64(mask) >> 3 }

// IndexByte returns the index of the first c at or after from, or len(s).
func IndexByte(s []byte, from int, c byte) int {
	p := Repeat(c)
	i := from
	for ; i+32 <= len(s); i += 32 {
		if HasByte(Load(s, i), p)|HasByte(Load(s, i+8), p)|HasByte(Load(s, i+16), p)|HasByte(Load(s, i+24), p) != 0 {
			break // in this block: the word loop below finds where
		}
	}
	for ; i+8 <= len(s); i += 8 {
		if m := HasByte(Load(s, i), p); m != 0 {
			return i + First(m)
		}
	}
	for ; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return len(s)
}

var (
	quotes     = Repeat('"')
	backslashs = Repeat('\\')
)

// jsonSpecial marks the bytes a JSON string cannot hold as they are: '"', '\\' and
// control characters.
func jsonSpecial(x uint64) uint64 {
	return HasByte(x, quotes) | HasByte(x, backslashs) | HasLess(x, 0x20)
}

// IndexJSONSpecial returns the index of the first '"', '\\' or control character at or
// after from, or len(s).
func IndexJSONSpecial(s []byte, from int) int {
	i := from
	for ; i+32 <= len(s); i += 32 {
		if jsonSpecial(Load(s, i))|jsonSpecial(Load(s, i+8))|jsonSpecial(Load(s, i+16))|jsonSpecial(Load(s, i+24)) != 0 {
			break
		}
	}
	for ; i+8 <= len(s); i += 8 {
		if m := jsonSpecial(Load(s, i)); m != 0 {
			return i + First(m)
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c == '"' || c == '\\' || c < 0x20 {
			return i
		}
	}
	return len(s)
}
