package jobs

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/rs/zerolog"

	"interviewd/analysis"
	"interviewd/kv"
	"interviewd/moderator"
)

// fakeModel is a local OpenAI-compatible chat-completions endpoint for the model
// analysis engine: it answers the evidence request of each interview with every
// participant line (and one quote nobody said), and the consolidation with one theme
// and one finding over every statement. With fail set it rejects every request as the
// API does (400), which the client does not retry.
type fakeModel struct {
	srv   *httptest.Server
	fail  atomic.Bool
	mu    sync.Mutex
	users []string // every user message received
}

var participantLine = regexp.MustCompile(`(?m)^\[(\d+)\] participant: (.*)$`)
var statementLine = regexp.MustCompile(`(?m)^S(\d+) `)

func newFakeModel(t *testing.T) *fakeModel {
	f := &fakeModel{}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeModel) serve(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
		ResponseFormat struct {
			JSONSchema struct {
				Name string `json:"name"`
			} `json:"json_schema"`
		} `json:"response_format"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) < 2 {
		http.Error(w, `{"error":{"message":"bad request"}}`, 400)
		return
	}
	user := req.Messages[len(req.Messages)-1].Content
	f.mu.Lock()
	f.users = append(f.users, user)
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if f.fail.Load() {
		w.WriteHeader(400)
		fmt.Fprint(w, `{"error":{"message":"The model is not available for this key.","type":"invalid_request_error","code":"model_not_found"}}`)
		return
	}
	var content any
	switch req.ResponseFormat.JSONSchema.Name {
	case "interview_evidence":
		statements := []map[string]any{}
		for _, m := range participantLine.FindAllStringSubmatch(user, -1) {
			var idx int
			fmt.Sscan(m[1], &idx)
			statements = append(statements, map[string]any{"message_index": idx, "quote": m[2], "summary": "how shifts are planned",
				"objectives": []int{1}, "sentiment": "negative", "suggestion": false})
		}
		if len(statements) > 0 {
			invented := map[string]any{}
			for k, v := range statements[0] {
				invented[k] = v
			}
			invented["quote"] = "words nobody said"
			statements = append(statements, invented)
		}
		content = map[string]any{"statements": statements}
	case "study_themes":
		var all []int
		for _, m := range statementLine.FindAllStringSubmatch(user, -1) {
			var n int
			fmt.Sscan(m[1], &n)
			all = append(all, n)
		}
		content = map[string]any{
			"themes":      []any{map[string]any{"label": "Planning by hand", "description": "Shifts are planned by hand.", "sentiment": "negative", "statements": all}},
			"findings":    []any{map[string]any{"objective": 1, "statement": "Teams plan shifts by hand.", "support": all, "contrary": []int{}}},
			"suggestions": []any{},
			"summary":     "Teams plan shifts by hand.",
		}
	default:
		w.WriteHeader(400)
		fmt.Fprint(w, `{"error":{"message":"unknown response format"}}`)
		return
	}
	raw, _ := json.Marshal(content)
	resp, _ := json.Marshal(map[string]any{"id": "c", "object": "chat.completion", "choices": []any{map[string]any{
		"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": string(raw)}}}})
	w.Write(resp)
}

// TestAnalysisModelEngine: with an OpenAI-compatible interviewer the findings come from
// the model engine on the same endpoint, which sees only redacted text; its invented
// quote is dropped and counted; a failing endpoint fails the job with its reason and
// the last version stays the latest.
func TestAnalysisModelEngine(t *testing.T) {
	fake := newFakeModel(t)
	mod, err := moderator.NewOpenAI(moderator.OpenAIConfig{URL: fake.srv.URL + "/v1", Model: "m-1", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	engine := NewAnalyser(mod, "m-1")
	if engine.Name() != "model:m-1" {
		t.Fatalf("engine %q for an OpenAI-compatible interviewer", engine.Name())
	}
	if name := NewAnalyser(moderator.NewBuiltin(), "").Name(); name != "builtin" {
		t.Fatalf("engine %q for the built-in interviewer", name)
	}
	db := mustOpenDB(t, t.TempDir())
	defer db.Close()
	ctx := context.Background()
	org, _, _ := db.CreateOrg(ctx, kv.OrgInput{Name: "Model", Email: "m@example.com", Credits: 10})
	p := kv.Partition{Org: org.ID, Env: kv.EnvLive}
	brief := analysisBrief("Model")
	st, _ := db.CreateStudy(ctx, kv.StudyInput{Partition: p, Brief: brief})
	if _, err := db.SetStudyMode(ctx, p, st.ID, kv.ModeLive); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		completeLive(t, db, st, fmt.Sprint("m", i), brief.VerbatimQuestions,
			[]string{"We plan shifts on paper and " + analysisEmail + " sends them round."}, true)
	}
	r := NewRunner(Config{DB: db, Moderator: mod, Analyser: engine, Log: zerolog.Nop(), Plugins: mustPlugins(t)})
	defer r.Close(ctx)

	j := waitAnalysis(t, db, p, startAnalysis(t, r, db, p, st).ID)
	if j.Status != kv.AnalysisCompleted {
		t.Fatalf("job %+v", j)
	}
	v, err := db.FindAnalysis(ctx, p, st.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	a := decodeAnalysis(t, v)
	if a.Engine != "model:m-1" || a.InterviewsIncluded != 2 || a.QuotesDropped == 0 || len(a.Themes) != 1 {
		t.Fatalf("analysis %s", v.Body)
	}
	for _, q := range allQuotes(a) {
		if q.Text == "words nobody said" || !strings.Contains(q.Text, "[EMAIL]") {
			t.Fatalf("quote %+v", q)
		}
	}
	fake.mu.Lock()
	for _, u := range fake.users {
		if strings.Contains(u, analysisEmail) {
			t.Fatalf("the model was sent the unredacted email: %s", u)
		}
	}
	fake.mu.Unlock()

	fake.fail.Store(true)
	j = waitAnalysis(t, db, p, startAnalysis(t, r, db, p, st).ID)
	if j.Status != kv.AnalysisFailed || !strings.Contains(j.Error, "The analysis did not complete") || !strings.Contains(j.Error, "400") {
		t.Fatalf("failed job %+v", j)
	}
	if latest, err := db.FindAnalysis(ctx, p, st.ID, 0); err != nil || latest.Version != v.Version {
		t.Fatalf("after a failure the latest is %d (%v), want %d", latest.Version, err, v.Version)
	}
	var _ analysis.Completer = mod // the interviewer's client is the engine's
}
