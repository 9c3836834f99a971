package kv

import (
	"context"
	"regexp"
)

// Redaction is an organisation's PII-redaction settings, applied to every free-text
// cell of an export. The four built-in classes are on by default.
type Redaction struct {
	Email    bool               `json:"email"`
	Phone    bool               `json:"phone"`
	Card     bool               `json:"card"`
	IP       bool               `json:"ip"`
	Patterns []RedactionPattern `json:"patterns"`
}

// RedactionPattern is a custom pattern; each match becomes [NAME].
type RedactionPattern struct {
	Name  string `json:"name"`
	Regex string `json:"regex"`
}

// DefaultRedaction has every built-in class on and no custom pattern.
func DefaultRedaction() Redaction {
	return Redaction{Email: true, Phone: true, Card: true, IP: true, Patterns: []RedactionPattern{}}
}

// validPatternName reports whether name is 1 to 32 upper-case letters, digits or
// underscores starting with a letter (what ^[A-Z][A-Z0-9_]{0,31}$ matches), checked by
// hand so that no expression is compiled when the program starts.
func validPatternName(name string) bool {
	if len(name) == 0 || len(name) > 32 || name[0] < 'A' || name[0] > 'Z' {
		return false
	}
	for i := 1; i < len(name); i++ {
		c := name[i]
		if (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

// maxPatterns bounds the custom patterns an organisation keeps.
const maxPatterns = 50

// Validate returns EINVALID when a pattern's name is not an upper-case label (it
// becomes [NAME] in exports) or its regular expression does not compile.
func (r Redaction) Validate() error {
	var fields []FieldError
	if len(r.Patterns) > maxPatterns {
		fields = append(fields, FieldError{Loc: []any{"patterns"}, Msg: "At most 50 custom patterns.", Type: "too_long"})
	}
	for i, p := range r.Patterns {
		if !validPatternName(p.Name) {
			fields = append(fields, FieldError{Loc: []any{"patterns", i, "name"}, Type: "pattern_name",
				Msg: "A pattern name is 1 to 32 upper-case letters, digits or underscores, starting with a letter."})
		}
		if _, err := regexp.Compile(p.Regex); err != nil || p.Regex == "" {
			fields = append(fields, FieldError{Loc: []any{"patterns", i, "regex"}, Type: "regex_invalid",
				Msg: "The regular expression does not compile (Go RE2 syntax)."})
		}
	}
	if fields != nil {
		return Invalid(fields...)
	}
	return nil
}

// FindRedaction returns the organisation's settings (the defaults until set).
// ENOTFOUND for an unknown organisation.
func (db *DB) FindRedaction(ctx context.Context, org ID) (Redaction, error) {
	o, err := db.FindOrgByID(ctx, org)
	if err != nil {
		return Redaction{}, err
	}
	return o.redaction(), nil
}

func (o Org) redaction() Redaction {
	if o.Redaction == nil {
		return DefaultRedaction()
	}
	r := *o.Redaction
	if r.Patterns == nil {
		r.Patterns = []RedactionPattern{}
	}
	return r
}

// SetRedaction replaces the organisation's settings. EINVALID for a bad pattern;
// ENOTFOUND for an unknown organisation.
func (db *DB) SetRedaction(ctx context.Context, org ID, r Redaction) (Redaction, error) {
	if err := r.Validate(); err != nil {
		return Redaction{}, err
	}
	err := db.update(ctx, func(tx Tx) error {
		o, err := orgByID(tx, org)
		if err != nil {
			return err
		}
		o.Redaction = &r
		return db.putOrg(tx, o)
	})
	return r, err
}
