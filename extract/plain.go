package extract

import (
	"bufio"
	"context"
	"io"
	"unicode/utf16"
	"unicode/utf8"
)

const (
	// plainJunkPercent is the share of unreadable runes above which a text file is
	// taken for binary.
	plainJunkPercent = 30
	// plainSniffRunes is how many runes are read before the junk share is first
	// judged, so a binary file is given up on early instead of read to its end.
	plainSniffRunes = 8 * 1024
)

// plainText reads a .txt, .md or .csv file as text, streaming: it never holds more
// than its read buffer and MaxText bytes of output. UTF-8 is expected (a UTF-8 byte
// order mark is skipped); a UTF-16 file with a byte order mark is decoded as such.
// It returns ok=false for empty, white-space-only or binary input: any NUL byte, or
// more than plainJunkPercent unreadable runes.
func plainText(ctx context.Context, r io.Reader, size int64, lim Limits) (string, bool) {
	br := bufio.NewReaderSize(r, 64*1024)
	s := newSink(lim.MaxText, size)
	next := br.ReadRune
	if bom, _ := br.Peek(2); len(bom) == 2 {
		switch {
		case bom[0] == 0xff && bom[1] == 0xfe:
			br.Discard(2)
			next = utf16Reader{br: br, little: true}.ReadRune
		case bom[0] == 0xfe && bom[1] == 0xff:
			br.Discard(2)
			next = utf16Reader{br: br}.ReadRune
		}
	}
	for n := 1; ; n++ {
		c, _, err := next()
		if err != nil {
			break // io.EOF or a read error: judge what was read
		}
		if c == 0 {
			return "", false
		}
		// Invalid UTF-8 arrives as U+FFFD: kept as such, and counted as junk.
		if err := s.writeRune(c); err != nil {
			break
		}
		if n%plainSniffRunes == 0 {
			if ctx.Err() != nil {
				return "", false
			}
			if s.junk*100 > (s.text+s.junk)*plainJunkPercent {
				return "", false
			}
		}
	}
	return s.result(plainJunkPercent)
}

// utf16Reader decodes UTF-16 code units from br; unpaired surrogates become U+FFFD.
type utf16Reader struct {
	br     *bufio.Reader
	little bool
}

// ReadRune returns the next rune and the number of bytes it took, or io.EOF.
func (u utf16Reader) ReadRune() (rune, int, error) {
	a, err := u.unit()
	if err != nil {
		return 0, 0, err
	}
	if !utf16.IsSurrogate(rune(a)) {
		return rune(a), 2, nil
	}
	if a >= 0xdc00 {
		return utf8.RuneError, 2, nil // a low surrogate first
	}
	peek, err := u.br.Peek(2)
	if err != nil {
		return utf8.RuneError, 2, nil
	}
	b := u.order(peek)
	if b < 0xdc00 || b > 0xdfff {
		return utf8.RuneError, 2, nil // leave the next unit for the next call
	}
	u.br.Discard(2)
	return utf16.DecodeRune(rune(a), rune(b)), 4, nil
}

// unit reads one code unit; a lone trailing byte counts as the end.
func (u utf16Reader) unit() (uint16, error) {
	var b [2]byte
	if _, err := io.ReadFull(u.br, b[:]); err != nil {
		return 0, io.EOF
	}
	return u.order(b[:]), nil
}

func (u utf16Reader) order(b []byte) uint16 {
	if u.little {
		return uint16(b[0]) | uint16(b[1])<<8
	}
	return uint16(b[0])<<8 | uint16(b[1])
}
