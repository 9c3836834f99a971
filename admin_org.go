package main

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

func orgCommand(ctx context.Context, args []string, stdout io.Writer, env func(string) (string, bool)) error {
	if len(args) > 0 && args[0] == "retention" {
		return runOffline(ctx, "org retention", orgRetentionDefine, args[1:], stdout, env)
	}
	if len(args) == 0 || args[0] != "redaction" {
		return fmt.Errorf("org: want redaction or retention")
	}
	fs := newFlagSet("org redaction", env)
	fs.str("data", "./data", "data folder")
	org := fs.String("org", "", "organisation id")
	var email, phone, card, ip onOff
	fs.Var(&email, "email", "redact email addresses: on or off")
	fs.Var(&phone, "phone", "redact phone numbers: on or off")
	fs.Var(&card, "card", "redact payment card numbers: on or off")
	fs.Var(&ip, "ip", "redact IP addresses: on or off")
	var patterns patternFlags
	fs.Var(&patterns, "pattern", "custom pattern NAME=REGEX (repeatable; replaces a pattern of the same name)")
	clear := fs.Bool("clear-patterns", false, "remove every custom pattern first")
	db, err := openAdmin(fs, args[1:])
	if err != nil {
		return err
	}
	defer db.Close()
	if err := required("org", *org); err != nil {
		return fmt.Errorf("org redaction: %w", err)
	}
	orgID, err := parseID("org", *org)
	if err != nil {
		return err
	}
	r, err := db.FindRedaction(ctx, orgID)
	if err != nil {
		return err
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
	return printJSON(stdout, r)
}
