package redact

import (
	"encoding/binary"

	"interviewd/plugins/internal/bytescan"
)

// A built-in match begins or is anchored at a trigger byte: the first digit of a run of
// digits, '@' (email), ':' (IPv6), '+' and '(' (phone). The text between triggers is
// skipped 32 bytes at a time, and the triggers within a word are visited through the
// bits of its mask, so a text costs about one loop iteration per 32 bytes plus one per
// trigger.
var (
	colonWord = bytescan.Repeat(':')
	atWord    = bytescan.Repeat('@')
	plusWord  = bytescan.Repeat('+')
	parenWord = bytescan.Repeat('(')
)

func digitMask(x uint64) uint64 { return bytescan.HasBetween(x, '0'-1, '9'+1) }

// otherTriggers marks '@', '+', '(' and the colons that could be inside an IPv6
// address: those next to a hex digit or another colon, or at the word's edge (whose
// neighbour is in the next word). Speaker labels ("Participant: ") are not triggers.
func otherTriggers(x uint64) uint64 {
	// Branch-free on purpose: in Go's WebAssembly every taken jump goes through the
	// function's dispatch loop, and so through wazero's termination check.
	colons := bytescan.HasByte(x, colonWord)
	hexish := digitMask(x) | bytescan.HasBetween(x|bytescan.Repeat(0x20), 'a'-1, 'f'+1) | colons
	colons &= hexish<<8 | hexish>>8 | 0x8000000000000080
	// '+' and '(' matter only before a digit.
	opens := (bytescan.HasByte(x, plusWord) | bytescan.HasByte(x, parenWord)) & (digitMask(x)>>8 | 0x8000000000000000)
	return colons | opens | bytescan.HasByte(x, atWord)
}

// Tables for quietNumber, indexed by the bytes after a run of digits.
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
)

// quietNumber reports whether the digits starting at s[p] are a short number no class
// can take ("2024 we", "45 minutes", "the 15th"): at most six digits, followed by a
// quiet byte, and not by a space and another group. It is computed without branches,
// since those are what cost in Go's WebAssembly (see otherTriggers), and it decides for
// most numbers in prose.
func quietNumber(s []byte, p int) bool {
	w := loadPadded(s, p)
	k := bytescan.First(^digitMask(w) & 0x8080808080808080) // run length, 8 when 8 or more
	after := byte(w >> (8 * k))
	next := byte(w >> (8 * (k + 1)))
	if p+k >= len(s) {
		after = ' ' // the text ends after the digits
	}
	short := uint8(uint(k-7) >> 63) // 1 when k <= 6
	spaced := uint8(0)
	if after == ' ' {
		spaced = startsGroup[next]
	}
	return short&quietAfter[after]&^spaced != 0
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
		// carry has bit 7 set when the byte before s[i] is a digit, so a digit there
		// does not start a run.
		var carry uint64
		if i > 0 && isDigit(s[i-1]) {
			carry = 0x80
		}
		for ; i+32 <= len(s); i += 32 {
			x0, x1, x2, x3 := bytescan.Load(s, i), bytescan.Load(s, i+8), bytescan.Load(s, i+16), bytescan.Load(s, i+24)
			d0, d1, d2, d3 := digitMask(x0), digitMask(x1), digitMask(x2), digitMask(x3)
			starts := d0&^(d0<<8|carry) | d1&^(d1<<8|d0>>56) | d2&^(d2<<8|d1>>56) | d3&^(d3<<8|d2>>56) |
				otherTriggers(x0) | otherTriggers(x1) | otherTriggers(x2) | otherTriggers(x3)
			if starts != 0 {
				break
			}
			carry = d3 >> 56
		}
		if i >= len(s) {
			break
		}
		// The word at i holds a trigger (or is the text's short tail): visit them.
		x := loadPadded(s, i)
		d := digitMask(x)
		m := d&^(d<<8|carry) | otherTriggers(x)
		for m != 0 {
			p := i + bytescan.First(m)
			m &= m - 1
			if p >= len(s) {
				break
			}
			if isDigit(s[p]) && quietNumber(s, p) {
				continue
			}
			if start, end, label := sc.matchAt(p); label != "" {
				dst = append(dst, out[sc.lo:start]...)
				dst = append(dst, label...)
				sc.lo, i, changed = end, end, true
				continue scan
			}
		}
		i += 8
	}
	if !changed {
		return dst, false
	}
	return append(dst, out[sc.lo:]...), true
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
