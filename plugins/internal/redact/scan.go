package redact

import (
	"encoding/binary"
	"math/bits"

	"interviewd/plugins/internal/bytescan"
)

// A built-in match begins or is anchored at a trigger byte: the first digit of a run of
// digits, '@' (email), ':' (IPv6), '+' and '(' (phone). The scan below skips blocks
// without a candidate byte 64 and 32 bytes at a time, and turns a block that has one,
// with the 8 bytes after it, into masks with one bit per byte (bytescan.Gather), so
// that a byte's neighbour is one shift away. From those masks it computes, without a
// branch, the triggers worth trying: speaker labels ("Participant: ") are dropped
// there, and most numbers in prose ("2024 we", "45 minutes", "the 15th") are found
// quiet with two table lookups each. In Go's WebAssembly every loop iteration, every
// taken branch and every call of a function with a branch costs an exit from wazero's
// compiled code (see bytescan), so a text costs about one iteration per 64 bytes plus
// a few per trigger tried.

// Words of one repeated byte for the masks.
var (
	colonWord = bytescan.Repeat(':')
	atWord    = bytescan.Repeat('@')
	plusWord  = bytescan.Repeat('+')
	parenWord = bytescan.Repeat('(')
	caseBit   = bytescan.Repeat(0x20)
)

func digitMask(x uint64) uint64 { return bytescan.HasBetween(x, '0'-1, '9'+1) }

// mayTrigger reports whether the 32 bytes in x0..x3 may hold a trigger: a digit, '@',
// '+', '(' or a ':' with a hex digit or ':' beside it in its word (or at the word's
// edge). This function and blockTriggers take words rather than a slice so that they
// have no bounds check, hence no branch: calling a function that has one costs an exit.
func mayTrigger(x0, x1, x2, x3 uint64) bool {
	// One expression over the four words rather than four calls of a helper: a call
	// in Go's WebAssembly costs more than the arithmetic here.
	c0, c1, c2, c3 := bytescan.Bytes(x0, colonWord), bytescan.Bytes(x1, colonWord), bytescan.Bytes(x2, colonWord), bytescan.Bytes(x3, colonWord)
	d0, d1, d2, d3 := digitMask(x0), digitMask(x1), digitMask(x2), digitMask(x3)
	h0, h1, h2, h3 := d0|hexLetters(x0)|c0, d1|hexLetters(x1)|c1, d2|hexLetters(x2)|c2, d3|hexLetters(x3)|c3
	const edges = 0x8000000000000080
	colons := c0&(h0<<8|h0>>8|edges) | c1&(h1<<8|h1>>8|edges) | c2&(h2<<8|h2>>8|edges) | c3&(h3<<8|h3>>8|edges)
	return d0|d1|d2|d3|colons|others(x0)|others(x1)|others(x2)|others(x3) != 0
}

// hexLetters marks a-f and A-F.
func hexLetters(x uint64) uint64 { return bytescan.HasBetween(x|caseBit, 'a'-1, 'f'+1) }

// others marks '@', '+' and '(' (inexactly: only whether there is one is exact).
func others(x uint64) uint64 {
	return bytescan.HasByte(x, atWord) | bytescan.HasByte(x, plusWord) | bytescan.HasByte(x, parenWord)
}

// classes is one bit per byte of a word, or of a block and the word after it, for
// each class of byte the triggers depend on.
type classes struct {
	digit    uint64 // 0-9
	hexColon uint64 // a hex digit or ':', what an IPv6 colon has beside it
	colon    uint64
	at       uint64
	opens    uint64 // '+' or '(', which open a phone number
}

// wordClasses returns the classes of the bytes of x.
func wordClasses(x uint64) classes {
	g := bytescan.Gather
	digit := digitMask(x)
	colon := bytescan.Bytes(x, colonWord)
	return classes{
		digit:    g(digit),
		hexColon: g(digit | hexLetters(x) | colon),
		colon:    g(colon),
		at:       g(bytescan.Bytes(x, atWord)),
		opens:    g(bytescan.Bytes(x, plusWord) | bytescan.Bytes(x, parenWord)),
	}
}

// Bits of prevClass, the classes of the byte before a block.
const (
	prevDigit    = 1
	prevHexColon = 2
)

