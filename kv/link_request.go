package kv

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// LinkRequest is a participant link request as decoded from the wire.
type LinkRequest struct {
	Context  map[string]string
	Audience string
	Note     string
	Label    string // checked by ValidateLinkLabel (link_status.go)
}

// Link audiences. A group link is reusable by any number of visitors; a person link
// addresses one interview, claimed by whoever opens it first.
const (
	AudienceGroup  = "group"
	AudiencePerson = "person"
)

// Participant link limits. Lengths count Unicode code points ("characters"), so a key of
// 100 accented letters is fine although it takes more than 100 bytes; the encoded size
// counts UTF-8 bytes of the compact JSON object.
const (
	LinkContextMaxKeys       = 20
	LinkContextKeyMaxChars   = 100
	LinkContextValueMaxChars = 2048
	LinkContextMaxBytes      = 16384
	LinkNoteMaxChars         = 2048
)

// reservedContextKeys are names the service uses in invite URLs and link records; a
// context key spelled like one of them (under case folding) could be confused with them.
var reservedContextKeys = [...]string{
	"token", "link", "study", "study_id", "interview", "interview_id", "mode", "lang",
	"preview", "test", "audience", "note", "context", "sig", "expires",
}

// ReservedContextKey reports whether key is reserved. The comparison uses Unicode simple
// case folding (strings.EqualFold), so "TOKEN", "ſtudy" (long s) and "lin\u212a" (Kelvin
// sign) are all reserved: they render or normalise like the reserved names.
func ReservedContextKey(key string) bool {
	for _, r := range reservedContextKeys {
		if strings.EqualFold(key, r) {
			return true
		}
	}
	return false
}

// ValidateLinkRequest returns the normalised request: the note trimmed of surrounding
// white space (unicode.IsSpace) and an empty audience defaulted to "group". When the
// request breaks any rule it returns a zero LinkRequest and an EINVALID error (Invalid)
// listing every violation, in a stable order: context-wide problems, then each context
// key in sorted order, then audience, then note.
//
// Control characters are Unicode category Cc (C0, DEL and C1, so NUL too); a key holding
// one is reported as control_character. Line and paragraph separators (U+2028/U+2029) and
// format characters are not control characters and are allowed. Values may hold control
// characters other than NUL.
func ValidateLinkRequest(r LinkRequest) (LinkRequest, error) {
	var errs []FieldError
	if len(r.Context) > LinkContextMaxKeys {
		errs = append(errs, FieldError{
			Loc: []any{"context"}, Type: "too_many_keys",
			Msg: "Context may have at most 20 keys.",
			Ctx: map[string]any{"max_keys": LinkContextMaxKeys},
		})
	}
	if contextEncodedSize(r.Context) > LinkContextMaxBytes {
		errs = append(errs, FieldError{
			Loc: []any{"context"}, Type: "too_large",
			Msg: "Context must fit in 16384 bytes when encoded as JSON.",
			Ctx: map[string]any{"max_bytes": LinkContextMaxBytes},
		})
	}

	keys := make([]string, 0, len(r.Context))
	for k := range r.Context {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		errs = appendContextEntryErrors(errs, k, r.Context[k])
	}

	out := r
	switch r.Audience {
	case "":
		out.Audience = AudienceGroup
	case AudienceGroup, AudiencePerson:
	default:
		errs = append(errs, FieldError{
			Loc: []any{"audience"}, Type: "enum",
			Msg: "Audience must be 'group' or 'person'.",
			Ctx: map[string]any{"expected": "'group' or 'person'"},
		})
	}

	out.Note = strings.TrimFunc(r.Note, unicode.IsSpace)
	if utf8.RuneCountInString(out.Note) > LinkNoteMaxChars {
		errs = append(errs, FieldError{
			Loc: []any{"note"}, Type: "string_too_long",
			Msg: "Note may be at most 2048 characters long after trimming surrounding white space.",
			Ctx: map[string]any{"max_length": LinkNoteMaxChars},
		})
	}
	if strings.IndexByte(out.Note, 0) >= 0 {
		errs = append(errs, FieldError{
			Loc: []any{"note"}, Type: "null_character",
			Msg: "Note must not contain NUL characters.",
		})
	}
	errs = appendLabelErrors(errs, &out)

	if len(errs) > 0 {
		return LinkRequest{}, Invalid(errs...)
	}
	return out, nil
}

// appendContextEntryErrors appends every violation of one context entry. Key and value
// problems share the path ["context",key]; the message says which one it is.
func appendContextEntryErrors(errs []FieldError, key, value string) []FieldError {
	loc := func() []any { return []any{"context", key} }
	if key == "" {
		errs = append(errs, FieldError{
			Loc: loc(), Type: "string_too_short",
			Msg: "Context keys must not be empty.",
			Ctx: map[string]any{"min_length": 1},
		})
	}
	if utf8.RuneCountInString(key) > LinkContextKeyMaxChars {
		errs = append(errs, FieldError{
			Loc: loc(), Type: "string_too_long",
			Msg: "Context keys may be at most 100 characters long.",
			Ctx: map[string]any{"max_length": LinkContextKeyMaxChars},
		})
	}
	if strings.IndexFunc(key, unicode.IsControl) >= 0 {
		errs = append(errs, FieldError{
			Loc: loc(), Type: "control_character",
			Msg: "Context keys must not contain control characters.",
		})
	}
	if ReservedContextKey(key) {
		errs = append(errs, FieldError{
			Loc: loc(), Type: "reserved_key",
			Msg: "This context key is reserved by the service; choose another name.",
		})
	}
	if utf8.RuneCountInString(value) > LinkContextValueMaxChars {
		errs = append(errs, FieldError{
			Loc: loc(), Type: "string_too_long",
			Msg: "Context values may be at most 2048 characters long.",
			Ctx: map[string]any{"max_length": LinkContextValueMaxChars},
		})
	}
	if strings.IndexByte(value, 0) >= 0 {
		errs = append(errs, FieldError{
			Loc: loc(), Type: "null_character",
			Msg: "Context values must not contain NUL characters.",
		})
	}
	return errs
}

// contextEncodedSize returns the exact length in bytes of ctx encoded as a compact JSON
// object with minimal escaping: UTF-8 kept as is (no HTML escaping, no \u escapes for
// non-ASCII), `"` and `\` escaped with a backslash, \b \f \n \r \t as two-character
// escapes and other C0 controls as \u00XX. It allocates nothing, so the limit costs no
// memory however large the input. An invalid UTF-8 byte counts as U+FFFD (3 bytes), the
// replacement a JSON decoder makes. A nil or empty map counts as "{}".
//
// encoding/json produces the same bytes except that it also escapes U+2028 and U+2029
// (6 bytes instead of 3) and writes invalid bytes as \ufffd; the minimal form is what a
// client gets from JSON.stringify or json.dumps(ensure_ascii=False), so a client can check
// the limit with its own encoder.
func contextEncodedSize(ctx map[string]string) int {
	n := 2 // braces
	if len(ctx) > 1 {
		n += len(ctx) - 1 // commas
	}
	for k, v := range ctx {
		n += jsonStringSize(k) + 1 + jsonStringSize(v) // colon
	}
	return n
}

// jsonStringSize returns the encoded length of s as a JSON string, quotes included.
func jsonStringSize(s string) int {
	n := 2
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t':
				n += 2
			case c < 0x20:
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && w == 1 {
			n += 3
		} else {
			n += w
		}
		i += w
	}
	return n
}
