package research

import (
	"strings"
	"testing"

	"interviewd/kv"
	"interviewd/server/pipeline"
)

func TestParseLinksCSV(t *testing.T) {
	t.Run("OK_QuotedCellsBOMAndBlankRows", func(t *testing.T) {
		rows, err := parseLinksCSV("\ufeffLabel,Note,Email,team\n\"Dana, Acme\",\"Ask about\nSSO\",dana@example.com,\n\n  ,  ,  ,  \nLee,,,ops\n", false)
		if err != nil || len(rows) != 2 {
			t.Fatalf("%+v %v", rows, err)
		}
		if rows[0].req.Label != "Dana, Acme" || rows[0].req.Note != "Ask about\nSSO" || rows[0].email != "dana@example.com" || len(rows[0].req.Context) != 0 {
			t.Fatalf("row 2 %+v", rows[0])
		}
		if rows[1].req.Context["team"] != "ops" || rows[1].req.Audience != kv.AudiencePerson {
			t.Fatalf("row 5 %+v", rows[1])
		}
	})
	for _, c := range []struct {
		name, csv string
		email     bool
		want      string
	}{
		{"ErrNotUTF8", "label\n\xff\n", false, "not UTF-8"},
		{"ErrEmpty", "", false, "The CSV is empty"},
		{"ErrUnnamedColumn", "label,,x\nA,b,c\n", false, "Row 1: column 2 has no name."},
		{"ErrNoEmailColumnToMail", "label\nA\n", true, "Row 1: the header has no email column"},
		{"ErrMissingAddressToMail", "label,email\nA,\n", true, `Row 2, column "email": this is not an email address`},
		{"ErrBadQuote", "label\n\"A\n", false, "Row 2:"},
		{"ErrLongNote", "label,note\nA," + strings.Repeat("n", kv.LinkNoteMaxChars+1) + "\n", false, `Row 2, column "note": Note may be at most 2048`},
		{"ErrTooManyContextColumns", "label" + strings.Repeat(",c", 0) + ",c01,c02,c03,c04,c05,c06,c07,c08,c09,c10,c11,c12,c13,c14,c15,c16,c17,c18,c19,c20,c21\nA,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1\n", false, "Row 2: Context may have at most 20 keys."},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := parseLinksCSV(c.csv, c.email)
			var ke *kv.Error
			if !pipeline.AsKV(err, &ke) || ke.Code != kv.EINVALID {
				t.Fatalf("err %v", err)
			}
			var msgs []string
			for _, f := range ke.Fields {
				msgs = append(msgs, f.Msg)
			}
			if !strings.Contains(strings.Join(msgs, " | "), c.want) {
				t.Fatalf("problems %q lack %q", msgs, c.want)
			}
		})
	}
}

// FuzzLinksCSV: any text is either refused with located problems or yields rows that
// each pass the participant link rules and carry a label.
func FuzzLinksCSV(f *testing.F) {
	for _, s := range []string{"label\nA\n", "label,note,email,x\nA,n,a@example.com,1\n", "Label;X\nA;1\n", "label\n\"\n", "\ufefflabel,token\nA,b\n"} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, text string, email bool) {
		rows, err := parseLinksCSV(text, email)
		if err != nil {
			var ke *kv.Error
			if !pipeline.AsKV(err, &ke) || len(ke.Fields) == 0 || len(ke.Fields) > linksCSVMaxProblems+1 {
				t.Fatalf("refusal %v", err)
			}
			return
		}
		for _, r := range rows {
			if strings.TrimSpace(r.req.Label) == "" {
				t.Fatal("a row without a label was accepted")
			}
			if _, err := kv.ValidateLinkRequest(r.req); err != nil {
				t.Fatalf("an accepted row breaks the link rules: %v", err)
			}
		}
	})
}
