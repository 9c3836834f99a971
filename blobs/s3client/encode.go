package s3client

import "strings"

// uriEncode escapes s the way SigV4 wants it in the canonical request, and so the way we
// send it: every byte except the unreserved A-Z a-z 0-9 - _ . ~ becomes %XX (upper-case
// hex), and '/' is kept only when keepSlash (object paths, not query values). The
// standard library's escapers differ from this in details ('+', '!', '*', '(' ...), and
// any difference between what is signed and what is sent is a refused signature.
func uriEncode(s string, keepSlash bool) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s) + len(s)/4)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9',
			c == '-', c == '_', c == '.', c == '~', c == '/' && keepSlash:
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}
