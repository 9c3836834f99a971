package analysis_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"interviewd/analysis"
	"interviewd/moderator"
	"interviewd/moderator/chattest"
)

const invented = "I would pay double for this, honestly."

func modelInput() analysis.Input {
	iv := func(id string, answers ...string) analysis.Interview {
		msgs := []analysis.Message{{Speaker: analysis.SpeakerInterviewer, Text: "How do you feel about the price?"}}
		for _, a := range answers {
			msgs = append(msgs, analysis.Message{Speaker: analysis.SpeakerParticipant, Text: a})
		}
		return analysis.Interview{ID: id, Context: map[string]string{"plan": "pro"}, Messages: msgs}
	}
	return analysis.Input{
		StudyID:    "s1",
		Objectives: []string{"Understand how customers see the price.", "Learn about invoicing needs."},
		Questions:  []analysis.Question{{Text: "How do you feel about the price?", Kind: analysis.QuestionVerbatim}},
		Interviews: []analysis.Interview{
			iv("a", "The price is too high for us. We almost cancelled."),
			iv("b", "The price is fair for what we get."),
			iv("c", "Honestly the cost is steep. I wish there were a smaller plan."),
		},
	}
}

// fakeChat is a local OpenAI-compatible chat-completions endpoint that plays the
// model: it quotes the first sentence of each participant line it is shown, adds an
// invented quote to interview "c", and consolidates by statement number.
func fakeChat(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var calls atomic.Int32
	line := regexp.MustCompile(`(?m)^\[(\d+)\] participant: ([^.!?]*[.!?])`)
	stmt := regexp.MustCompile(`(?m)^S(\d+) (\S+) `)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		raw, _ := io.ReadAll(r.Body)
		var req struct {
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
			ResponseFormat struct {
				JSONSchema struct {
					Name   string          `json:"name"`
					Schema json.RawMessage `json:"schema"`
				} `json:"json_schema"`
			} `json:"response_format"`
		}
		if err := json.Unmarshal(raw, &req); err != nil || len(req.Messages) != 2 || len(req.ResponseFormat.JSONSchema.Schema) == 0 {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		user := req.Messages[1].Content
		var content any
		switch req.ResponseFormat.JSONSchema.Name {
		case "interview_evidence":
			var sts []map[string]any
			for _, m := range line.FindAllStringSubmatch(user, -1) {
				mi, _ := strconv.Atoi(m[1])
				sent := analysis.SentimentNegative
				if strings.Contains(m[2], "fair") {
					sent = analysis.SentimentPositive
				}
				sts = append(sts, map[string]any{"message_index": mi, "quote": m[2], "summary": "price", "objectives": []int{1}, "sentiment": sent, "suggestion": false})
			}
			if strings.Contains(user, "the cost is steep") {
				sts = append(sts, map[string]any{"message_index": 1, "quote": invented, "summary": "would pay more", "objectives": []int{1}, "sentiment": "positive", "suggestion": false})
			}
			content = map[string]any{"statements": sts}
		case "study_themes":
			var all, neg, pos []int
			for _, m := range stmt.FindAllStringSubmatch(user, -1) {
				n, _ := strconv.Atoi(m[1])
				all = append(all, n)
			}
			for _, l := range strings.Split(user, "\n") {
				var n int
				if _, err := fmt.Sscanf(l, "S%d", &n); err == nil {
					if strings.Contains(l, "positive") {
						pos = append(pos, n)
					} else {
						neg = append(neg, n)
					}
				}
			}
			content = map[string]any{
				"themes":      []any{map[string]any{"label": "price", "description": "What people pay.", "sentiment": "mixed", "statements": all}},
				"findings":    []any{map[string]any{"objective": 1, "statement": "Participants disagree about the price.", "support": neg, "contrary": pos}},
				"suggestions": []any{},
				"summary":     "Price divides participants.",
			}
		default:
			content = map[string]any{}
		}
		c, _ := json.Marshal(content)
		body, _ := json.Marshal(map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": "fake",
			"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": string(c), "refusal": nil}, "finish_reason": "stop"}},
		})
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

