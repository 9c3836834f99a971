package participant

import (
	"bytes"
	"unicode/utf8"
)

// Every answer a participant sends is a small JSON object, nearly always in the form the
// page writes: {"text":"…"} or {"text":"…","modality":"…"}, without white space, and
// with strings that need no unescaping. That form is read directly; any other body
// (escapes, spacing, other members, bad text) goes through the general binding, which
// gives the errors.

// quickMessageInput fills in from body and returns true when body is in that form and
// its strings are valid UTF-8 with no escape and no control character, so that the
// general binding would read the same values without an error.
func quickMessageInput(body []byte, in *ParticipantMessageInput) bool {
	rest, ok := bytes.CutPrefix(body, []byte(`{"text":`))
	if !ok {
		return false
	}
	text, rest, ok := plainJSONString(rest)
	if !ok {
		return false
	}
	modality := ""
	if m, ok := bytes.CutPrefix(rest, []byte(`,"modality":`)); ok {
		if modality, rest, ok = plainJSONString(m); !ok {
			return false
		}
	}
	if len(rest) != 1 || rest[0] != '}' {
		return false
	}
	in.Text, in.Modality = text, modality
	return true
}

// plainJSONString reads the JSON string at the start of b when it holds no escape and
// no control character and is valid UTF-8, and returns it and what follows it.
func plainJSONString(b []byte) (string, []byte, bool) {
	if len(b) == 0 || b[0] != '"' {
		return "", nil, false
	}
	for i := 1; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			s := b[1:i]
			if !utf8.Valid(s) {
				return "", nil, false
			}
			return string(s), b[i+1:], true
		case c == '\\' || c < 0x20:
			return "", nil, false
		}
	}
	return "", nil, false
}
