// Package jsontext reads and writes the few pieces of JSON text the built-in plugins
// need: whitespace, strings and whole values, scanned in place without reflection. The
// host checks the records it passes to and reads from every plugin with it too.
//
// The built-in plugins run as WebAssembly inside the host, where encoding/json's
// reflection costs both binary size and time on every record. These scanners touch each
// input byte once and allocate only into the buffers their callers pass in. They are
// strict: anything that is not RFC 8259 JSON is an error, so a plugin never emits
// garbage because it was fed garbage.
package jsontext

import (
	"errors"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"interviewd/plugins/internal/bytescan"
)

// MaxDepth bounds the nesting of arrays and objects SkipValue accepts, so hostile input
// cannot exhaust the stack.
const MaxDepth = 512

// ErrEnd reports input that ends inside a value.
var ErrEnd = errors.New("unexpected end of JSON input")

// syntaxError describes malformed JSON at an offset.
func syntaxError(s []byte, i int, want string) error {
	if i >= len(s) {
		return ErrEnd
	}
	return errors.New("invalid JSON at offset " + strconv.Itoa(i) + ": " + want + ", found " + strconv.QuoteRune(rune(s[i])))
}

// TooDeep returns the error for nesting deeper than MaxDepth at offset i.
func TooDeep(i int) error {
	return errors.New("invalid JSON at offset " + strconv.Itoa(i) + ": nested deeper than " + strconv.Itoa(MaxDepth))
}

// Syntax returns an error for malformed JSON at offset i: what was wanted there.
func Syntax(i int, want string) error {
	return errors.New("invalid JSON at offset " + strconv.Itoa(i) + ": " + want)
}

// Prefix returns err with prefix and ": " before its message, still wrapping it. The
// built-in plugins avoid package fmt, which would add to every module's size.
func Prefix(prefix string, err error) error { return &prefixed{prefix, err} }

type prefixed struct {
	prefix string
	err    error
}

func (e *prefixed) Error() string { return e.prefix + ": " + e.err.Error() }
func (e *prefixed) Unwrap() error { return e.err }

