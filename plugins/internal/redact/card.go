package redact

// Payment card numbers have 13 to 19 digits (ISO/IEC 7812).
const (
	cardMinDigits = 13
	cardMaxDigits = 19
)

// cardAt returns the end of the longest payment card number starting at s[i], or -1:
// 13 to 19 digits, written together or in groups separated by single spaces or dashes,
// that pass the Luhn check. A candidate starts and ends at a group boundary (the caller
// tries every group start), so "call 12 4111 1111 1111 1111" still yields the card even
// though the digits run on, while the digits inside a longer unbroken number are never
// taken.
func cardAt(s []byte, i int) int {
	var digits [cardMaxDigits]byte
	n, best := 0, -1
	for {
		for i < len(s) && isDigit(s[i]) {
			if n == cardMaxDigits {
				return best // this group runs past 19 digits: it cannot end a card
			}
			digits[n] = s[i] - '0'
			n++
			i++
		}
		if n >= cardMinDigits && luhn(digits[:n]) {
			best = i
		}
		if i+1 < len(s) && (s[i] == ' ' || s[i] == '-') && isDigit(s[i+1]) {
			i++
			continue
		}
		return best
	}
}

// luhn reports whether digits (values 0-9, most significant first) pass the Luhn check.
func luhn(digits []byte) bool {
	sum := 0
	double := false
	for k := len(digits) - 1; k >= 0; k-- {
		d := int(digits[k])
		if double {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return sum%10 == 0
}