var prevClass = func() (t [256]uint8) {
	for c := range 256 {
		b := byte(c)
		if isDigit(b) {
			t[c] |= prevDigit
		}
		if isHex(b) || b == ':' {
			t[c] |= prevHexColon
		}
	}
	return t
}()

// blockTriggers returns, for the block of 32 bytes in x0..x3, followed by x4 (zeros
// past the text's end) and preceded by a byte of prevClass prev, one bit per byte
// where a match should be tried, in the order they are to be tried: '@', a ':' with a
// hex digit or ':' beside it, '+' and '(' before a digit. It also returns the digits of
// the block and x4, and the first digit of each run that starts in the block; the
// caller adds those runs that are not quiet numbers (see quiet).
func blockTriggers(x0, x1, x2, x3, x4 uint64, prev uint8) (t, digits, starts uint64) {
	c0, c1, c2, c3 := wordClasses(x0), wordClasses(x1), wordClasses(x2), wordClasses(x3)
	d4 := digitMask(x4)
	d := c0.digit | c1.digit<<8 | c2.digit<<16 | c3.digit<<24 | bytescan.Gather(d4)<<32
	hc := c0.hexColon | c1.hexColon<<8 | c2.hexColon<<16 | c3.hexColon<<24 |
		bytescan.Gather(d4|hexLetters(x4)|bytescan.Bytes(x4, colonWord))<<32
	colon := c0.colon | c1.colon<<8 | c2.colon<<16 | c3.colon<<24
	at := c0.at | c1.at<<8 | c2.at<<16 | c3.at<<24
	opens := c0.opens | c1.opens<<8 | c2.opens<<16 | c3.opens<<24
	colon &= hc<<1 | uint64(prev&prevHexColon)>>1 | hc>>1
	t = at | colon | opens&(d>>1)
	return t, d, d &^ (d<<1 | uint64(prev&prevDigit)) & 0xffffffff
}

// Tables for quiet, indexed by the bytes after a run of digits.
var (
	// quietAfter: a byte after digits that no class continues with: not a digit, not
	// '.', ':', '-', '@', '/', not a hex letter (IPv6), not a character of an email's
	// local part other than letters g-z (so "15th" is quiet).
	quietAfter = func() (t [256]uint8) {
		for c := range 256 {
			b := byte(c)
			switch {
			case isHex(b), b == '.', b == ':', b == '-', b == '@', b == '/', b == '_', b == '%', b == '+', b == '\'':
			default:
				t[c] = 1
			}
		}
		return t
	}()
	// startsGroup: a byte that can start the next group of a number.
	startsGroup = func() (t [256]uint8) {
		for c := '0'; c <= '9'; c++ {
			t[c] = 1
		}
		t['('] = 1
		return t
	}()
	isSpace = [256]uint8{' ': 1}
)

// quiet returns 1 when the run of digits starting at bit k of a window of 40 bytes w
// (whose digits are the bits of digits) is a quiet number that no class can take
// ("2024 we", "45 minutes", "the 15th"): at most six digits, followed by a byte in
// quietAfter, and not by a space and another group ("555 1234"). The text ends as if
// with a zero byte, which is quiet. It is computed without a branch (see mayTrigger).
func quiet(w *[5]uint64, digits uint64, k uint) uint64 {
	after := k + uint(bits.TrailingZeros64(^(digits >> k))) // the byte after the run
	short := uint64(after-k-7) >> 63                        // 1 when the run has at most 6 digits
	after = min(after, 38)                                  // a long run's neighbours do not matter
	a := byte(w[after>>3] >> (after & 7 * 8))
	next := byte(w[(after+1)>>3] >> ((after + 1) & 7 * 8))
	return short & uint64(quietAfter[a]&^(isSpace[a]&startsGroup[next]))
}

// loadPadded returns the word at s[i:], padded with zero bytes past the end of s.
func loadPadded(s []byte, i int) uint64 {
	if i+8 <= len(s) {
		return bytescan.Load(s, i)
	}
	var tmp [8]byte
	copy(tmp[:], s[i:])
	return binary.LittleEndian.Uint64(tmp[:])
}

