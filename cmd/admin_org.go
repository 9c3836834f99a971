package cmd

import (
	"context"
	"fmt"
	"io"
	"strings"

	"interviewd/kv"
)

// patternFlags collects repeated --pattern NAME=REGEX flags.
type patternFlags []kv.RedactionPattern

func (p *patternFlags) String() string { return "" }

func (p *patternFlags) Set(v string) error {
	name, re, ok := strings.Cut(v, "=")
	if !ok {
		return fmt.Errorf("want NAME=REGEX")
	}
	*p = append(*p, kv.RedactionPattern{Name: name, Regex: re})
	return nil
}

// onOff is an optional on|off flag.
type onOff struct{ set, on bool }

func (o *onOff) String() string { return "" }

func (o *onOff) Set(v string) error {
	switch v {
	case "on":
		o.set, o.on = true, true
	case "off":
		o.set, o.on = true, false
	default:
		return fmt.Errorf("want on or off")
	}
	return nil
}

func orgRedactionRow() *command {
	return &command{name: "org redaction",
		synopsis: "--org ORG_ID [--email on|off] [--phone on|off] [--card on|off] [--ip on|off] [--pattern NAME=REGEX]... [--clear-patterns]",
		summary:  "Change what exports redact; prints the organisation's redaction settings.",
		define: func(fs *flagSet) func() (adminRun, error) {
			org := fs.String("org", "", "organisation id")
			var email, phone, card, ip onOff
			fs.Var(&email, "email", "redact email addresses: on or off")
			fs.Var(&phone, "phone", "redact phone numbers: on or off")
			fs.Var(&card, "card", "redact payment card numbers: on or off")
			fs.Var(&ip, "ip", "redact IP addresses: on or off")
			var patterns patternFlags
			fs.Var(&patterns, "pattern", "custom pattern NAME=REGEX (repeatable; replaces a pattern of the same name)")
			clear := fs.Bool("clear-patterns", false, "remove every custom pattern first")
			return func() (adminRun, error) {
				orgID, err := needID("org", *org)
				if err != nil {
					return nil, err
				}
				if err := (kv.Redaction{Patterns: patterns}).Validate(); err != nil {
					return nil, err
				}
				return func(ctx context.Context, db *kv.DB, out io.Writer) error {
					r, err := db.FindRedaction(ctx, orgID)
					if err != nil {
						return orgMissing(err, orgID)
					}
					for _, f := range []struct {
						flag onOff
						dst  *bool
					}{{email, &r.Email}, {phone, &r.Phone}, {card, &r.Card}, {ip, &r.IP}} {
						if f.flag.set {
							*f.dst = f.flag.on
						}
					}
					if *clear {
						r.Patterns = nil
					}
					for _, p := range patterns {
						replaced := false
						for i := range r.Patterns {
							if r.Patterns[i].Name == p.Name {
								r.Patterns[i], replaced = p, true
							}
						}
						if !replaced {
							r.Patterns = append(r.Patterns, p)
						}
					}
					if r.Patterns == nil {
						r.Patterns = []kv.RedactionPattern{}
					}
					if r, err = db.SetRedaction(ctx, orgID, r); err != nil {
						return err
					}
					return printJSON(out, r)
				}, nil
			}
		}}
}
