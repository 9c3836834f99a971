package plugins

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestParseDescriptor(t *testing.T) {
	tests := []struct {
		name, out string
		want      Descriptor
		wantErr   string
	}{
		{"OKRedactor", `{"kind":"redactor","name":"redactor","abi_version":1}` + "\n",
			Descriptor{Kind: KindRedactor, Name: "redactor", ABIVersion: 1}, ""},
		{"OKFormatter", `{"kind":"formatter","name":"jsonl","media_type":"application/x-ndjson","abi_version":1}`,
			Descriptor{Kind: KindFormatter, Name: "jsonl", MediaType: "application/x-ndjson", ABIVersion: 1}, ""},
		{"OKMediaTypeParams", `{"kind":"formatter","name":"csv","media_type":"text/csv; charset=utf-8","abi_version":1}`,
			Descriptor{Kind: KindFormatter, Name: "csv", MediaType: "text/csv; charset=utf-8", ABIVersion: 1}, ""},
		{"OKLongestName", `{"kind":"redactor","name":"a234567890123456789012345678901_","abi_version":1}`,
			Descriptor{Kind: KindRedactor, Name: "a234567890123456789012345678901_", ABIVersion: 1}, ""},
		{"OKNameWithDash", `{"kind":"redactor","name":"acme-pii_2","abi_version":1}`,
			Descriptor{Kind: KindRedactor, Name: "acme-pii_2", ABIVersion: 1}, ""},
		{"ErrEmpty", "\n", Descriptor{}, "printed nothing"},
		{"ErrNotJSON", "hello", Descriptor{}, "not a valid JSON object"},
		{"ErrTwoValues", `{"kind":"redactor","name":"a","abi_version":1} {}`, Descriptor{}, "more than one"},
		{"ErrUnknownField", `{"kind":"redactor","name":"a","abi_version":1,"mediatype":"x"}`, Descriptor{}, "unknown field"},
		{"ErrNoKind", `{"name":"a","abi_version":1}`, Descriptor{}, `no "kind"`},
		{"ErrNoName", `{"kind":"redactor","abi_version":1}`, Descriptor{}, `no "name"`},
		{"ErrNoVersion", `{"kind":"redactor","name":"a"}`, Descriptor{}, `no "abi_version"`},
		{"ErrVersion2", `{"kind":"redactor","name":"a","abi_version":2}`, Descriptor{}, "abi_version 2"},
		{"ErrKind", `{"kind":"shredder","name":"a","abi_version":1}`, Descriptor{}, `kind "shredder"`},
		{"ErrNameUpper", `{"kind":"redactor","name":"Acme","abi_version":1}`, Descriptor{}, `name "Acme"`},
		{"ErrNameDigitFirst", `{"kind":"redactor","name":"1a","abi_version":1}`, Descriptor{}, "name"},
		{"ErrNameEmpty", `{"kind":"redactor","name":"","abi_version":1}`, Descriptor{}, "name"},
		{"ErrNameTooLong", `{"kind":"redactor","name":"a2345678901234567890123456789012x","abi_version":1}`, Descriptor{}, "name"},
		{"ErrNameSpace", `{"kind":"redactor","name":"a b","abi_version":1}`, Descriptor{}, "name"},
		{"ErrFormatterNoMediaType", `{"kind":"formatter","name":"x","abi_version":1}`, Descriptor{}, "needs a media_type"},
		{"ErrBadMediaType", `{"kind":"formatter","name":"x","media_type":"text/","abi_version":1}`, Descriptor{}, "media_type"},
		{"ErrRedactorMediaType", `{"kind":"redactor","name":"x","media_type":"text/plain","abi_version":1}`, Descriptor{}, "no media_type"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseDescriptor([]byte(tc.out))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("parseDescriptor = %+v, %v; want an error containing %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("parseDescriptor = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

// FuzzDescriptor checks that whatever a plugin prints, parseDescriptor either refuses
// it or returns a descriptor that obeys every rule.
func FuzzDescriptor(f *testing.F) {
	f.Add([]byte(`{"kind":"formatter","name":"csv","media_type":"text/csv","abi_version":1}`))
	f.Add([]byte(`{"kind":"redactor","name":"a","abi_version":1}`))
	f.Add([]byte(`{"kind":"redactor","name":"a","abi_version":1.5}`))
	f.Fuzz(func(t *testing.T, out []byte) {
		d, err := parseDescriptor(out)
		if err != nil {
			return
		}
		if d.ABIVersion != ABIVersion || !validName(d.Name) ||
			(d.Kind != KindRedactor && d.Kind != KindFormatter) ||
			(d.Kind == KindFormatter) != (d.MediaType != "") {
			t.Fatalf("parseDescriptor(%q) accepted %+v", out, d)
		}
	})
}

func TestLoadDescribe(t *testing.T) {
	h := mustHost(t, Config{})
	ctx := context.Background()
	t.Run("OKFormatter", func(t *testing.T) {
		d, err := h.Describe(ctx, printer(`{"kind":"formatter","name":"tiny","media_type":"text/plain","abi_version":1}`))
		want := Descriptor{Kind: KindFormatter, Name: "tiny", MediaType: "text/plain", ABIVersion: 1}
		if err != nil || d != want {
			t.Fatalf("Describe = %+v, %v; want %+v", d, err, want)
		}
	})
	for _, tc := range []struct{ name, out, wantMsg string }{
		{"ErrBadKind", `{"kind":"shredder","name":"x","abi_version":1}`, `kind "shredder"`},
		{"ErrBadName", `{"kind":"redactor","name":"Bad Name","abi_version":1}`, `name "Bad Name"`},
		{"ErrNothing", ``, "printed nothing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := h.Load(ctx, printer(tc.out))
			wantPluginError(t, err, ReasonInvalid, tc.wantMsg)
			if !strings.HasPrefix(err.Error(), "plugin sha256:") {
				t.Errorf("error %q does not name the plugin by its hash", err)
			}
		})
	}
}

// wantPluginError fails unless err is an *Error with reason whose text contains msg.
func wantPluginError(tb testing.TB, err error, reason Reason, msg string) *Error {
	tb.Helper()
	var pe *Error
	if !errors.As(err, &pe) {
		tb.Fatalf("error = %v (%T), want a *plugins.Error", err, err)
	}
	if pe.Reason != reason || !strings.Contains(pe.Error(), msg) {
		tb.Fatalf("error = %q (reason %s), want reason %s and %q", pe, pe.Reason, reason, msg)
	}
	return pe
}
