package jsontext

import (
	"errors"
	"fmt"
	"io"

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
				return nil, fmt.Errorf("line %d is longer than %d bytes", lr.n+1, lr.max)
			}
			return line, nil
		}
		lr.scanned = lr.end - lr.start
		if lr.scanned > lr.max+1 { // +1 for the CR of a CRLF ending
			return nil, fmt.Errorf("line %d is longer than %d bytes", lr.n+1, lr.max)
		}
		if lr.eof {
			if lr.start == lr.end {
				return nil, io.EOF
			}
			line := trimEOL(lr.buf[lr.start:lr.end])
			lr.start, lr.scanned = lr.end, 0
			if len(line) > lr.max {
				return nil, fmt.Errorf("line %d is longer than %d bytes", lr.n+1, lr.max)
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

func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}

// Member returns the raw text of the member named key of the JSON object that is the
// whole of line, and whether it was present. It returns an error if line is not
// exactly one well-formed JSON object.
func Member(line []byte, key string) (raw []byte, found bool, err error) {
	i, err := Expect(line, 0, '{')
	if err != nil {
		return nil, false, errors.New("not a JSON object")
	}
	var name []byte
	i = SkipSpace(line, i)
	if i < len(line) && line[i] == '}' {
		return nil, false, EndOfLine(line, i+1)
	}
	for {
		i = SkipSpace(line, i)
		if name, i, err = DecodeString(name[:0], line, i); err != nil {
			return nil, false, err
		}
		if i, err = Expect(line, i, ':'); err != nil {
			return nil, false, err
		}
		start := SkipSpace(line, i)
		if i, err = SkipValue(line, start); err != nil {
			return nil, false, err
		}
		if string(name) == key && !found {
			raw, found = line[start:i], true
		}
		i = SkipSpace(line, i)
		if i >= len(line) {
			return nil, false, ErrEnd
		}
		switch line[i] {
		case ',':
			i++
		case '}':
			if err := EndOfLine(line, i+1); err != nil {
				return nil, false, err
			}
			return raw, found, nil
		default:
			return nil, false, syntaxError(line, i, "want ',' or '}'")
		}
	}
}
