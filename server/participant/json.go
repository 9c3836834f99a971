package participant

import (
	"strconv"
	"unicode/utf8"

	json "github.com/goccy/go-json"
)

// A turn's answer is the participant API's most frequent body, and its shape is fixed:
// it is written field by field, with the JSON package's own encoding for any string
// that needs escaping, so the bytes are exactly json.MarshalNoEscape's.

// appendParticipantTurn appends json.MarshalNoEscape(t) to b.
func appendParticipantTurn(b []byte, t ParticipantTurn) ([]byte, error) {
	var err error
	b = append(b, `{"status":`...)
	if b, err = appendJSONString(b, t.Status); err != nil {
		return nil, err
	}
	b = append(b, `,"messages":`...)
	if t.Messages == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, m := range t.Messages {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"speaker":`...)
			if b, err = appendJSONString(b, m.Speaker); err != nil {
				return nil, err
			}
			b = append(b, `,"text":`...)
			if b, err = appendJSONString(b, m.Text); err != nil {
				return nil, err
			}
			b = append(b, `,"at":`...)
			if b, err = appendJSONString(b, string(m.At)); err != nil {
				return nil, err
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = append(b, `,"progress":`...)
	if p := t.Progress; p == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, `{"question":`...)
		b = strconv.AppendInt(b, int64(p.Question), 10)
		b = append(b, `,"total":`...)
		b = strconv.AppendInt(b, int64(p.Total), 10)
		b = append(b, '}')
	}
	return append(b, '}'), nil
}

// appendJSONString appends s as the JSON package encodes it: quoted as it is when it
// holds nothing to escape, else by the package itself.
func appendJSONString(b []byte, s string) ([]byte, error) {
	if !plainForJSON(s) {
		raw, err := json.MarshalNoEscape(s)
		return append(b, raw...), err
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"'), nil
}

// plainForJSON reports whether s is valid UTF-8 with no character the JSON package
// escapes: control characters, quote, backslash, <, >, & (escaped even without HTML
// escaping), U+2028 and U+2029.
func plainForJSON(s string) bool {
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if !jsonPlainASCII[c] {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError || r == '\u2028' || r == '\u2029' {
			return false
		}
		i += size
	}
	return true
}

// jsonPlainASCII marks the ASCII bytes written as they are (DEL too is left to the
// package, which need not be asked how it writes it).
var jsonPlainASCII = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()
