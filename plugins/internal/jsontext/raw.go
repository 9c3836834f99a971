package jsontext

import (
	"math/bits"

	"interviewd/plugins/internal/bytescan"
)

// shortEscape marks the bytes that may follow a backslash in a two-byte escape.
var shortEscape = [256]bool{'"': true, '\\': true, '/': true, 'b': true, 'f': true, 'n': true, 'r': true, 't': true}

var (
	quoteWord     = bytescan.Repeat('"')
	backslashWord = bytescan.Repeat('\\')
	controlBits   = bytescan.Repeat(0xe0) // a byte below 0x20 has none of these bits
)

// specials returns one bit per byte of the 64 bytes in x0..x7 that is '"', '\\' or a
// control character. It takes words rather than a slice, so that it has no bounds
// check: a function with any branch costs an exit each time it is called (see
// RawString).
func specials(x0, x1, x2, x3, x4, x5, x6, x7 uint64) uint64 {
	return special8(x0) | special8(x1)<<8 | special8(x2)<<16 | special8(x3)<<24 |
		special8(x4)<<32 | special8(x5)<<40 | special8(x6)<<48 | special8(x7)<<56
}

func special8(x uint64) uint64 {
	return bytescan.Gather(bytescan.Bytes(x, quoteWord) | bytescan.Bytes(x, backslashWord) | bytescan.Zeros(x&controlBits))
}

// RawString finds the end of the JSON string whose content starts at s[start] (just
// after its opening quote) when the string can be used as it is written: its only
// escapes are the two-byte ones (\n, \", ...) and it holds no raw control character.
// It returns the index of the closing quote and esc with the index of every escape's
// backslash appended, or ok false for any other string, including a malformed one.
//
// It crosses 64 bytes per iteration and visits the quotes and backslashes of a block
// through the bits of one mask, because in the built-in plugins every loop iteration,
// every taken branch and every call of a function that has a branch costs an exit from
// wazero's compiled code (see bytescan).
func RawString(s []byte, start int, esc []int) (end int, _ []int, ok bool) {
	return rawString(s, start, esc, true)
}

// rawString is RawString, recording the escapes only when record is set.
func rawString(s []byte, start int, esc []int, record bool) (end int, _ []int, ok bool) {
	j := start
	var skip uint64 // the escaped byte just past the previous block, when there was one
	for {
		var m uint64
		for ; j+64 <= len(s); j += 64 {
			b := s[j : j+64] // one bounds check for the eight loads
			m = specials(bytescan.Load(b, 0), bytescan.Load(b, 8), bytescan.Load(b, 16), bytescan.Load(b, 24),
				bytescan.Load(b, 32), bytescan.Load(b, 40), bytescan.Load(b, 48), bytescan.Load(b, 56)) &^ skip
			if m != 0 {
				break
			}
			skip = 0
		}
		if m == 0 {
			// Under 64 bytes are left: pad them with zeros, which count as control
			// characters, so the end of the input is found like one.
			var tmp [64]byte
			copy(tmp[:], s[j:])
			m = specials(bytescan.Load(tmp[:], 0), bytescan.Load(tmp[:], 8), bytescan.Load(tmp[:], 16), bytescan.Load(tmp[:], 24),
				bytescan.Load(tmp[:], 32), bytescan.Load(tmp[:], 40), bytescan.Load(tmp[:], 48), bytescan.Load(tmp[:], 56)) &^ skip
		}
		skip = 0
		for m != 0 {
			k := bits.TrailingZeros64(m)
			p := j + k
			if p >= len(s) {
				return 0, esc, false
			}
			switch c := s[p]; {
			case c == '"':
				return p, esc, true
			case c != '\\' || p+1 >= len(s) || !shortEscape[s[p+1]]:
				return 0, esc, false
			}
			if record {
				esc = append(esc, p)
			}
			m &^= 3 << k            // the backslash and the byte it escapes
			skip = uint64(k+1) >> 6 // 1 when the escaped byte opens the next block
		}
		j += 64
	}
}
