package redact

import "bytes"

// ipv4Bounded reports whether a dotted quad may start at s[i] and end at s[end]: not
// inside a word or a longer dotted number (a version "1.2.3.4.5", "v1.2.3.4").
func ipv4Bounded(s []byte, i, end int) bool {
	if i > 0 && (isWord(s[i-1]) || (s[i-1] == '.' && i > 1 && isDigit(s[i-2]))) {
		return false
	}
	return end >= len(s) || !(isWord(s[end]) || (s[end] == '.' && end+1 < len(s) && isDigit(s[end+1])))
}

// ipv4At returns the end of the dotted quad starting at s[i], or -1.
func ipv4At(s []byte, i int) int {
	for octet := 0; octet < 4; octet++ {
		if octet > 0 {
			if i >= len(s) || s[i] != '.' {
				return -1
			}
			i++
		}
		v, n := 0, 0
		for i < len(s) && isDigit(s[i]) && n < 4 {
			v = v*10 + int(s[i]-'0')
			n++
			i++
		}
		if n == 0 || n > 3 || v > 255 {
			return -1
		}
	}
	return i
}

func isIPv6Byte(c byte) bool { return isHex(c) || c == ':' || c == '.' }

// ipv6Around looks for an IPv6 address (full, compressed with "::", or ending in a
// dotted IPv4 address) in the run of hex digits, colons and dots around s[p], not
// starting before lo. It returns the address as [start, end), or start -1, and the end
// of the run, which a caller need not look at again. When the run begins inside a word
// ("IP:fe80::1") the address is looked for after the word's colon. A sentence's
// closing dot or colon is dropped. The address must hold a hex digit, so a bare "::" in
// prose is left alone.
func ipv6Around(s []byte, lo, p int) (start, end, runEnd int) {
	l := p
	for l > lo && isIPv6Byte(s[l-1]) {
		l--
	}
	h := p
	for h < len(s) && isIPv6Byte(s[h]) {
		h++
	}
	colon := bytes.IndexByte(s[l:h], ':')
	if colon < 0 || (h < len(s) && isWord(s[h])) {
		return -1, -1, h // no colon, or runs on into a word: "12:30:45abc"
	}
	if l > 0 && isWord(s[l-1]) {
		// The run's first piece belongs to a word: try after its first colon.
		l += colon + 1
		if l < h && s[l] == ':' {
			l-- // "IP::1" is "IP" then "::1"
		}
	}
	if n := ipv6Within(s[l:h]); n > 0 {
		return l, l + n, h
	}
	return -1, -1, h
}

// ipv6Within returns the length of run as an IPv6 address, trying it whole and then
// without trailing dots and a trailing colon, or -1.
func ipv6Within(run []byte) int {
	for range 2 {
		if validIPv6(run) {
			return len(run)
		}
		n := len(run)
		for n > 0 && run[n-1] == '.' {
			n--
		}
		if n > 0 && run[n-1] == ':' && !(n > 1 && run[n-2] == ':') {
			n--
		}
		if n == len(run) {
			return -1
		}
		run = run[:n]
	}
	if validIPv6(run) {
		return len(run)
	}
	return -1
}

// validIPv6 reports whether b is exactly an IPv6 address with at least one hex digit:
// eight groups of one to four hex digits, or fewer around a single "::", the last two
// groups optionally written as a dotted IPv4 address.
func validIPv6(b []byte) bool {
	if len(b) < 3 || len(b) > 45 {
		return false
	}
	groups, compressed := 0, false
	i := 0
	if b[0] == ':' {
		if b[1] != ':' {
			return false
		}
		compressed, i = true, 2
		if i == len(b) {
			return false // "::" alone: no hex digit
		}
	}
	for i < len(b) {
		// A group: hex digits, or a dotted quad at the very end.
		j := i
		for j < len(b) && isHex(b[j]) && j-i < 5 {
			j++
		}
		if j < len(b) && b[j] == '.' {
			if ipv4At(b, i) != len(b) {
				return false
			}
			groups += 2
			break
		}
		if j == i || j-i > 4 {
			return false
		}
		groups++
		if j == len(b) {
			break
		}
		if b[j] != ':' {
			return false
		}
		j++
		if j < len(b) && b[j] == ':' {
			if compressed {
				return false
			}
			compressed = true
			j++
		} else if j == len(b) {
			return false // a single trailing colon
		}
		i = j
	}
	if compressed {
		return groups <= 7
	}
	return groups == 8
}
