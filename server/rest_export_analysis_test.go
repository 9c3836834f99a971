package server

import (
	"html/template"
	"mime"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"interviewd/analysis"
	"interviewd/kv"
	"interviewd/plugins/qdpxcheck"
	"interviewd/server/research"
)

// The analysis formats end to end over real sockets: a live study, interviews through
// the participant API, the built-in findings engine, then each format exported,
// polled and downloaded, and what arrives read back.

const exportScript = "<script>alert('x')</script>"

var unescaped = regexp.MustCompile(`(^|[^\\])<`)

// startExport posts an export request and returns the response.
func (e *testEnv) startExport(key, body string) response {
	e.t.Helper()
	return e.do("POST", "/v1/api/exports", key, body)
}

// mustExport starts an export of study in format, waits for it, and downloads it
// inline; it returns the download.
func (e *testEnv) mustExport(key string, study kv.ID, format, extra string) response {
	e.t.Helper()
	r := e.startExport(key, `{"study_id":"`+study.String()+`","format":"`+format+`"`+extra+`}`)
	if r.status != 202 {
		e.t.Fatalf("start %s export: %d %s", format, r.status, r.body)
	}
	var job research.ExportJob
	r.json(e.t, &job)
	if st := e.pollExport(key, job.JobID); st.Status != kv.ExportCompleted {
		e.t.Fatalf("%s export ended %+v", format, st)
	}
	d := e.do("GET", "/v1/api/exports/"+job.JobID+"/download", key, "", "Accept", "*/*")
	if d.status != 200 {
		e.t.Fatalf("%s download: %d %s", format, d.status, d.body)
	}
	return d
}

