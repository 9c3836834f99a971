package redact

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// digitsFrom maps seed bytes to n decimal digits, cycling through seed (or zeros).
func digitsFrom(seed []byte, n int) []byte {
	out := make([]byte, n)
	for i := range out {
		if len(seed) > 0 {
			out[i] = '0' + seed[i%len(seed)]%10
		} else {
			out[i] = '0'
		}
	}
	return out
}

// wordFrom maps seed bytes to n lower-case letters and digits, starting with a letter.
func wordFrom(seed []byte, n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	var b strings.Builder
	for i := range n {
		c := byte(i * 7)
		if len(seed) > 0 {
			c += seed[i%len(seed)]
		}
		if i == 0 {
			b.WriteByte(alphabet[int(c)%26])
		} else {
			b.WriteByte(alphabet[int(c)%len(alphabet)])
		}
	}
	return b.String()
}

// cardFrom builds a Luhn-valid card number of 13 to 19 digits from seed, written in one
// of the usual layouts.
func cardFrom(seed []byte, style byte) string {
	n := cardMinDigits + int(style)%(cardMaxDigits-cardMinDigits+1)
	d := digitsFrom(seed, n)
	d[0] = '4' // a leading digit that is not 0 reads like a card
	for check := byte('0'); check <= '9'; check++ {
		d[n-1] = check
		vals := make([]byte, n)
		for i, c := range d {
			vals[i] = c - '0'
		}
		if luhn(vals) {
			break
		}
	}
	sep := []string{"", " ", "-"}[int(style/8)%3]
	if sep == "" {
		return string(d)
	}
	var b strings.Builder
	for i, c := range d {
		if i > 0 && i%4 == 0 {
			b.WriteString(sep)
		}
		b.WriteByte(c)
	}
	return b.String()
}

// phoneFrom builds a phone number from seed in one of the common formats.
func phoneFrom(seed []byte, style byte) string {
	d := string(digitsFrom(seed, 10))
	d = "5" + d[1:] // area codes do not start with 0 in these layouts
	switch style % 6 {
	case 0:
		return d[:3] + "-" + d[3:6] + "-" + d[6:]
	case 1:
		return "(" + d[:3] + ") " + d[3:6] + "-" + d[6:]
	case 2:
		return d[:3] + "." + d[3:6] + "." + d[6:]
	case 3:
		return "+1 " + d[:3] + " " + d[3:6] + " " + d[6:]
	case 4:
		return "+44 20 " + d[2:6] + " " + d[6:]
	default:
		return d
	}
}

// emailFrom builds an address from seed.
func emailFrom(seed []byte, style byte) string {
	local := wordFrom(seed, 1+int(style)%12)
	if style%3 == 0 {
		local += ".x"
	}
	return local + "@" + wordFrom(seed[min(1, len(seed)):], 2+int(style)%8) + ".example." + []string{"com", "org", "co.uk"}[int(style)%3]
}

// FuzzRedactor embeds an email, a card and a phone number built from seed in random
// text, and checks that none of them survives, in the text and through a JSON record.
func FuzzRedactor(f *testing.F) {
	f.Add("hello", "world", "again", []byte{1, 2, 3}, byte(0))
	f.Add("12", "4111", "+", []byte{9, 9, 9, 9}, byte(7))
	f.Add("a@", "@b.", "0.0.0.", []byte{}, byte(200))
	f.Add("\xff\xfe", "555", "(", []byte{5, 0, 5}, byte(33))
	r := mustRedactor(f, DefaultConfig())
	f.Fuzz(func(t *testing.T, a, b, c string, seed []byte, style byte) {
		pii := []string{emailFrom(seed, style), cardFrom(seed, style), phoneFrom(seed, style)}
		text := a + " " + pii[0] + " " + b + " " + pii[1] + " " + c + " " + pii[2] + " " + a
		out := string(r.Text(nil, []byte(text)))
		for _, p := range pii {
			if strings.Contains(out, p) {
				t.Fatalf("%q survived redaction:\n in %q\nout %q", p, text, out)
			}
		}

		rec, err := json.Marshal(map[string]any{"id": "x", "cells": map[string]string{"t": text}})
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.Record(nil, rec)
		if err != nil {
			t.Fatalf("Record(%s): %v", rec, err)
		}
		var back struct {
			ID    string            `json:"id"`
			Cells map[string]string `json:"cells"`
		}
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("Record wrote invalid JSON %s: %v", got, err)
		}
		if back.ID != "x" {
			t.Fatalf("id changed to %q", back.ID)
		}
		for _, p := range pii {
			if strings.Contains(back.Cells["t"], p) {
				t.Fatalf("%q survived redaction of a record: %s", p, got)
			}
		}
	})
}

