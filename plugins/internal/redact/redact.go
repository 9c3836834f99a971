// Package redact finds personal data in free text and replaces it with labels:
// [EMAIL], [PHONE], [CARD], [IP], and one label per custom pattern. It is the logic of
// the built-in redactor plugin, kept importable so it is tested and fuzzed natively while
// the plugin itself is tested through the WebAssembly host.
//
// The built-in classes use hand-written scanners rather than regular expressions: they
// run inside WebAssembly on every free-text cell of an export, where speed matters, and
// the rules they encode (Luhn checks, octet ranges, IPv6 group counts) are awkward in a
// regular expression anyway. They aim to remove rather than to keep: when in doubt a
// number-like span is redacted. Custom patterns use the standard library's regexp, whose
// matching time is linear in the input, so a hostile pattern cannot stall a run.
package redact

import (
	"bytes"
	"errors"
	"regexp"
	"strconv"
	"strings"

	"interviewd/plugins/internal/jsontext"
)

// Limits on custom patterns, so a configuration cannot make every cell expensive.
const (
	MaxPatterns     = 64
	MaxPatternBytes = 1024
)

// Config selects what a Redactor removes. The zero value removes nothing; DefaultConfig
// removes every built-in class.
type Config struct {
	Email    bool      `json:"email"`
	Phone    bool      `json:"phone"`
	Card     bool      `json:"card"`
	IP       bool      `json:"ip"`
	Patterns []Pattern `json:"patterns"`
}

// Pattern is a custom regular expression (RE2 syntax, as Go's regexp) whose matches
// become the label "[" + upper-cased Name + "]".
type Pattern struct {
	Name  string `json:"name"`
	Regex string `json:"regex"`
}

// DefaultConfig returns the configuration used when the organisation changed nothing:
// every built-in class on, no custom patterns.
func DefaultConfig() Config {
	return Config{Email: true, Phone: true, Card: true, IP: true}
}

// ParseConfig decodes a redactor configuration object. Absent fields keep their
// DefaultConfig value, and null means the defaults. It returns an error for malformed
// JSON, unknown fields or values of the wrong type.
func ParseConfig(raw []byte) (Config, error) {
	cfg := DefaultConfig()
	// JSON whitespace only: bytes.TrimSpace would also take "\fnull" for null.
	if i := jsontext.SkipSpace(raw, 0); i == len(raw) || string(bytes.Trim(raw, " \t\r\n")) == "null" {
		return cfg, nil
	}
	end, err := jsontext.Object(raw, 0, func(name []byte, v int) (int, error) {
		switch string(name) {
		case "email":
			return parseBool(raw, v, "email", &cfg.Email)
		case "phone":
			return parseBool(raw, v, "phone", &cfg.Phone)
		case "card":
			return parseBool(raw, v, "card", &cfg.Card)
		case "ip":
			return parseBool(raw, v, "ip", &cfg.IP)
		case "patterns":
			return parsePatterns(raw, v, &cfg.Patterns)
		}
		return v, errors.New("unknown field " + strconv.Quote(string(name)))
	})
	if err == nil {
		err = jsontext.EndOfLine(raw, end)
	}
	if err != nil {
		return Config{}, jsontext.Prefix("config", err)
	}
	return cfg, nil
}

// parseBool reads the boolean at raw[v] into dst.
func parseBool(raw []byte, v int, field string, dst *bool) (int, error) {
	switch {
	case bytes.HasPrefix(raw[v:], []byte("true")):
		*dst = true
		return v + 4, nil
	case bytes.HasPrefix(raw[v:], []byte("false")):
		*dst = false
		return v + 5, nil
	}
	return v, errors.New(strconv.Quote(field) + " must be true or false")
}

// parsePatterns reads the array of {"name", "regex"} objects (or null) at raw[v].
func parsePatterns(raw []byte, v int, dst *[]Pattern) (int, error) {
	if bytes.HasPrefix(raw[v:], []byte("null")) {
		*dst = nil
		return v + 4, nil
	}
	if v >= len(raw) {
		return v, jsontext.ErrEnd
	}
	if raw[v] != '[' {
		return v, errors.New(`"patterns" must be an array`)
	}
	var out []Pattern
	end, err := jsontext.Array(raw, v, func(e int) (int, error) {
		if e >= len(raw) {
			return e, jsontext.ErrEnd
		}
		if raw[e] != '{' {
			return e, errors.New(`each pattern must be an object {"name", "regex"}`)
		}
		var p Pattern
		end, err := jsontext.Object(raw, e, func(name []byte, v int) (int, error) {
			var dst *string
			switch string(name) {
			case "name":
				dst = &p.Name
			case "regex":
				dst = &p.Regex
			default:
				return v, errors.New("unknown pattern field " + strconv.Quote(string(name)))
			}
			if v >= len(raw) {
				return v, jsontext.ErrEnd
			}
			if raw[v] != '"' {
				return v, errors.New("pattern " + strconv.Quote(string(name)) + " must be a string")
			}
			s, end, err := jsontext.DecodeString(nil, raw, v)
			*dst = string(s)
			return end, err
		})
		out = append(out, p)
		return end, err
	})
	*dst = out
	return end, err
}