func TestExportAnalysisFormats(t *testing.T) {
	e := mustServe(t)
	p := kv.Partition{Org: e.orgA.ID, Env: kv.EnvLive}
	st := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeTest, analysisStudyBrief())
	never := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeTest, analysisStudyBrief())
	e.mustMode(p, st.ID, kv.ModeLive)
	body := func(study kv.ID, format, extra string) string {
		return `{"study_id":"` + study.String() + `","format":"` + format + `"` + extra + `}`
	}

	t.Run("ErrNoAnalysisYet", func(t *testing.T) {
		for _, format := range []string{"analysis-md", "analysis-html", "qdpx"} {
			r := e.startExport("a_live", body(st.ID, format, ""))
			var got map[string]any
			r.json(t, &got)
			if r.status != 409 || got["code"] != "analysis_not_ready" || !strings.Contains(got["detail"].(string), "no completed analysis") || len(got) != 2 {
				t.Fatalf("%s: %d %s", format, r.status, r.body)
			}
		}
	})
	t.Run("ErrNeverLive", func(t *testing.T) {
		r := e.startExport("a_live", body(never.ID, "qdpx", ""))
		if r.status != 409 || !strings.Contains(string(r.body), `"code":"study_not_live"`) {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})

	answers := []string{
		"Five of us; " + exportScript + " we schedule shifts every Friday, mail " + analysisEmail + ".",
		"We schedule shifts in a spreadsheet that Zoë keeps; teams would pay for something better.",
		"The schedule breaks when shifts clash & nobody notices.",
	}
	e.completeInterview(e.linkFor(st, kv.AudiencePerson, map[string]string{"plan": "pro"}, analysisNote), answers)
	e.completeInterview(e.linkFor(st, kv.AudienceGroup, map[string]string{"plan": "free"}, ""), answers[1:])
	done := e.mustAnalyse("a_live", st.ID)
	r, a := e.getAnalysis("a_live", st.ID, "")
	if r.status != 200 || a.InterviewsIncluded != 2 {
		t.Fatalf("analysis: %d %s", r.status, r.body)
	}
	quotes := quotesOf(a)
	scripted := 0
	for _, q := range quotes {
		if strings.Contains(q.Text, exportScript) {
			scripted++
		}
	}
	if len(quotes) == 0 || scripted == 0 {
		t.Fatalf("the analysis quotes no answer holding %q: %s", exportScript, r.body)
	}
	leaks := []string{analysisEmail, analysisNote, "ANALYSIS-NOTE"}

	t.Run("ErrBadVersion", func(t *testing.T) {
		for _, tc := range []struct {
			body, loc string
		}{
			{body(st.ID, "csv", `,"analysis_version":1`), `"loc":["body","analysis_version"]`},
			{body(st.ID, "qdpx", `,"analysis_version":0`), `"loc":["body","analysis_version"]`},
			{body(st.ID, "qdpx", `,"analysis_version":"1"`), `"loc":["body","analysis_version"]`},
		} {
			if r := e.startExport("a_live", tc.body); r.status != 422 || !strings.Contains(string(r.body), tc.loc) {
				t.Fatalf("%s: %d %s", tc.body, r.status, r.body)
			}
		}
		if r := e.startExport("a_live", body(st.ID, "qdpx", `,"analysis_version":99`)); r.status != 404 || !strings.Contains(string(r.body), `"code":"analysis_not_found"`) {
			t.Fatalf("version 99: %d %s", r.status, r.body)
		}
		if r := e.startExport("b_live", body(st.ID, "analysis-md", "")); r.status != 404 || !strings.Contains(string(r.body), `"code":"not_found"`) {
			t.Fatalf("another tenant: %d %s", r.status, r.body)
		}
	})

	download := func(t *testing.T, format, extra, mediaType, ext string) string {
		t.Helper()
		d := e.mustExport("a_live", st.ID, format, extra)
		if got := d.header.Get("Content-Type"); got != mediaType {
			t.Fatalf("%s Content-Type %q, want %q", format, got, mediaType)
		}
		_, params, err := mime.ParseMediaType(d.header.Get("Content-Disposition"))
		if err != nil || !strings.HasPrefix(params["filename"], "analysis-"+st.ID.String()[:8]+"-v") || !strings.HasSuffix(params["filename"], ext) {
			t.Fatalf("%s Content-Disposition %q (%v)", format, d.header.Get("Content-Disposition"), err)
		}
		text := string(d.body)
		for _, leak := range leaks {
			if strings.Contains(text, leak) {
				t.Fatalf("the %s export holds %q", format, leak)
			}
		}
		return text
	}

	t.Run("OK_Markdown", func(t *testing.T) {
		md := download(t, "analysis-md", "", "text/markdown; charset=utf-8", ".md")
		if !strings.Contains(strings.ReplaceAll(md, `\`, ""), a.Summary) || !strings.Contains(md, "Version "+strconv.Itoa(a.Version)+" · engine builtin") {
			t.Fatalf("the report lacks the summary or footer:\n%s", md)
		}
		// Every "<" is backslash-escaped, so no renderer reads it as HTML.
		if unescaped.MatchString(md) || !strings.Contains(md, `\<script\>alert('x')\</script\>`) {
			t.Fatalf("the script tag is not escaped:\n%s", md)
		}
		for _, q := range quotes {
			if !strings.Contains(md, "> — interview "+q.InterviewID+", message "+strconv.Itoa(q.MessageIndex)) {
				t.Fatalf("the report does not attribute %+v:\n%s", q, md)
			}
		}
		if !strings.Contains(md, `\[EMAIL\]`) {
			t.Fatalf("the redacted email label is missing:\n%s", md)
		}
	})
	t.Run("OK_HTML", func(t *testing.T) {
		page := download(t, "analysis-html", "", "text/html; charset=utf-8", ".html")
		if strings.Contains(strings.ToLower(page), "<script") || !strings.Contains(page, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;") {
			t.Fatalf("the script tag is not escaped:\n%s", page)
		}
		if !strings.Contains(page, template.HTMLEscapeString(a.Summary)) || !strings.Contains(page, "[EMAIL]") {
			t.Fatalf("the page lacks the summary or the redacted quote:\n%s", page)
		}
	})
	t.Run("OK_QDPX", func(t *testing.T) {
		file := download(t, "qdpx", `,"analysis_version":`+strconv.Itoa(*done.Version), "application/zip", ".qdpx")
		checkQDPX(t, e, p, a, []byte(file))
	})
	t.Run("OK_SignedURL", func(t *testing.T) {
		r := e.startExport("a_live", body(st.ID, "analysis-html", ""))
		var job research.ExportJob
		r.json(t, &job)
		e.pollExport("a_live", job.JobID)
		var d struct {
			DownloadURL string `json:"download_url"`
		}
		e.do("GET", "/v1/api/exports/"+job.JobID+"/download", "a_live", "", "Accept", "application/json").json(t, &d)
		resp, err := http.Get(e.url + strings.TrimPrefix(d.DownloadURL, testBaseURL)) // no bearer
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" || !strings.Contains(resp.Header.Get("Content-Disposition"), ".html") {
			t.Fatalf("signed download: %d %v", resp.StatusCode, resp.Header)
		}
	})
	t.Run("OK_ErasureExpiresArtifact", func(t *testing.T) {
		// The report quotes every interview of the version: erasing one must take the
		// artifact away, as it does a CSV's.
		r := e.startExport("a_live", body(st.ID, "analysis-md", ""))
		var job research.ExportJob
		r.json(t, &job)
		e.pollExport("a_live", job.JobID)
		id, _ := kv.ParseID(quotesOf(a)[0].InterviewID)
		if _, err := e.db.EraseInterview(t.Context(), id); err != nil {
			t.Fatal(err)
		}
		d := e.do("GET", "/v1/api/exports/"+job.JobID+"/download", "a_live", "", "Accept", "*/*")
		if d.status != 404 || !strings.Contains(string(d.body), `"code":"export_expired"`) {
			t.Fatalf("download after erasure: %d %s", d.status, d.body)
		}
	})
	t.Run("OK_CSVUnchanged", func(t *testing.T) {
		d := e.mustExport("a_live", st.ID, "csv", "")
		if !strings.HasPrefix(d.header.Get("Content-Type"), "text/csv") || !strings.HasPrefix(string(d.body), "interview_id,study_id,") {
			t.Fatalf("csv: %v %.200s", d.header, d.body)
		}
	})
}

// checkQDPX checks the project against the standard's structure and that its
// selections are the analysis's quotes, each selecting exactly its text in the
// transcript of the interview it names, at the message it names.
func checkQDPX(t *testing.T, e *testEnv, p kv.Partition, a analysis.Analysis, file []byte) {
	t.Helper()
	proj, err := qdpxcheck.Check(file)
	if err != nil {
		t.Fatalf("the project does not check:\n%v", err)
	}
	if len(proj.Sources) != a.InterviewsIncluded {
		t.Fatalf("%d sources, want %d", len(proj.Sources), a.InterviewsIncluded)
	}
	byInterview := map[string]qdpxcheck.Source{}
	for _, s := range proj.Sources {
		id := strings.TrimPrefix(s.Name, "Interview ")
		byInterview[id] = s
		if !strings.Contains(s.Text, "[EMAIL]") && strings.Contains(s.Text, "mail ") {
			t.Errorf("source %s is not redacted: %q", s.Name, s.Text)
		}
		if s.Values["plan"] == "" {
			t.Errorf("source %s has no plan variable: %v", s.Name, s.Values)
		}
	}
	type span struct {
		iv    string
		start int
	}
	selections := map[span]qdpxcheck.Selection{}
	for _, sel := range proj.Selections {
		selections[span{strings.TrimPrefix(sel.Source, "Interview "), sel.Start}] = sel
	}
	for _, q := range quotesOf(a) {
		src, ok := byInterview[q.InterviewID]
		if !ok {
			t.Fatalf("no source for interview %s", q.InterviewID)
		}
		// Where the quote's message starts in the source: its line, after the speaker.
		lines := strings.Split(src.Text, "\n")
		id, _ := kv.ParseID(q.InterviewID)
		msgs, err := e.db.FindTranscript(t.Context(), p, id)
		if err != nil || len(lines) < len(msgs) || q.MessageIndex >= len(msgs) {
			t.Fatalf("transcript of %s: %d messages, %d lines (%v)", q.InterviewID, len(msgs), len(lines), err)
		}
		offset := 0
		for _, l := range lines[:q.MessageIndex] {
			offset += len([]rune(l)) + 1
		}
		line := lines[q.MessageIndex]
		if !strings.HasPrefix(line, "Participant: ") {
			t.Fatalf("message %d of %s is not the participant's: %q", q.MessageIndex, q.InterviewID, line)
		}
		at := strings.Index(line, q.Text)
		if at < 0 {
			t.Fatalf("the quote %q is not in its message line %q", q.Text, line)
		}
		start := offset + len([]rune(line[:at]))
		sel, ok := selections[span{q.InterviewID, start}]
		if !ok || sel.Text != q.Text || sel.End-sel.Start != len([]rune(q.Text)) || len(sel.Codes) == 0 {
			t.Fatalf("quote %+v: selection at %d is %+v", q, start, sel)
		}
	}
}
