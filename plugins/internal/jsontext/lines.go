package jsontext

import (
	"errors"
	"io"
	"strconv"

	"interviewd/plugins/internal/bytescan"
)

// LineReader reads newline-delimited JSON: one value per line, blank lines skipped.
// It keeps its own buffer and finds line ends a word at a time (see bytescan).
type LineReader struct {
	r          io.Reader
	buf        []byte
	start, end int // buffered, unread bytes: buf[start:end]
	scanned    int // bytes after start known to hold no '\n'
	max        int
	n          int // lines read, for error messages
	eof        bool
}

// NewLineReader returns a LineReader over r that refuses lines longer than max bytes.
func NewLineReader(r io.Reader, max int) *LineReader {
	return &LineReader{r: r, buf: make([]byte, 64<<10), max: max}
}

// Line returns the number of the line Next returned last, counting from 1.
func (lr *LineReader) Line() int { return lr.n }

// Next returns the next non-blank line without its line ending. The slice is valid
// until the following call. It returns io.EOF after the last line, and an error for a
// read failure or a line longer than the limit.
func (lr *LineReader) Next() ([]byte, error) {
	for {
		line, err := lr.readLine()
		if err != nil {
			return nil, err
		}
		lr.n++
		if SkipSpace(line, 0) < len(line) {
			return line, nil
		}
	}
}

func (lr *LineReader) readLine() ([]byte, error) {
	for {
		if k := bytescan.IndexByte(lr.buf[:lr.end], lr.start+lr.scanned, '\n'); k < lr.end {
			line := trimEOL(lr.buf[lr.start:k])
			lr.start, lr.scanned = k+1, 0
			if len(line) > lr.max {
				return nil, lr.tooLong()
			}
			return line, nil
		}
		lr.scanned = lr.end - lr.start
		if lr.scanned > lr.max+1 { // +1 for the CR of a CRLF ending
			return nil, lr.tooLong()
		}
		if lr.eof {
			if lr.start == lr.end {
				return nil, io.EOF
			}
			line := trimEOL(lr.buf[lr.start:lr.end])
			lr.start, lr.scanned = lr.end, 0
			if len(line) > lr.max {
				return nil, lr.tooLong()
			}
			return line, nil
		}
		if err := lr.fill(); err != nil {
			return nil, err
		}
	}
}

// fill reads more input after the buffered bytes, first moving them to the front of
// the buffer, or into a larger one when they fill it.
func (lr *LineReader) fill() error {
	if lr.start > 0 {
		lr.end = copy(lr.buf, lr.buf[lr.start:lr.end])
		lr.start = 0
	}
	if lr.end == len(lr.buf) {
		bigger := make([]byte, 2*len(lr.buf))
		copy(bigger, lr.buf[:lr.end])
		lr.buf = bigger
	}
	n, err := lr.r.Read(lr.buf[lr.end:])
	lr.end += n
	switch {
	case errors.Is(err, io.EOF):
		lr.eof = true
	case err != nil:
		return err
	}
	return nil
}

func (lr *LineReader) tooLong() error {
	return errors.New("line " + strconv.Itoa(lr.n+1) + " is longer than " + strconv.Itoa(lr.max) + " bytes")
}

func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}

// Member returns the raw text of the member named key of the JSON object that is the
// whole of line, and whether it was present (the first, if repeated). It returns an
// error if line is not exactly one well-formed JSON object.
func Member(line []byte, key string) (raw []byte, found bool, err error) {
	if i := SkipSpace(line, 0); i >= len(line) || line[i] != '{' {
		return nil, false, errors.New("not a JSON object")
	}
	end, err := Object(line, 0, func(name []byte, value int) (int, error) {
		end, err := SkipValue(line, value)
		if err == nil && !found && string(name) == key {
			raw, found = line[value:end], true
		}
		return end, err
	})
	if err == nil {
		err = EndOfLine(line, end)
	}
	if err != nil {
		return nil, false, err
	}
	return raw, found, nil
}

// Object calls member for each member of the JSON object at or after s[i] (after
// whitespace), with the member's name and the index where its value starts; member
// returns the index after the value. Object returns the index after the object, or
// the first error.
func Object(s []byte, i int, member func(name []byte, value int) (int, error)) (int, error) {
	i, err := Expect(s, i, '{')
	if err != nil {
		return i, err
	}
	if i = SkipSpace(s, i); i < len(s) && s[i] == '}' {
		return i + 1, nil
	}
	var name []byte
	for {
		if name, i, err = DecodeString(name[:0], s, SkipSpace(s, i)); err != nil {
			return i, err
		}
		if i, err = Expect(s, i, ':'); err != nil {
			return i, err
		}
		if i, err = member(name, SkipSpace(s, i)); err != nil {
			return i, err
		}
		if i = SkipSpace(s, i); i >= len(s) {
			return i, ErrEnd
		}
		switch s[i] {
		case ',':
			i++
		case '}':
			return i + 1, nil
		default:
			return i, syntaxError(s, i, "want ',' or '}'")
		}
	}
}

// Array calls elem with the index where each element of the JSON array at or after
// s[i] starts; elem returns the index after the element. Array returns the index after
// the array, or the first error.
func Array(s []byte, i int, elem func(value int) (int, error)) (int, error) {
	i, err := Expect(s, i, '[')
	if err != nil {
		return i, err
	}
	if i = SkipSpace(s, i); i < len(s) && s[i] == ']' {
		return i + 1, nil
	}
	for {
		if i, err = elem(SkipSpace(s, i)); err != nil {
			return i, err
		}
		if i = SkipSpace(s, i); i >= len(s) {
			return i, ErrEnd
		}
		switch s[i] {
		case ',':
			i++
		case ']':
			return i + 1, nil
		default:
			return i, syntaxError(s, i, "want ',' or ']'")
		}
	}
}
