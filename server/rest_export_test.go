package server

import (
	"encoding/csv"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"interviewd/kv"
	"interviewd/plugins/plugintest"
	"interviewd/server/research"
)

const exportNote = "EXPORT-NOTE-91c2: never show this"

// completeInterview runs a participant through a whole interview with answers, cycling
// through them until the interview completes.
func (e *testEnv) completeInterview(token string, answers []string) {
	e.t.Helper()
	p := e.participant(token)
	p.open()
	for i := 0; i < 60; i++ {
		out := p.mustSay(answers[i%len(answers)])
		if out.Status == kv.InterviewCompleted {
			return
		}
	}
	e.t.Fatal("interview did not complete in 60 answers")
}

// pollExport polls an export until it leaves queued/running.
func (e *testEnv) pollExport(key, jobID string) research.ExportStatus {
	e.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		r := e.do("GET", "/v1/api/exports/"+jobID, key, "")
		if r.status != 200 {
			e.t.Fatalf("export status: %d %s", r.status, r.body)
		}
		var st research.ExportStatus
		r.json(e.t, &st)
		if st.Status == kv.ExportCompleted || st.Status == kv.ExportFailed {
			if len(r.body) != len(`{"status":"`+st.Status+`","ready":`)+len(map[bool]string{true: "true", false: "false"}[st.Ready])+1 {
				e.t.Fatalf("status body is not exactly {status, ready}: %s", r.body)
			}
			return st
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("export %s still %s after 60 s", jobID, st.Status)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestExportEndToEnd(t *testing.T) {
	clock := &testClock{now: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)}
	e := mustServe(t, withClock(clock))
	p := kv.Partition{Org: e.orgA.ID, Env: kv.EnvLive}
	brief := plainBrief("Rota planning", "How do you plan the rota today?", "What goes wrong with it?")
	brief.PreInterviewQuestions = []string{"How many people are on your team?"}
	st := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeTest, brief)
	// A rehearsal while in test mode, and a simulation: neither may be exported.
	e.completeInterview(st.LinkToken, []string{"REHEARSAL-ONLY answer"})
	if r := e.do("POST", "/v1/api/studies/"+st.ID.String()+":simulate", "a_live", `{"max_turns":2}`); r.status != 202 {
		t.Fatalf("simulate: %d %s", r.status, r.body)
	}
	e.mustMode(p, st.ID, kv.ModeLive)

	linkA := e.linkFor(st, kv.AudiencePerson, map[string]string{"crm_id": "C-1", "email": "jane.doe@example.com"}, exportNote)
	linkB := e.linkFor(st, kv.AudienceGroup, map[string]string{"plan": "pro"}, exportNote)
	e.completeInterview(linkA, []string{
		"Five of us. Mail me at jane.doe@example.com or call +44 20 7946 0958.",
		"=SUM(A1:A9) is what I type, \"quoted\", with a comma, and\na new line.",
		"My card 4111 1111 1111 1111 was charged; the server is 192.168.10.20.",
	})
	e.completeInterview(linkB, []string{"We are three.", "-it breaks at weekends", "@everyone complains"})
	e.participant(linkB).open() // a third, in progress: not exported

	t.Run("ErrTestEnvironment", func(t *testing.T) {
		r := e.do("POST", "/v1/api/exports", "a_test", `{"study_id":"`+st.ID.String()+`"}`)
		if r.status != 403 || !strings.Contains(string(r.body), `"code":"test_environment"`) {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
	t.Run("ErrFormat", func(t *testing.T) {
		r := e.do("POST", "/v1/api/exports", "a_live", `{"study_id":"`+st.ID.String()+`","format":"xlsx"}`)
		if r.status != 422 || !strings.Contains(string(r.body), `"loc":["body","format"]`) {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
	t.Run("ErrOtherOrgStudy", func(t *testing.T) {
		r := e.do("POST", "/v1/api/exports", "b_live", `{"study_id":"`+st.ID.String()+`"}`)
		if r.status != 404 {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})

	r := e.do("POST", "/v1/api/exports", "a_live", `{"study_id":"`+st.ID.String()+`"}`, "Idempotency-Key", "export-1")
	if r.status != 202 {
		t.Fatalf("start: %d %s", r.status, r.body)
	}
	var job research.ExportJob
	r.json(t, &job)
	if again := e.do("POST", "/v1/api/exports", "a_live", `{"study_id":"`+st.ID.String()+`"}`, "Idempotency-Key", "export-1"); string(again.body) != string(r.body) || again.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay: %s", again.body)
	}
	if st := e.pollExport("a_live", job.JobID); !st.Ready || st.Status != "completed" {
		t.Fatalf("export %+v", st)
	}

	inline := e.do("GET", "/v1/api/exports/"+job.JobID+"/download", "a_live", "", "Accept", "text/csv")
	if inline.status != 200 || !strings.HasPrefix(inline.header.Get("Content-Type"), "text/csv") || !strings.HasPrefix(inline.header.Get("Content-Disposition"), "attachment") {
		t.Fatalf("inline download: %d %v", inline.status, inline.header)
	}
	if _, params, err := mime.ParseMediaType(inline.header.Get("Content-Disposition")); err != nil || !strings.HasPrefix(params["filename"], "interviews-") ||
		!strings.Contains(inline.header.Get("Content-Disposition"), "filename*=UTF-8''") {
		t.Fatalf("inline download's Content-Disposition %q: %v", inline.header.Get("Content-Disposition"), err)
	}
	text := string(inline.body)
	rows, err := csv.NewReader(strings.NewReader(text)).ReadAll()
	if err != nil {
		t.Fatalf("CSV does not parse: %v\n%s", err, text)
	}
	header := rows[0]
	wantHeader := []string{"interview_id", "study_id", "started_at", "completed_at", "duration_seconds", "modality", "invite_audience",
		"context.crm_id", "context.email", "context.plan", "How many people are on your team?", "How do you plan the rota today?", "What goes wrong with it?", "transcript"}
	if strings.Join(header, "|") != strings.Join(wantHeader, "|") {
		t.Fatalf("header %q", header)
	}
	if len(rows) != 3 {
		t.Fatalf("%d data rows, want the 2 completed live interviews:\n%s", len(rows)-1, text)
	}
	for _, leak := range []string{"jane.doe@example.com", "7946 0958", "4111 1111 1111 1111", "192.168.10.20", exportNote, "EXPORT-NOTE", "REHEARSAL-ONLY"} {
		if strings.Contains(text, leak) {
			t.Fatalf("export contains %q:\n%s", leak, text)
		}
	}
	for _, label := range []string{"[EMAIL]", "[PHONE]", "[CARD]", "[IP]"} {
		if !strings.Contains(text, label) {
			t.Fatalf("export lacks %s:\n%s", label, text)
		}
	}
	for _, row := range rows[1:] {
		for _, cell := range row {
			if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
				t.Fatalf("cell %q starts with a formula trigger", cell)
			}
		}
	}
	if !strings.Contains(text, "'=SUM(A1:A9)") || !strings.Contains(text, "'-it breaks") {
		t.Fatalf("injection prefixes missing:\n%s", text)
	}

	t.Run("OK_SignedURL", func(t *testing.T) {
		r := e.do("GET", "/v1/api/exports/"+job.JobID+"/download", "a_live", "", "Accept", "Application/JSON")
		var d struct {
			DownloadURL string `json:"download_url"`
			ExpiresAt   string `json:"expires_at"`
		}
		r.json(t, &d)
		if r.status != 200 || !strings.HasPrefix(d.DownloadURL, testBaseURL+"/v1/api/exports/"+job.JobID+"/artifact?") || d.ExpiresAt != "2026-11-21T10:05:00.000Z" {
			t.Fatalf("%d %s", r.status, r.body)
		}
		path := strings.TrimPrefix(d.DownloadURL, testBaseURL)
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := client.Get(e.url + path) // no bearer
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("signed URL without a bearer: %v %v", resp, err)
		}
		resp.Body.Close()
		for i := strings.Index(path, "sig=") + 4; i < len(path); i += 7 {
			b := []byte(path)
			b[i] ^= 1
			if r := e.do("GET", string(b), "", ""); r.status != 403 {
				t.Fatalf("changed character %d: %d", i, r.status)
			}
		}
		tampered := strings.Replace(path, "env=live", "env=test", 1)
		if r := e.do("GET", tampered, "", ""); r.status != 403 {
			t.Fatalf("tampered env: %d", r.status)
		}
		clock.Advance(5*time.Minute - time.Second)
		if r := e.do("GET", path, "", ""); r.status != 200 {
			t.Fatalf("4:59 after signing: %d", r.status)
		}
		clock.Advance(time.Second)
		if r := e.do("GET", path, "", ""); r.status != 403 {
			t.Fatalf("5:00 after signing: %d", r.status)
		}
	})
	t.Run("ErrNotReady", func(t *testing.T) {
		j, err := e.db.CreateExportJob(t.Context(), kv.ExportInput{Partition: p, JobID: kv.NewV4(), StudyID: st.ID, Format: "csv"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		r := e.do("GET", "/v1/api/exports/"+j.ID.String()+"/download", "a_live", "")
		if r.status != 409 || !strings.Contains(string(r.body), "export_not_ready") {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
	t.Run("OK_ArtifactsSweptAfterSevenDays", func(t *testing.T) {
		clock.Advance(kv.ExportArtifactTTL + time.Minute)
		e.runner.SweepExports(t.Context())
		r := e.do("GET", "/v1/api/exports/"+job.JobID+"/download", "a_live", "")
		if r.status != 404 || !strings.Contains(string(r.body), "export_expired") {
			t.Fatalf("%d %s", r.status, r.body)
		}
		left, _ := os.ReadDir(filepath.Join(e.db.BlobDir(), "exports"))
		if len(left) != 0 {
			t.Fatalf("%d artifacts left", len(left))
		}
	})
}

func TestExportOrganisationFormatter(t *testing.T) {
	e := mustServe(t)
	wasm := plugintest.Wasm(t, plugintest.JSONL)
	if err := os.MkdirAll(filepath.Join(e.db.BlobDir(), "plugins"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.db.BlobDir(), "plugins", "jsonl.wasm"), wasm, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.PutPlugin(t.Context(), kv.OrgPlugin{OrgID: e.orgA.ID, Kind: kv.PluginFormatter, Name: "jsonl",
		MediaType: "application/x-ndjson", Blob: filepath.Join("plugins", "jsonl.wasm")}); err != nil {
		t.Fatal(err)
	}
	st := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeLive, plainBrief("Formats", "Why?"))
	e.completeInterview(e.linkFor(st, kv.AudienceGroup, nil, ""), []string{"Because of jane@example.com"})
	// Org B has no such formatter: the format is the organisation's own.
	stB := e.studyWith(e.orgB.ID, kv.EnvLive, kv.ModeLive, plainBrief("B", "Why?"))
	if r := e.do("POST", "/v1/api/exports", "b_live", `{"study_id":"`+stB.ID.String()+`","format":"jsonl"}`); r.status != 422 {
		t.Fatalf("org B with jsonl: %d %s", r.status, r.body)
	}
	r := e.do("POST", "/v1/api/exports", "a_live", `{"study_id":"`+st.ID.String()+`","format":"jsonl"}`)
	if r.status != 202 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	var job research.ExportJob
	r.json(t, &job)
	if st := e.pollExport("a_live", job.JobID); !st.Ready {
		t.Fatalf("jsonl export %+v", st)
	}
	d := e.do("GET", "/v1/api/exports/"+job.JobID+"/download", "a_live", "")
	if d.status != 200 || !strings.HasPrefix(d.header.Get("Content-Type"), "application/x-ndjson") || strings.Contains(string(d.body), "jane@example.com") || !strings.Contains(string(d.body), "[EMAIL]") {
		t.Fatalf("jsonl download: %d %v\n%s", d.status, d.header, d.body)
	}
}

// TestExportFailsOnBrokenRedactor: an organisation redactor that fails (here the
// sandbox plugin, which exits non-zero without a mode) fails the export with a clear
// error, nothing is downloadable, and the server keeps serving.
func TestExportFailsOnBrokenRedactor(t *testing.T) {
	e := mustServe(t)
	wasm := plugintest.Wasm(t, plugintest.Sandbox)
	os.MkdirAll(filepath.Join(e.db.BlobDir(), "plugins"), 0o700)
	if err := os.WriteFile(filepath.Join(e.db.BlobDir(), "plugins", "sandbox.wasm"), wasm, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.PutPlugin(t.Context(), kv.OrgPlugin{OrgID: e.orgA.ID, Kind: kv.PluginRedactor, Name: "sandbox",
		Blob: filepath.Join("plugins", "sandbox.wasm")}); err != nil {
		t.Fatal(err)
	}
	st := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeLive, plainBrief("Broken", "Why?"))
	e.completeInterview(e.linkFor(st, kv.AudienceGroup, nil, ""), []string{"an answer"})
	r := e.do("POST", "/v1/api/exports", "a_live", `{"study_id":"`+st.ID.String()+`"}`)
	var job research.ExportJob
	r.json(t, &job)
	if got := e.pollExport("a_live", job.JobID); got.Status != "failed" || got.Ready {
		t.Fatalf("export with a failing redactor: %+v", got)
	}
	id, _ := kv.ParseID(job.JobID)
	j, _ := e.db.FindJobByID(t.Context(), kv.Partition{Org: e.orgA.ID, Env: kv.EnvLive}, kv.JobExport, id)
	if !strings.Contains(j.Error, "sandbox") {
		t.Fatalf("job error %q does not name the plugin", j.Error)
	}
	if d := e.do("GET", "/v1/api/exports/"+job.JobID+"/download", "a_live", ""); d.status != 409 {
		t.Fatalf("download of a failed export: %d", d.status)
	}
	if r := e.do("GET", "/v1/api/me", "a_live", ""); r.status != 200 {
		t.Fatalf("server after a failed plugin: %d", r.status)
	}
}
