package redact

// E.164 numbers have at most 15 digits.
const phoneMaxDigits = 15

// phoneBounded reports whether a phone number may start at s[i]: not glued to a
// preceding letter, digit, underscore or decimal point, and, for a digit, not right
// after the "+" or "(" that a start is tried at first.
func phoneBounded(s []byte, i int) bool {
	if i == 0 {
		return true
	}
	p := s[i-1]
	return !(isWord(p) || (p == '.' && i > 1 && isDigit(s[i-2])) || (isDigit(s[i]) && (p == '+' || p == '(')))
}

// phoneAt returns the end of the longest telephone number starting at s[i], or -1.
// Phone numbers have no checksum, so the rule is a compromise between missing numbers
// and eating ordinary figures:
//
//   - digits in groups separated by a single space, dash or dot, with at most one
//     parenthesised area code among the first groups: "(555) 123-4567",
//     "+44 (0)20 7946 0958";
//   - 8 to 15 digits when it starts with "+", 10 to 15 otherwise, or a seven-digit local
//     number written 3+4 ("555-1234");
//   - groups joined by dots have at least two digits, so decimals ("3.14159265358") are
//     not numbers, and a candidate that opens like a date (2024-01-15) is not one either.
//
// The caller tries a start at every group, so digits written just before a number do
// not hide it.
func phoneAt(s []byte, i int) int {
	plus := s[i] == '+'
	if plus {
		i++
	}
	var (
		digits, groups int
		sizes          [3]int // digits in the first three groups, for the date rule
		seps           [2]byte
		dotted, paren  bool
		best           = -1
	)
	for {
		// One group: "(ddd)" or "ddd".
		open := i < len(s) && s[i] == '('
		if open {
			if paren || groups > 1 {
				return best
			}
			paren = true
			i++
		}
		n := 0
		for i < len(s) && isDigit(s[i]) {
			n++
			i++
		}
		if n == 0 {
			return best
		}
		if open {
			if i >= len(s) || s[i] != ')' || n > 4 {
				return best
			}
			i++
		}
		digits += n
		if digits > phoneMaxDigits {
			return best
		}
		if dotted && n < 2 {
			return best
		}
		if groups < len(sizes) {
			sizes[groups] = n
		}
		groups++
		if phoneValid(plus, paren, digits, groups, sizes, seps) {
			best = i
		}
		// A separator, then the next group must follow at once.
		if i >= len(s) {
			return best
		}
		sep := s[i]
		switch {
		case open && sep == ' ' && i+1 < len(s) && isDigit(s[i+1]):
			i++
		case open && isDigit(sep):
			// "(555)123-4567": no separator after the area code.
		case (sep == ' ' || sep == '-' || sep == '.') && i+1 < len(s) && (isDigit(s[i+1]) || s[i+1] == '('):
			if sep == '.' {
				if n < 2 {
					return best
				}
				dotted = true
			}
			if groups <= len(seps) {
				seps[groups-1] = sep
			}
			i++
		default:
			return best
		}
	}
}

// phoneValid applies the digit-count and date rules to a candidate ending after its
// groups-th group.
func phoneValid(plus, paren bool, digits, groups int, sizes [3]int, seps [2]byte) bool {
	if !plus && groups >= 3 && sizes[0] == 4 && sizes[1] == 2 && sizes[2] == 2 && seps[0] == seps[1] && seps[0] != ' ' {
		return false // 2024-01-15 or 2024.01.15
	}
	switch {
	case plus:
		return digits >= 8
	case digits >= 10:
		return true
	default:
		return !paren && groups == 2 && sizes[0] == 3 && sizes[1] == 4 && digits == 7
	}
}
