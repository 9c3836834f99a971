package redact

import (
	"bytes"
	"unicode"
	"unicode/utf8"
)

// isLocal reports whether c may appear in the local part of an address as people write
// them: letters, digits and . _ % + - '. The rarer RFC 5322 characters (! # $ & * / = ?
// ^ ` { | } ~) are left out on purpose, so a URL's query string is not taken for one.
func isLocal(c byte) bool {
	return isAlnum(c) || c == '.' || c == '_' || c == '%' || c == '+' || c == '-' || c == '\''
}

// localStart returns where the local part ending at s[at] begins, not before lo. Beyond
// ASCII it takes letters, digits and marks, so "zoë.müller@" is whole while a curly
// quote before the address is not.
func localStart(s []byte, lo, at int) int {
	start := at
	for start > lo {
		if c := s[start-1]; c < utf8.RuneSelf {
			if !isLocal(c) {
				break
			}
			start--
			continue
		}
		r, size := utf8.DecodeLastRune(s[lo:start])
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r) {
			break
		}
		start -= size
	}
	return start
}

func isDomain(c byte) bool { return isAlnum(c) || c == '-' || c == '.' }

// emailAt returns the address whose '@' is s[at], not starting before lo, or (-1, -1):
// a non-empty local part not starting or ending with a dot, and a domain of at least
// two labels ending in an alphabetic top-level label. A sentence's closing dot is not
// taken as part of the domain.
func emailAt(s []byte, lo, at int) (int, int) {
	start := localStart(s, lo, at)
	for start < at && (s[start] == '.' || s[start] == '\'') {
		start++
	}
	if start == at || s[at-1] == '.' {
		return -1, -1
	}
	end := at + 1
	for end < len(s) && isDomain(s[end]) {
		end++
	}
	for end > at+1 && (s[end-1] == '.' || s[end-1] == '-') {
		end--
	}
	if !validDomain(s[at+1 : end]) {
		return -1, -1
	}
	return start, end
}

// maxLocal is the longest local part an address may have (RFC 5321).
const maxLocal = 64

// localRunEnd returns the end of the run of local-part bytes from i, looking at most
// maxLocal bytes ahead: where an address's '@' would be if one starts before i.
func localRunEnd(s []byte, i int) int {
	stop := min(len(s), i+maxLocal)
	for i < stop && isLocal(s[i]) {
		i++
	}
	return i
}

// validDomain checks a host name of two or more dot-separated labels of letters, digits
// and inner hyphens, ending in an alphabetic (or punycode "xn--") top-level label.
func validDomain(d []byte) bool {
	labels := 0
	for len(d) > 0 {
		n := bytes.IndexByte(d, '.')
		last := n < 0
		if last {
			n = len(d)
		}
		label := d[:n]
		if len(label) == 0 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		labels++
		if last {
			return labels >= 2 && validTLD(label)
		}
		d = d[n+1:]
	}
	return false
}

func validTLD(label []byte) bool {
	if len(label) > 4 && (label[0]|0x20) == 'x' && (label[1]|0x20) == 'n' && label[2] == '-' && label[3] == '-' {
		return true
	}
	if len(label) < 2 {
		return false
	}
	for _, c := range label {
		if !isLetter(c) {
			return false
		}
	}
	return true
}