// SkipSpace returns the index of the first byte at or after i that is not JSON
// whitespace (len(s) if there is none).
func SkipSpace(s []byte, i int) int {
	for i < len(s) {
		switch s[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// Expect skips whitespace from i and returns the index just after byte c. It returns an
// error if the next non-space byte is not c.
func Expect(s []byte, i int, c byte) (int, error) {
	i = SkipSpace(s, i)
	if i >= len(s) || s[i] != c {
		return i, syntaxError(s, i, "want "+strconv.QuoteRune(rune(c)))
	}
	return i + 1, nil
}

// DecodeString decodes the JSON string starting at s[i] (which must be '"'), appends
// its value to dst and returns dst and the index just after the closing quote. Raw
// bytes are copied as they are, valid UTF-8 or not; escaped lone surrogates become
// U+FFFD. It returns an error for anything that is not a well-formed JSON string.
func DecodeString(dst, s []byte, i int) ([]byte, int, error) {
	if i >= len(s) || s[i] != '"' {
		return dst, i, syntaxError(s, i, "want string")
	}
	i++
	for {
		// Copy the run of plain bytes in one append.
		j := bytescan.IndexJSONSpecial(s, i)
		dst = append(dst, s[i:j]...)
		i = j
		if i >= len(s) {
			return dst, i, ErrEnd
		}
		switch c := s[i]; {
		case c == '"':
			return dst, i + 1, nil
		case c < 0x20:
			return dst, i, syntaxError(s, i, "control character in string")
		}
		// A backslash escape.
		if i+1 >= len(s) {
			return dst, i, ErrEnd
		}
		switch e := s[i+1]; e {
		case '"', '\\', '/':
			dst = append(dst, e)
			i += 2
		case 'b':
			dst = append(dst, '\b')
			i += 2
		case 'f':
			dst = append(dst, '\f')
			i += 2
		case 'n':
			dst = append(dst, '\n')
			i += 2
		case 'r':
			dst = append(dst, '\r')
			i += 2
		case 't':
			dst = append(dst, '\t')
			i += 2
		case 'u':
			r, ok := hex4(s, i+2)
			if !ok {
				return dst, i, syntaxError(s, i, "bad \\u escape")
			}
			i += 6
			if utf16.IsSurrogate(r) {
				// A high surrogate pairs with an immediately following \u low surrogate.
				r2, ok2 := rune(-1), false
				if i+1 < len(s) && s[i] == '\\' && s[i+1] == 'u' {
					r2, ok2 = hex4(s, i+2)
				}
				if dec := utf16.DecodeRune(r, r2); ok2 && dec != utf8.RuneError {
					r = dec
					i += 6
				} else {
					r = utf8.RuneError
				}
			}
			dst = utf8.AppendRune(dst, r)
		default:
			return dst, i, syntaxError(s, i+1, "bad escape")
		}
	}
}

// hex4 decodes the four hex digits at s[i:i+4].
func hex4(s []byte, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range s[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

const hexDigits = "0123456789abcdef"

// AppendString appends v as a quoted JSON string to dst and returns it, escaping '"',
// '\\' and control characters. Other bytes are copied as they are: the result is valid
// JSON text, and valid UTF-8 when v is.
func AppendString(dst, v []byte) []byte {
	dst = append(dst, '"')
	for i := 0; ; {
		j := bytescan.IndexJSONSpecial(v, i)
		dst = append(dst, v[i:j]...)
		if j == len(v) {
			return append(dst, '"')
		}
		switch c := v[j]; c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i = j + 1
	}
}

// SkipValue checks the JSON value starting at or after s[i] (after whitespace) and
// returns the index just after it. It returns an error for malformed JSON or nesting
// deeper than MaxDepth.
func SkipValue(s []byte, i int) (int, error) {
	return skipValue(s, i, 0)
}

func skipValue(s []byte, i, depth int) (int, error) {
	i = SkipSpace(s, i)
	if i >= len(s) {
		return i, ErrEnd
	}
	switch c := s[i]; {
	case c == '"':
		return skipString(s, i)
	case c == '{' || c == '[':
		if depth >= MaxDepth {
			return i, TooDeep(i)
		}
		return skipContainer(s, i, depth+1)
	case c == 't':
		return skipLiteral(s, i, "true")
	case c == 'f':
		return skipLiteral(s, i, "false")
	case c == 'n':
		return skipLiteral(s, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		return SkipNumber(s, i)
	}
	return i, syntaxError(s, i, "want a value")
}

// skipContainer skips the object or array starting at s[i].
func skipContainer(s []byte, i, depth int) (int, error) {
	obj := s[i] == '{'
	closing := byte(']')
	if obj {
		closing = '}'
	}
	i = SkipSpace(s, i+1)
	if i < len(s) && s[i] == closing {
		return i + 1, nil
	}
	for {
		var err error
		if obj {
			i = SkipSpace(s, i)
			if i, err = skipString(s, i); err != nil {
				return i, err
			}
			if i, err = Expect(s, i, ':'); err != nil {
				return i, err
			}
		}
		if i, err = skipValue(s, i, depth); err != nil {
			return i, err
		}
		i = SkipSpace(s, i)
		if i >= len(s) {
			return i, ErrEnd
		}
		switch s[i] {
		case ',':
			i++
		case closing:
			return i + 1, nil
		default:
			return i, syntaxError(s, i, "want ',' or closing bracket")
		}
	}
}

// skipString validates the JSON string starting at s[i] without decoding it.
func skipString(s []byte, i int) (int, error) {
	if i >= len(s) || s[i] != '"' {
		return i, syntaxError(s, i, "want string")
	}
	if end, _, ok := rawString(s, i+1, nil, false); ok {
		return end + 1, nil // the common case, found without stopping at each escape
	}
	i++
	for i < len(s) {
		i = bytescan.IndexJSONSpecial(s, i)
		if i >= len(s) {
			break
		}
		switch c := s[i]; {
		case c == '"':
			return i + 1, nil
		case c < 0x20:
			return i, syntaxError(s, i, "control character in string")
		case c == '\\':
			if i+1 >= len(s) {
				return i, ErrEnd
			}
			switch e := s[i+1]; {
			case shortEscape[e]:
				i += 2
			case e == 'u':
				if _, ok := hex4(s, i+2); !ok {
					return i, syntaxError(s, i, "bad \\u escape")
				}
				i += 6
			default:
				return i, syntaxError(s, i+1, "bad escape")
			}
		}
	}
	return i, ErrEnd
}

func skipLiteral(s []byte, i int, lit string) (int, error) {
	if len(s)-i < len(lit) || string(s[i:i+len(lit)]) != lit {
		return i, syntaxError(s, i, "want "+lit)
	}
	return i + len(lit), nil
}

// SkipNumber validates the JSON number starting at s[i] and returns the index just
// after it.
func SkipNumber(s []byte, i int) (int, error) {
	start := i
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i = skipDigits(s, i)
	default:
		return i, syntaxError(s, i, "want digit")
	}
	if i < len(s) && s[i] == '.' {
		if i+1 >= len(s) || s[i+1] < '0' || s[i+1] > '9' {
			return i, syntaxError(s, i+1, "want digit after '.'")
		}
		i = skipDigits(s, i+1)
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return i, syntaxError(s, i, "want exponent digit")
		}
		i = skipDigits(s, i)
	}
	if i == start {
		return i, syntaxError(s, i, "want number")
	}
	return i, nil
}

func skipDigits(s []byte, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// EndOfLine checks that only whitespace follows s[i] and returns an error otherwise,
// so one NDJSON line holds exactly one value.
func EndOfLine(s []byte, i int) error {
	if i = SkipSpace(s, i); i != len(s) {
		return syntaxError(s, i, "want end of line after the value")
	}
	return nil
}
