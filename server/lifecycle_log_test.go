package server

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/rs/zerolog"

	"interviewd/kv"
	"interviewd/server/pipeline"
	"interviewd/server/research"
)

// logBuffer collects log lines written by the server's goroutines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// lines decodes every JSON log line.
func (l *logBuffer) lines(tb testing.TB) []map[string]any {
	tb.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(l.b.Bytes()), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			tb.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// find returns the first line whose message starts with msg, or nil.
func (l *logBuffer) find(tb testing.TB, msg string) map[string]any {
	for _, m := range l.lines(tb) {
		if s, _ := m["message"].(string); strings.HasPrefix(s, msg) {
			return m
		}
	}
	return nil
}

// waitFor polls the log until a line with msg appears (a job logs on its own time).
func (l *logBuffer) waitFor(tb testing.TB, msg string) map[string]any {
	tb.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if m := l.find(tb, msg); m != nil {
			return m
		}
		if time.Now().After(deadline) {
			tb.Fatalf("no %q in the log after 60 s:\n%s", msg, l)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// withLog sends the server's and the jobs' log to w at level.
func withLog(w *logBuffer, level zerolog.Level) serveOption {
	return func(c *Config, _ *kv.Options) { c.Log = zerolog.New(w).Level(level) }
}

func TestLifecycleLog(t *testing.T) {
	logs := &logBuffer{}
	e := mustServe(t, withLog(logs, zerolog.InfoLevel))
	if _, err := e.db.AddCredits(t.Context(), e.orgA.ID, -9); err != nil { // one credit left
		t.Fatal(err)
	}

	t.Run("OK_GoLiveWithNoCreditsWarns", func(t *testing.T) {
		st := e.studyWith(e.orgB.ID, kv.EnvLive, kv.ModeTest, plainBrief("No credits", "Why?"))
		if r := e.do("PUT", "/v1/api/studies/"+st.ID.String()+"/mode", "b_live", `{"mode":"live"}`); r.status != 200 {
			t.Fatalf("mode: %d %s", r.status, r.body)
		}
		live := logs.find(t, "study went live")
		if live == nil || live["level"] != "info" || live["study_id"] != st.ID.String() {
			t.Fatalf("study went live: %v", live)
		}
		warn := logs.find(t, "study went live with 0 credits")
		if warn == nil || warn["level"] != "warn" || !strings.Contains(warn["message"].(string), "credits add --org "+e.orgB.ID.String()) {
			t.Fatalf("no 0-credit warning: %v", warn)
		}
	})
	t.Run("OK_InterviewAndCreditsAndExport", func(t *testing.T) {
		st := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeTest, plainBrief("Credits", "Why?"))
		if r := e.do("PUT", "/v1/api/studies/"+st.ID.String()+"/mode", "a_live", `{"mode":"live"}`); r.status != 200 {
			t.Fatalf("mode: %d %s", r.status, r.body)
		}
		e.completeInterview(st.LinkToken, []string{"Because it is slow."})
		for _, msg := range []string{"interview started", "credits exhausted", "interview completed"} {
			m := logs.find(t, msg)
			if m == nil || m["level"] != "info" || m["org_id"] != e.orgA.ID.String() {
				t.Fatalf("%s: %v", msg, m)
			}
		}
		r := e.do("POST", "/v1/api/exports", "a_live", `{"study_id":"`+st.ID.String()+`"}`)
		if r.status != 202 {
			t.Fatalf("export: %d %s", r.status, r.body)
		}
		var job research.ExportJob
		r.json(t, &job)
		if got := e.pollExport("a_live", job.JobID); got.Status != kv.ExportCompleted {
			t.Fatalf("export %+v", got)
		}
		if m := logs.waitFor(t, "export finished"); m["job_id"] != job.JobID || m["rows"] != float64(1) {
			t.Fatalf("export finished: %v", m)
		}
		if r := e.do("PUT", "/v1/api/studies/"+st.ID.String()+"/mode", "a_live", `{"mode":"closed"}`); r.status != 200 {
			t.Fatalf("close: %d %s", r.status, r.body)
		}
		if m := logs.find(t, "study closed"); m == nil || m["study_id"] != st.ID.String() {
			t.Fatalf("study closed: %v", m)
		}
	})
	t.Run("OK_RefusedAuthoringIsNotAnError", func(t *testing.T) {
		r := e.do("POST", "/v1/api/studies", "a_live", `{"guidance":"Write me a poem"}`)
		if r.status != 202 {
			t.Fatalf("create: %d %s", r.status, r.body)
		}
		var job research.AuthoringJob
		r.json(t, &job)
		m := logs.waitFor(t, "authoring request refused")
		if m["level"] != "info" || m["job_id"] != job.JobID {
			t.Fatalf("refusal: %v", m)
		}
	})
	t.Run("OK_RefusalsAtInfoWithCode", func(t *testing.T) {
		if r := e.do("GET", "/v1/api/me", "", ""); r.status != 401 {
			t.Fatalf("me: %d", r.status)
		}
		var line map[string]any
		for _, m := range logs.lines(t) {
			if m["message"] == "request" && m["route"] == "/v1/api/me" && m["status"] == float64(401) {
				line = m
			}
		}
		if line == nil || line["level"] != "info" || line["code"] != "missing_token" {
			t.Fatalf("401 access line: %v", line)
		}
		if _, ok := line["duration_ms"].(float64); !ok {
			t.Fatalf("no duration_ms: %v", line)
		}
	})
	for _, m := range logs.lines(t) {
		if m["level"] == "error" {
			t.Fatalf("an error was logged: %v", m)
		}
	}
}

// TestParticipantPageRefusalsLogged: a refused participant page (an unknown link, a
// busy server) is logged at info with its code, like an API refusal.
func TestParticipantPageRefusalsLogged(t *testing.T) {
	logs := &logBuffer{}
	e := mustServe(t, withLog(logs, zerolog.InfoLevel), withRateLimits(pipeline.RateLimits{Read: 100, Write: 100, OrgRead: 100, OrgWrite: 100, IP: 1}))
	statuses := map[int]bool{}
	for i := 0; i < 3; i++ { // the first is admitted (404), the rest are over the limit (429)
		statuses[e.do("GET", "/i/"+kv.NewLinkToken(), "", "").status] = true
	}
	if !statuses[404] || !statuses[429] {
		t.Fatalf("statuses %v", statuses)
	}
	want := map[float64]string{404: "not_found", 429: "rate_limited"}
	seen := map[float64]bool{}
	for _, m := range logs.lines(t) {
		if m["message"] != "request" || m["route"] != "/i/{token}" {
			continue
		}
		status, _ := m["status"].(float64)
		if m["level"] != "info" || m["code"] != want[status] {
			t.Fatalf("access line %v", m)
		}
		seen[status] = true
	}
	if !seen[404] || !seen[429] {
		t.Fatalf("access lines for %v:\n%s", seen, logs)
	}
}

func TestHealthProbes(t *testing.T) {
	logs := &logBuffer{}
	e := mustServe(t, withLog(logs, zerolog.InfoLevel), withRateLimits(pipeline.RateLimits{Read: 1, Write: 1, OrgRead: 1, OrgWrite: 1, IP: 1}))
	for i := 0; i < 20; i++ { // far over every limit: probes are not limited
		if r := e.do("GET", "/healthz", "", ""); r.status != 200 || string(r.body) != `{"status":"ok"}` {
			t.Fatalf("healthz #%d: %d %s", i, r.status, r.body)
		}
		if r := e.do("GET", "/readyz", "", ""); r.status != 200 || string(r.body) != `{"status":"ready"}` {
			t.Fatalf("readyz #%d: %d %s", i, r.status, r.body)
		}
	}
	if strings.Contains(logs.String(), "/healthz") || strings.Contains(logs.String(), "/readyz") {
		t.Fatalf("probes in the access log at info:\n%s", logs)
	}
	if err := e.runner.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if r := e.do("GET", "/readyz", "", ""); r.status != 503 || string(r.body) != `{"status":"unavailable","reason":"jobs_stopped"}` {
		t.Fatalf("readyz with jobs stopped: %d %s", r.status, r.body)
	}
	if err := e.db.Close(); err != nil {
		t.Fatal(err)
	}
	if r := e.do("GET", "/readyz", "", ""); r.status != 503 || !strings.Contains(string(r.body), `"reason":"database_unavailable"`) {
		t.Fatalf("readyz with the database closed: %d %s", r.status, r.body)
	}
	if r := e.do("GET", "/healthz", "", ""); r.status != 200 {
		t.Fatalf("healthz with the database closed: %d", r.status)
	}
}
