package extract

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// sink collects extracted text, normalising whitespace as it goes and refusing to
// grow past its cap, so no extractor ever holds more text than it may return.
//
// Normalisation: line breaks of every kind become "\n"; a run of horizontal white
// space becomes one tab if it held a tab and one space otherwise; white space at the
// start and end of lines and of the text is dropped; more than one blank line in a
// row becomes one. Control characters, private-use and unassigned code points are
// dropped, and counted with replacement characters as junk, so a caller can tell
// unreadable output from text.
type sink struct {
	buf   strings.Builder
	max   int
	space byte // pending horizontal separator: 0, ' ' or '\t'
	lines int  // pending line breaks
	cr    bool // the last rune was '\r', so a following '\n' is the same break
	full  bool

	text, junk int // runes kept as text, and unreadable runes seen
}

// newSink returns a sink that holds at most max bytes. hint, when positive, is the
// input size: the buffer is sized once for min(hint, max) bytes instead of growing.
func newSink(max int, hint int64) *sink {
	s := &sink{max: max}
	if hint > 0 {
		s.buf.Grow(int(min(hint, int64(max))))
	}
	return s
}

// newline records a line break before the next text.
func (s *sink) newline() { s.lines++; s.cr = false }

// paragraph records a blank line before the next text.
func (s *sink) paragraph() { s.lines += 2; s.cr = false }

// blank records a space before the next text on the same line.
func (s *sink) blank() {
	if s.space == 0 {
		s.space = ' '
	}
	s.cr = false
}

// tab records a tab before the next text on the same line.
func (s *sink) tab() { s.space = '\t'; s.cr = false }

// writeString adds str (invalid UTF-8 becomes U+FFFD). It returns errFull once the
// sink is full; the rune that did not fit is dropped whole.
func (s *sink) writeString(str string) error {
	for _, r := range str {
		if err := s.writeRune(r); err != nil {
			return err
		}
	}
	return nil
}

// writeBytes is writeString for a byte slice, without copying it.
func (s *sink) writeBytes(b []byte) error {
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		b = b[n:]
		if err := s.writeRune(r); err != nil {
			return err
		}
	}
	return nil
}

// writeRune adds one rune. It returns errFull once the sink is full.
func (s *sink) writeRune(r rune) error {
	if s.full {
		return errFull
	}
	cr := s.cr
	s.cr = false
	switch {
	case r == '\r':
		s.lines++
		s.cr = true
		return nil
	case r == '\n':
		if !cr {
			s.lines++
		}
		return nil
	case r == '\t':
		s.space = '\t'
		return nil
	case r == ' ':
		s.blank()
		return nil
	case r == '\v' || r == '\f':
		s.lines++
		return nil
	case r < 0x20 || r == 0x7f:
		s.junk++
		return nil
	case r < utf8.RuneSelf:
		// Printable ASCII: the common case, kept cheap.
	case r == 0x85 || r == 0x2028 || r == 0x2029:
		s.lines++
		return nil
	case r == 0xfeff || r == 0x200b:
		// Byte order marks and zero-width spaces carry no text.
		return nil
	case unicode.IsSpace(r):
		s.blank()
		return nil
	case r == utf8.RuneError:
		s.junk++ // kept, so the reader sees where bytes were unreadable
	case !unicode.IsGraphic(r):
		// C1 controls, private use, unassigned code points: nothing a reader can use.
		s.junk++
		return nil
	}
	return s.put(r)
}

// put writes r after any pending separator, if both fit.
func (s *sink) put(r rune) error {
	var sep [2]byte
	n := 0
	if s.buf.Len() > 0 {
		switch {
		case s.lines >= 2:
			sep, n = [2]byte{'\n', '\n'}, 2
		case s.lines == 1:
			sep, n = [2]byte{'\n'}, 1
		case s.space != 0:
			sep, n = [2]byte{s.space}, 1
		}
	}
	size := utf8.RuneLen(r)
	if size < 0 {
		r, size = utf8.RuneError, 3
	}
	if s.buf.Len()+n+size > s.max {
		s.full = true
		return errFull
	}
	s.buf.Write(sep[:n])
	s.buf.WriteRune(r)
	s.lines, s.space = 0, 0
	if r != utf8.RuneError {
		s.text++
	}
	return nil
}

// readable reports whether the sink holds text and at most junkPercent of the runes it
// saw were unreadable.
func (s *sink) readable(junkPercent int) bool {
	if s.text == 0 {
		return false
	}
	return s.junk*100 <= (s.text+s.junk)*junkPercent
}

// result returns the text and whether it is readable (see readable).
func (s *sink) result(junkPercent int) (string, bool) {
	if !s.readable(junkPercent) {
		return "", false
	}
	return s.buf.String(), true
}
