package htmlreport

import (
	"bytes"
	"strings"
	"testing"
)

// TestResearcherCodes: the report's codes section, escaped, with the researcher's
// note beside each passage; none without codes.
func TestResearcherCodes(t *testing.T) {
	in := `{"config":{}}
{"study":{"id":"s1","title":"Rota"},"analysis":{"version":1,"engine":"builtin","interviews_included":2,` +
		`"researcher_codes":[{"id":"t1","name":"Price <talk>","interview_count":1,"share":0.5,"segments":{},"quotes":[{"interview_id":"i1","message_index":1,"text":"too dear","note":"said twice"}]}]}}
`
	var out bytes.Buffer
	if err := Run(strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`<section id="researcher-codes">`, "<h3>Price &lt;talk&gt;</h3>", "Applied in 1 interview (50%)", "<p>too dear</p>", "message 1 · note: said twice"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("report lacks %q", w)
		}
	}
	out.Reset()
	if err := Run(strings.NewReader(strings.Replace(in, `"researcher_codes"`, `"no_codes"`, 1)), &out); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "researcher-codes") {
		t.Fatal("a report without codes has their section")
	}
}