// pattern is a compiled custom pattern and its label.
type pattern struct {
	label string
	re    *regexp.Regexp
}

// Redactor removes personal data from text. It keeps scratch buffers, so one Redactor
// must not be used by several goroutines at once.
type Redactor struct {
	email, phone, card, ip bool
	patterns               []pattern
	scratch                [2][]byte
	cell                   []byte // a decoded JSON string, or the scanning copy of a raw one
	red                    []byte // its redacted form
	esc                    []int  // where the escapes of a raw string start
}

// New returns a Redactor for cfg. It returns an error naming the pattern when a custom
// pattern has an invalid name or regular expression, or when there are too many.
func New(cfg Config) (*Redactor, error) {
	r := &Redactor{email: cfg.Email, phone: cfg.Phone, card: cfg.Card, ip: cfg.IP}
	if len(cfg.Patterns) > MaxPatterns {
		return nil, errors.New(strconv.Itoa(len(cfg.Patterns)) + " custom patterns, at most " + strconv.Itoa(MaxPatterns) + " are allowed")
	}
	for _, p := range cfg.Patterns {
		label, err := patternLabel(p.Name)
		if err != nil {
			return nil, err
		}
		if len(p.Regex) > MaxPatternBytes {
			return nil, errors.New("pattern " + p.Name + ": regex is longer than " + strconv.Itoa(MaxPatternBytes) + " bytes")
		}
		if p.Regex == "" {
			return nil, errors.New("pattern " + p.Name + ": regex is empty")
		}
		re, err := regexp.Compile(p.Regex)
		if err != nil {
			return nil, jsontext.Prefix("pattern "+p.Name, err)
		}
		r.patterns = append(r.patterns, pattern{label: label, re: re})
	}
	return r, nil
}

// patternLabel checks a custom pattern's name (a letter, then up to 31 letters, digits
// or underscores) and returns its label.
func patternLabel(name string) (string, error) {
	ok := len(name) >= 1 && len(name) <= 32 && isLetter(name[0])
	for i := 1; ok && i < len(name); i++ {
		c := name[i]
		ok = isLetter(c) || isDigit(c) || c == '_'
	}
	if !ok {
		return "", errors.New("pattern name " + strconv.Quote(name) + " must be a letter then up to 31 letters, digits or underscores")
	}
	return "[" + strings.ToUpper(name) + "]", nil
}

// Text appends src with every match replaced by its label to dst and returns it. The
// built-in classes are found first, in one pass; each custom pattern then runs over
// the result in the order configured.
func (r *Redactor) Text(dst, src []byte) []byte {
	cur, k := src, 0
	swap := func(out []byte, changed bool) {
		r.scratch[k] = out
		if changed {
			cur, k = out, 1-k
		}
	}
	if r.email || r.phone || r.card || r.ip {
		swap(r.builtins(r.scratch[k][:0], cur, cur))
	}
	for _, p := range r.patterns {
		swap(replaceRegexp(r.scratch[k][:0], cur, p))
	}
	return append(dst, cur...)
}

// replaceRegexp appends src with p's matches replaced to dst, and reports whether any
// was. Empty matches are skipped: they would put a label between every two characters.
func replaceRegexp(dst, src []byte, p pattern) ([]byte, bool) {
	at, changed := 0, false
	for _, loc := range p.re.FindAllIndex(src, -1) {
		if loc[1] == loc[0] {
			continue
		}
		dst = append(dst, src[at:loc[0]]...)
		dst = append(dst, p.label...)
		at, changed = loc[1], true
	}
	if !changed {
		return dst, false
	}
	return append(dst, src[at:]...), true
}

// ErrConfigLine reports a stream whose first line is not the configuration.
var ErrConfigLine = errors.New(`the first line must be {"config": {...}}`)

func isDigit(c byte) bool  { return c-'0' < 10 }
func isLetter(c byte) bool { return (c|0x20)-'a' < 26 }
func isAlnum(c byte) bool  { return isDigit(c) || isLetter(c) }
func isHex(c byte) bool    { return isDigit(c) || (c|0x20)-'a' < 6 }

// isWord reports whether c would continue a word, so a match may not begin or end
// next to it.
func isWord(c byte) bool { return isAlnum(c) || c == '_' }