func newClient(t *testing.T, url string) *moderator.OpenAI {
	t.Helper()
	c, err := moderator.NewOpenAI(moderator.OpenAIConfig{URL: url + "/v1", Model: "fake", MaxRetries: -1, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestModelEngine(t *testing.T) {
	t.Run("OK_InventedQuoteDropped", func(t *testing.T) {
		srv, calls := fakeChat(t)
		in := modelInput()
		e := analysis.NewModel(newClient(t, srv.URL), "fake")
		if e.Name() != "model:fake" {
			t.Errorf("Name = %q", e.Name())
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		a, err := e.Analyse(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		if n := calls.Load(); n != int32(len(in.Interviews))+1 {
			t.Errorf("%d calls, want one per interview and one to consolidate", n)
		}
		dropped := analysis.Ground(in, a)
		// The invented quote sits on the theme and on the finding's contrary side.
		if dropped != 2 || a.QuotesDropped != 2 {
			t.Errorf("dropped %d (QuotesDropped %d), want the invented quote's 2 places", dropped, a.QuotesDropped)
		}
		b, _ := json.Marshal(a)
		if strings.Contains(string(b), invented) {
			t.Error("the invented quote survived Ground")
		}
		if len(a.Themes) != 1 || a.Themes[0].InterviewCount != 3 || a.Themes[0].Segments["plan"]["pro"] != 3 {
			t.Errorf("themes = %+v", a.Themes)
		}
		f := a.Objectives[0].Findings
		if len(f) != 1 || len(f[0].Support) != 2 || len(f[0].Contrary) != 1 {
			t.Errorf("findings = %+v, want the price split as 2 support and 1 contrary", f)
		}
		if a.Objectives[0].Coverage.Interviews != 3 || a.Objectives[1].Coverage.Interviews != 0 || !a.Objectives[1].Gap {
			t.Errorf("objectives = %+v", a.Objectives)
		}
		if q := a.Questions[0]; q.Answered != 3 || q.Skipped != 0 || len(q.Groups) != 1 || q.Groups[0].Count != 3 {
			t.Errorf("question = %+v", q)
		}
	})

	t.Run("ErrJunk", func(t *testing.T) {
		g := chattest.NewGated(t) // answers every request with {"probe": ""}
		in := modelInput()
		in.Interviews = in.Interviews[:1]
		done := make(chan error, 1)
		go func() {
			_, err := analysis.NewModel(newClient(t, g.URL), "gated").Analyse(context.Background(), in)
			done <- err
		}()
		g.WaitArrived(t, 1)
		g.Let(t, chattest.Answer{})
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "not in the requested shape") {
				t.Errorf("err = %v, want the shape named", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("Analyse did not return")
		}
	})

	t.Run("ErrEndpoint", func(t *testing.T) {
		g := chattest.NewGated(t)
		in := modelInput()
		in.Interviews = in.Interviews[:1]
		done := make(chan error, 1)
		go func() {
			_, err := analysis.NewModel(newClient(t, g.URL), "gated").Analyse(context.Background(), in)
			done <- err
		}()
		g.WaitArrived(t, 1)
		g.Let(t, chattest.Answer{Fail: true})
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "status 400") || !strings.Contains(err.Error(), "interview a") {
				t.Errorf("err = %v, want the endpoint's 400 for interview a", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("Analyse did not return")
		}
	})

	t.Run("OK_Empty", func(t *testing.T) {
		srv, calls := fakeChat(t)
		in := modelInput()
		in.Interviews = nil
		a, err := analysis.NewModel(newClient(t, srv.URL), "fake").Analyse(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		if calls.Load() != 0 || len(a.Themes) != 0 || !a.Objectives[0].Gap {
			t.Errorf("calls %d, analysis %+v: want no call and every objective a gap", calls.Load(), a)
		}
	})
}
