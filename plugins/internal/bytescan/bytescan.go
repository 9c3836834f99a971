// Package bytescan finds bytes in text eight at a time, with the bits of a uint64.
//
// The built-in plugins run inside wazero with its termination check on (so a runaway
// plugin can be stopped at its deadline), and that check costs an exit from the
// compiled code, about 25 ns, each time a loop header is reached. Go's WebAssembly
// makes every taken jump go through the function's dispatch loop, and enters that loop
// on every call of a function that has any branch (a bounds check counts). So a
// byte-at-a-time loop runs about thirty times slower than one that looks at 32 or 64
// bytes per iteration, and the helpers the hot loops call take words, not slices, and
// do not branch. Every scan over the whole of a text in the built-in plugins goes
// through this package or follows these rules.
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

// Zeros marks the zero bytes of x, every one of them (unlike HasZero): no borrow
// crosses a byte, since (b & 0x7f) + 0x7f stays below 0x100.
func Zeros(x uint64) uint64 { return ^((x&low + low) | x) & msb }

// Bytes marks the bytes of x equal to the byte repeated in pattern, exactly.
func Bytes(x, pattern uint64) uint64 { return Zeros(x ^ pattern) }

// Gather packs the marks of an exact mask into one bit per byte: bit k of the result
// for byte k. The multiplication moves the high bit of byte k to bit 56+k; no two
// partial products meet, so nothing carries. With Gather, a block of 32 or 64 bytes
// becomes one mask whose bits are visited in order, and a byte's neighbour is one
// shift away.
func Gather(mask uint64) uint64 { return (mask >> 7) * 0x0102040810204080 >> 56 }

// First returns the index, 0 to 7, of the lowest marked byte of a non-zero mask.
func First(mask uint64) int { return bits.TrailingZeros64(mask) >> 3 }

// IndexByte returns the index of the first c at or after from, or len(s).
func IndexByte(s []byte, from int, c byte) int {
	p := Repeat(c)
	i := from
	for ; i+64 <= len(s); i += 64 {
		b := s[i : i+64]
		if HasByte(Load(b, 0), p)|HasByte(Load(b, 8), p)|HasByte(Load(b, 16), p)|HasByte(Load(b, 24), p)|
			HasByte(Load(b, 32), p)|HasByte(Load(b, 40), p)|HasByte(Load(b, 48), p)|HasByte(Load(b, 56), p) != 0 {
			break // in this block: the loops below find where
		}
	}
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