// FuzzRecord feeds arbitrary lines to Record: it must refuse what is not a JSON object
// and turn every JSON object into valid JSON.
func FuzzRecord(f *testing.F) {
	f.Add([]byte(`{"id":"1","cells":{"t":"a@b.io \u00e9"}}`))
	f.Add([]byte(`{"cells":[1,{"a":[null,"x"]}],"z":{"y":[]}}`))
	f.Add([]byte(`{"cells":"\ud800 10.0.0.1"}`))
	f.Add([]byte(`{"a":1e`))
	r := mustRedactor(f, DefaultConfig())
	f.Fuzz(func(t *testing.T, line []byte) {
		got, err := r.Record(nil, line)
		if err != nil && strings.Contains(err.Error(), "nested deeper") {
			return // encoding/json allows deeper nesting than the redactor does
		}
		isObject := json.Valid(line) && strings.HasPrefix(strings.TrimLeft(string(line), " \t\r\n"), "{")
		switch {
		case err != nil && isObject:
			t.Fatalf("Record refused a JSON object %q: %v", line, err)
		case err == nil && !isObject:
			t.Fatalf("Record accepted %q, which is not a JSON object", line)
		case err == nil && !json.Valid(got):
			t.Fatalf("Record(%q) wrote invalid JSON %q", line, got)
		}
	})
}

// FuzzText checks Text on arbitrary text against its one structural promise: what is
// not replaced is copied, so text without digits, '@' or ':' comes back unchanged.
func FuzzText(f *testing.F) {
	f.Add("Jane, +1 (555) 123-4567, 4111 1111 1111 1111, 10.0.0.1, fe80::1")
	f.Add("no personal data here")
	r := mustRedactor(f, DefaultConfig())
	f.Fuzz(func(t *testing.T, s string) {
		out := string(r.Text(nil, []byte(s)))
		if !strings.ContainsAny(s, "0123456789@:") && out != s {
			t.Fatalf("Text changed %q into %q", s, out)
		}
	})
}

// FuzzRawPath checks that redacting a cell in place (rawString) gives what decoding,
// redacting and re-encoding it gives (the path custom patterns force).
func FuzzRawPath(f *testing.F) {
	f.Add("mail\njane@example.com\t+1 555 123 4567 \"4111 1111 1111 1111\" 10.0.0.1\\fe80::1")
	f.Add("n\\555-123-4567 /2001:db8::1/")
	fast := mustRedactor(f, DefaultConfig())
	cfg := DefaultConfig()
	cfg.Patterns = []Pattern{{Name: "NEVER", Regex: `\x00NEVER\x00`}}
	slow := mustRedactor(f, cfg)
	f.Fuzz(func(t *testing.T, text string) {
		var rec strings.Builder
		enc := json.NewEncoder(&rec)
		enc.SetEscapeHTML(false) // keep the string free of \u escapes where possible
		if err := enc.Encode(map[string]any{"cells": map[string]string{"t": text}}); err != nil {
			t.Fatal(err)
		}
		line := []byte(strings.TrimSuffix(rec.String(), "\n"))
		var cells [2]string
		for k, r := range []*Redactor{fast, slow} {
			out, err := r.Record(nil, line)
			if err != nil {
				t.Fatalf("Record(%s): %v", line, err)
			}
			var back struct {
				Cells map[string]string `json:"cells"`
			}
			if err := json.Unmarshal(out, &back); err != nil {
				t.Fatalf("Record wrote invalid JSON %s: %v", out, err)
			}
			cells[k] = back.Cells["t"]
		}
		if cells[0] != cells[1] {
			t.Fatalf("in place %q, decoded %q (input %s)", cells[0], cells[1], line)
		}
	})
}

// FuzzParseConfig checks that any configuration ParseConfig accepts, encoding/json
// (stricter about nothing it accepts) decodes to the same value.
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(`{"email":false,"patterns":[{"name":"A","regex":"a\\d"}]}`))
	f.Add([]byte(`{"ip":true,"ip":false}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"patterns":[]}`))
	f.Add([]byte(`{"patterns":null}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, err := ParseConfig(raw)
		if err != nil || !utf8.Valid(raw) || len(bytes.TrimSpace(raw)) == 0 {
			return
		}
		want := DefaultConfig()
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&want); err != nil {
			t.Fatalf("ParseConfig accepted %q, encoding/json refused it: %v", raw, err)
		}
		// No patterns is no patterns: encoding/json keeps [] as an empty slice, where
		// ParseConfig may leave nil; the two configurations redact alike.
		for _, c := range []*Config{&got, &want} {
			if len(c.Patterns) == 0 {
				c.Patterns = nil
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("ParseConfig(%q) = %+v, encoding/json = %+v", raw, got, want)
		}
	})
}