// scanner is the state of one pass of the built-in classes over a text.
type scanner struct {
	r  *Redactor
	s  []byte
	lo int // s[:lo] is decided: written out or replaced
	// ipv6Until is the end of the last run IPv6 was tried on, so a run is tried once.
	ipv6Until int
	// nextAt and nextColon cache where the next '@' and ':' are (or len(s)), for the
	// cheap "is there one close ahead" tests.
	nextAt, nextColon int
}

// builtins finds the built-in classes in s and appends out (the same length as s,
// usually s itself) with the matching spans replaced to dst, and reports whether
// anything was. Matches are taken left to right; where several classes could start at
// one place, the order is email, card, IPv6, IPv4, phone (an email holds digits a phone
// would take, a card's digits would pass for a phone, and an IPv6 address can end in
// an IPv4 one).
func (r *Redactor) builtins(dst, s, out []byte) ([]byte, bool) {
	sc := scanner{r: r, s: s, nextAt: -1, nextColon: -1}
	changed := false
	i := 0
scan:
	for i < len(s) {
		for ; i+64 <= len(s); i += 64 {
			b := s[i : i+64] // one bounds check for the eight loads
			if mayTrigger(bytescan.Load(b, 0), bytescan.Load(b, 8), bytescan.Load(b, 16), bytescan.Load(b, 24)) {
				break
			}
			if mayTrigger(bytescan.Load(b, 32), bytescan.Load(b, 40), bytescan.Load(b, 48), bytescan.Load(b, 56)) {
				i += 32
				break
			}
		}
		for ; i+32 <= len(s); i += 32 {
			b := s[i : i+32]
			if mayTrigger(bytescan.Load(b, 0), bytescan.Load(b, 8), bytescan.Load(b, 16), bytescan.Load(b, 24)) {
				break
			}
		}
		if i >= len(s) {
			break
		}
		var w [5]uint64
		if i+40 <= len(s) {
			w = [5]uint64{bytescan.Load(s, i), bytescan.Load(s, i+8), bytescan.Load(s, i+16), bytescan.Load(s, i+24), bytescan.Load(s, i+32)}
		} else {
			w = tailWords(s, i)
		}
		var prev uint8
		if i > 0 {
			prev = prevClass[s[i-1]]
		}
		t, digits, starts := blockTriggers(w[0], w[1], w[2], w[3], w[4], prev)
		for ; starts != 0; starts &= starts - 1 {
			k := uint(bits.TrailingZeros64(starts))
			t |= (quiet(&w, digits, k) ^ 1) << k
		}
		for ; t != 0; t &= t - 1 {
			if start, end, label := sc.matchAt(i + bits.TrailingZeros64(t)); label != "" {
				dst = append(dst, out[sc.lo:start]...)
				dst = append(dst, label...)
				sc.lo, i, changed = end, end, true
				continue scan
			}
		}
		i += 32
	}
	if !changed {
		return dst, false
	}
	return append(dst, out[sc.lo:]...), true
}

// tailWords returns the five words at s[i:], zeros past the end of s.
func tailWords(s []byte, i int) [5]uint64 {
	var tmp [40]byte
	copy(tmp[:], s[i:])
	return [5]uint64{bytescan.Load(tmp[:], 0), bytescan.Load(tmp[:], 8), bytescan.Load(tmp[:], 16), bytescan.Load(tmp[:], 24), bytescan.Load(tmp[:], 32)}
}

