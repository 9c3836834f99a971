package extract

import (
	"io"
	"math"
	"strconv"
)

// pdfByteReader is what the lexer reads from: a bufio.Reader over an inflated stream,
// or a bytes.Reader over part of the file.
type pdfByteReader interface {
	io.ByteReader
	UnreadByte() error
}

type pdfKind uint8

const (
	pdfEOF pdfKind = iota
	pdfNum
	pdfStr     // a literal or hex string; data holds its bytes
	pdfName    // data holds the name without its slash
	pdfKeyword // an operator or other bare word; data holds it
	pdfArrOpen
	pdfArrClose
	pdfDictOpen
	pdfDictClose
	pdfArr // an array, only ever an operand; see pdfContent
)

// pdfToken is one lexical token. data aliases the lexer's buffer and is valid until
// the next call to next.
type pdfToken struct {
	kind pdfKind
	num  float64
	data []byte
}

const (
	maxPDFWord = 128 // bytes kept of a name, keyword or number; the rest is skipped
)

// pdfLexer splits PDF syntax (ISO 32000-1 §7.2) into tokens. Every call to next
// consumes at least one byte or reports the end, so a lexing loop ends after at most
// as many calls as there are input bytes. Strings keep at most maxStr bytes.
type pdfLexer struct {
	r      pdfByteReader
	buf    []byte
	maxStr int
	err    error // the first read error other than io.EOF
}

func newPDFLexer(r pdfByteReader, maxStr int) *pdfLexer {
	return &pdfLexer{r: r, maxStr: maxStr}
}

// read returns the next byte, or false at the end or on a read error (kept in err).
func (l *pdfLexer) read() (byte, bool) {
	c, err := l.r.ReadByte()
	if err != nil {
		if err != io.EOF && l.err == nil {
			l.err = err
		}
		return 0, false
	}
	return c, true
}

func (l *pdfLexer) unread() { _ = l.r.UnreadByte() }

// add appends c to the token buffer while it is under limit bytes.
func (l *pdfLexer) add(c byte, limit int) {
	if len(l.buf) < limit {
		l.buf = append(l.buf, c)
	}
}

func pdfSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == 0
}

func pdfDelimiter(c byte) bool {
	switch c {
	case '(', ')', '<', '>', '[', ']', '{', '}', '/', '%':
		return true
	}
	return false
}

// pdfRegular reports whether c may be part of a name, number or keyword.
func pdfRegular(c byte) bool { return !pdfSpace(c) && !pdfDelimiter(c) }

// next returns the next token, or a token of kind pdfEOF at the end of input.
func (l *pdfLexer) next() pdfToken {
	for {
		c, ok := l.read()
		if !ok {
			return pdfToken{kind: pdfEOF}
		}
		switch {
		case pdfSpace(c):
			continue
		case c == '%':
			l.skipLine()
			continue
		case c == '(':
			l.literal()
			return pdfToken{kind: pdfStr, data: l.buf}
		case c == '<':
			if d, ok := l.read(); ok {
				if d == '<' {
					return pdfToken{kind: pdfDictOpen}
				}
				l.unread()
			}
			l.hex()
			return pdfToken{kind: pdfStr, data: l.buf}
		case c == '>':
			if d, ok := l.read(); ok {
				if d == '>' {
					return pdfToken{kind: pdfDictClose}
				}
				l.unread()
			}
			continue // a stray '>'
		case c == '[':
			return pdfToken{kind: pdfArrOpen}
		case c == ']':
			return pdfToken{kind: pdfArrClose}
		case c == '/':
			l.word(0)
			return pdfToken{kind: pdfName, data: l.buf}
		case c == ')' || c == '{' || c == '}':
			continue // stray, or PostScript calculator braces: nothing to show
		}
		l.word(c)
		if c == '+' || c == '-' || c == '.' || (c >= '0' && c <= '9') {
			n, err := strconv.ParseFloat(string(l.buf), 64)
			if err != nil || math.IsInf(n, 0) || math.IsNaN(n) {
				n = 0 // a malformed number still takes an operand's place
			}
			return pdfToken{kind: pdfNum, num: n}
		}
		return pdfToken{kind: pdfKeyword, data: l.buf}
	}
}

// skipLine skips a comment up to its end of line.
func (l *pdfLexer) skipLine() {
	for {
		c, ok := l.read()
		if !ok || c == '\n' || c == '\r' {
			return
		}
	}
}

// word reads a run of regular characters (first, if not 0, already read) into buf.
func (l *pdfLexer) word(first byte) {
	l.buf = l.buf[:0]
	if first != 0 {
		l.buf = append(l.buf, first)
	}
	for {
		c, ok := l.read()
		if !ok {
			return
		}
		if !pdfRegular(c) {
			l.unread()
			return
		}
		l.add(c, maxPDFWord)
	}
}

// literal reads a literal string after its '(' into buf, resolving escapes. Balanced
// parentheses nest; an unterminated string ends with the input.
func (l *pdfLexer) literal() {
	l.buf = l.buf[:0]
	depth := 1
	for {
		c, ok := l.read()
		if !ok {
			return
		}
		switch c {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return
			}
		case '\r':
			// An end of line in a string reads as "\n", whichever bytes mark it.
			if d, ok := l.read(); ok && d != '\n' {
				l.unread()
			}
			c = '\n'
		case '\\':
			e, ok := l.read()
			if !ok {
				return
			}
			switch e {
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'f':
				c = '\f'
			case '\r':
				if d, ok := l.read(); ok && d != '\n' {
					l.unread()
				}
				continue // a line continuation
			case '\n':
				continue
			case '0', '1', '2', '3', '4', '5', '6', '7':
				v := int(e - '0')
				for range 2 {
					d, ok := l.read()
					if !ok {
						break
					}
					if d < '0' || d > '7' {
						l.unread()
						break
					}
					v = v*8 + int(d-'0')
				}
				c = byte(v)
			default:
				c = e // \( \) \\ and unknown escapes stand for themselves
			}
		}
		l.add(c, l.maxStr)
	}
}

// hex reads a hexadecimal string after its '<' into buf, ignoring anything that is
// not a hex digit; an odd final digit counts as followed by 0.
func (l *pdfLexer) hex() {
	l.buf = l.buf[:0]
	var v byte
	half := false
	for {
		c, ok := l.read()
		if !ok || c == '>' {
			break
		}
		d, ok := unhex(c)
		if !ok {
			continue
		}
		if half {
			l.add(v<<4|d, l.maxStr)
		} else {
			v = d
		}
		half = !half
	}
	if half {
		l.add(v<<4, l.maxStr)
	}
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// skipInlineImage skips the binary data of an inline image, after its ID operator, up
// to the white space that precedes its EI operator.
func (l *pdfLexer) skipInlineImage() {
	// state counts progress through white space, 'E', 'I'.
	state := 0
	for {
		c, ok := l.read()
		if !ok {
			return
		}
		switch {
		case pdfSpace(c):
			if state == 3 {
				return
			}
			state = 1
		case c == 'E' && state == 1:
			state = 2
		case c == 'I' && state == 2:
			state = 3
		default:
			state = 0
		}
	}
}
