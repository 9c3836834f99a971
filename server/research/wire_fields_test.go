package research

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"interviewd/server/pipeline"
)

// TestSurfaceSetFieldsNeverFromTheWire: an input field tagged json:"-" is set by a
// surface (the app's form: a brief's base version, the interview filters; an upload's
// stream), never by a client. No operation's plan binds it, and a call naming it, by
// its Go name or in snake case, is refused as an unknown member with the field unset.
func TestSurfaceSetFieldsNeverFromTheWire(t *testing.T) {
	ops := NewService(&pipeline.Core{}).OperationTable()
	checked := 0
	for _, o := range ops {
		in := o.NewInput()
		typ := reflect.TypeOf(in).Elem()
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			if !f.IsExported() || f.Tag.Get("json") != "-" {
				continue
			}
			checked++
			for _, fp := range o.Plan.Fields {
				if fp.Name == f.Name || strings.EqualFold(strings.ReplaceAll(fp.Name, "_", ""), f.Name) {
					t.Errorf("%s: %s is bound from the wire as %q", o.Name, f.Name, fp.Name)
				}
			}
			for _, name := range []string{f.Name, snake(f.Name)} {
				in := o.NewInput()
				args, _ := json.Marshal(map[string]any{name: reflect.Zero(f.Type).Interface()})
				err := o.Plan.BindArgs(in, args)
				if err == nil || !strings.Contains(err.Error(), name) {
					t.Errorf("%s: a call naming %q is not refused for it: %v", o.Name, name, err)
				}
			}
		}
	}
	// BaseVersion (update_study_brief), the five interview filters (list_interviews),
	// Text and NewTag (create_annotation), Raw (search_transcripts).
	if checked < 9 {
		t.Fatalf("only %d surface-set input fields found; the table lost some", checked)
	}
}

func snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// TestServerSideOutputFieldsNeverEncoded: what an output carries for the server's own
// use (an interview's link token, an inline download's blob key, media type and file
// name) is never in its JSON.
func TestServerSideOutputFieldsNeverEncoded(t *testing.T) {
	for _, out := range []any{
		Interview{LinkToken: "secret-link-token"},
		ExportDownload{DownloadURL: "https://x", Artifact: "secret-blob-key", MediaType: "secret/media", Filename: "secret-name.csv"},
	} {
		raw, err := pipeline.EncodeOutput(out)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(raw), "secret") {
			t.Errorf("%T encodes a server-side field: %s", out, raw)
		}
	}
}