// matchAt tries the classes at the trigger s[p] and returns the match and its label,
// or an empty label.
func (sc *scanner) matchAt(p int) (start, end int, label string) {
	s, r := sc.s, sc.r
	switch c := s[p]; c {
	case '@':
		if r.email {
			if st, en := emailAt(s, sc.lo, p); st >= 0 {
				return st, en, "[EMAIL]"
			}
		}
		return 0, 0, ""
	case ':':
		if r.ip && p >= sc.ipv6Until && sc.mayBeIPv6(p) {
			st, en, runEnd := ipv6Around(s, sc.lo, p)
			if st >= 0 {
				return st, en, "[IP]"
			}
			sc.ipv6Until = runEnd // its digits may still be an IPv4 address or a phone
		}
		return 0, 0, ""
	case '+', '(':
		if p+1 >= len(s) || !isDigit(s[p+1]) {
			return 0, 0, ""
		}
		if c == '+' && sc.atAhead(p) {
			if st, en, ok := sc.emailAhead(p); ok {
				return st, en, "[EMAIL]"
			}
		}
		if r.phone && phoneBounded(s, p) {
			if en := phoneAt(s, p); en > 0 {
				return p, en, "[PHONE]"
			}
		}
		return 0, 0, ""
	}
	// The first digit of a run.
	runEnd := digitRunEnd(s, p)
	after, afterNext := byte(' '), byte(' ')
	if runEnd < len(s) {
		after = s[runEnd]
	}
	if runEnd+1 < len(s) {
		afterNext = s[runEnd+1]
	}
	if (isLocal(after) || after == '@') && sc.atAhead(p) {
		if st, en, ok := sc.emailAhead(p); ok {
			return st, en, "[EMAIL]"
		}
	}
	runLen := runEnd - p
	sepDigit := isDigit(afterNext)
	if r.card && (runLen >= cardMinDigits || (sepDigit && (after == ' ' || after == '-'))) {
		if en := cardAt(s, p); en > 0 {
			return p, en, "[CARD]"
		}
	}
	if r.ip && p >= sc.ipv6Until && (after == ':' || after == '.' || isHex(after)) && sc.colonAhead(p) {
		st, en, runEnd6 := ipv6Around(s, sc.lo, p)
		if st >= 0 {
			return st, en, "[IP]"
		}
		sc.ipv6Until = runEnd6
	}
	if r.ip && after == '.' && sepDigit && runLen <= 3 {
		if en := ipv4At(s, p); en > 0 && ipv4Bounded(s, p, en) {
			return p, en, "[IP]"
		}
	}
	if r.phone && (runLen >= 7 || ((after == ' ' || after == '-' || after == '.') && (sepDigit || afterNext == '('))) && phoneBounded(s, p) {
		if en := phoneAt(s, p); en > 0 {
			return p, en, "[PHONE]"
		}
	}
	return 0, 0, ""
}

// digitRunEnd returns the end of the run of digits starting at s[i]. Runs shorter
// than a word, the common case, take no loop.
func digitRunEnd(s []byte, i int) int {
	if m := ^digitMask(loadPadded(s, i)) & 0x8080808080808080; m != 0 {
		return min(i+bytescan.First(m), len(s))
	}
	for i += 8; ; i += 8 {
		if m := ^digitMask(loadPadded(s, i)) & 0x8080808080808080; m != 0 {
			return min(i+bytescan.First(m), len(s))
		}
	}
}

// atAhead reports whether an '@' comes within a local part's length after s[p].
func (sc *scanner) atAhead(p int) bool {
	if sc.nextAt < p {
		sc.nextAt = bytescan.IndexByte(sc.s, p, '@')
	}
	return sc.nextAt-p <= maxLocal
}

// colonAhead reports whether a ':' comes within an IPv6 address's length after s[p].
func (sc *scanner) colonAhead(p int) bool {
	if sc.nextColon < p {
		sc.nextColon = bytescan.IndexByte(sc.s, p, ':')
	}
	return sc.nextColon-p <= 40
}

// mayBeIPv6 reports whether the colon at s[p] has a hex digit or colon beside it, the
// cheap test before looking for an address around it.
func (sc *scanner) mayBeIPv6(p int) bool {
	s := sc.s
	return (p > 0 && (isHex(s[p-1]) || s[p-1] == ':')) || (p+1 < len(s) && (isHex(s[p+1]) || s[p+1] == ':'))
}

// emailAhead looks for an address whose local part holds s[p]: the run of local-part
// bytes from p must end at an '@'. It is what lets "jane1975@example.com" be an email
// before its digits are taken for anything else.
func (sc *scanner) emailAhead(p int) (int, int, bool) {
	if !sc.r.email {
		return 0, 0, false
	}
	at := localRunEnd(sc.s, p)
	if at >= len(sc.s) || sc.s[at] != '@' {
		return 0, 0, false
	}
	st, en := emailAt(sc.s, sc.lo, at)
	return st, en, st >= 0
}
