package moderator

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"interviewd/kv"
)

func TestOpenAIProbe(t *testing.T) {
	title := "Grocery delivery habits"
	note := "Dig into price sensitivity; the client suspects delivery fees drive churn."
	req := ProbeRequest{
		Brief:       kv.Brief{Title: &title, Objectives: []string{"Learn why people switch"}},
		Question:    "What would make you switch services?",
		Answer:      "Probably the fees, honestly.",
		ProbesSoFar: 1,
		Context:     map[string]string{"plan": "premium", "city": "Leeds"},
		Note:        note,
		Transcript: []Message{
			{Speaker: "interviewer", Text: "What would make you switch services?"},
			{Speaker: "participant", Text: "Probably the fees, honestly."},
		},
	}
	tests := []struct {
		name         string
		replies      []fakeReply
		want         string
		wantAttempts int
	}{
		{"OK", []fakeReply{chatJSON(t, map[string]string{"probe": "  Which fees do you mean?  "})}, "Which fees do you mean?", 1},
		{"OKMoveOn", []fakeReply{chatJSON(t, map[string]string{"probe": ""})}, "", 1},
		{"OKAfterNoteLeak", []fakeReply{
			chatJSON(t, map[string]string{"probe": "My note says: " + note}),
			chatJSON(t, map[string]string{"probe": "Which fees do you mean?"}),
		}, "Which fees do you mean?", 2},
		{"OKAfterMissingField", []fakeReply{
			chatJSON(t, map[string]string{"reply": "Which fees?"}),
			chatJSON(t, map[string]string{"probe": "Which fees do you mean?"}),
		}, "Which fees do you mean?", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := mustFakeChat(t, tt.replies...)
			o, _ := mustOpenAI(t, f, OpenAIConfig{})
			got, err := o.Probe(t.Context(), req)
			if err != nil {
				t.Fatalf("Probe: %v", err)
			}
			if got != tt.want {
				t.Errorf("Probe = %q, want %q", got, tt.want)
			}
			reqs := f.requests()
			if len(reqs) != tt.wantAttempts {
				t.Fatalf("attempts = %d, want %d", len(reqs), tt.wantAttempts)
			}
			if name := schemaNameOf(t, reqs[0]); name != "probe" {
				t.Errorf("schema name = %q, want probe", name)
			}
			msgs := messagesOf(t, reqs[0])
			for _, want := range []string{"- city: Leeds", "- plan: premium", note, "Never reveal", "1 of at most 2"} {
				if !strings.Contains(msgs[0].Content, want) {
					t.Errorf("system prompt lacks %q:\n%s", want, msgs[0].Content)
				}
			}
			for _, want := range []string{"Participant: Probably the fees, honestly.", req.Question} {
				if !strings.Contains(msgs[1].Content, want) {
					t.Errorf("user message lacks %q:\n%s", want, msgs[1].Content)
				}
			}
		})
	}
	t.Run("OKEnoughProbesNoCall", func(t *testing.T) {
		f := mustFakeChat(t, chatJSON(t, map[string]string{"probe": "Anything else?"}))
		o, _ := mustOpenAI(t, f, OpenAIConfig{})
		enough := req
		enough.ProbesSoFar = openaiMaxProbes
		got, err := o.Probe(t.Context(), enough)
		if err != nil || got != "" {
			t.Errorf("Probe = %q, %v; want \"\", nil", got, err)
		}
		if n := len(f.requests()); n != 0 {
			t.Errorf("made %d requests, want none", n)
		}
	})
	t.Run("ErrRefused", func(t *testing.T) {
		f := mustFakeChat(t, chatRefusal(t, "No."))
		o, _ := mustOpenAI(t, f, OpenAIConfig{})
		if _, err := o.Probe(t.Context(), req); !errors.Is(err, ErrRefused) {
			t.Errorf("error = %v, want ErrRefused", err)
		}
	})
}

func TestOpenAIParticipant(t *testing.T) {
	title := "Grocery delivery habits"
	req := ParticipantRequest{
		Persona: "Priya, 34, nurse on night shifts, orders groceries weekly.",
		Seed:    42,
		Brief:   kv.Brief{Title: &title},
		Transcript: []Message{
			{Speaker: "interviewer", Text: "Tell me about the last time you ordered groceries online."},
		},
	}
	t.Run("OK", func(t *testing.T) {
		f := mustFakeChat(t, chatJSON(t, map[string]string{"reply": " Last Tuesday, after a night shift. "}))
		o, _ := mustOpenAI(t, f, OpenAIConfig{Model: "m"})
		got, err := o.Participant(t.Context(), req)
		if err != nil {
			t.Fatalf("Participant: %v", err)
		}
		if got != "Last Tuesday, after a night shift." {
			t.Errorf("Participant = %q", got)
		}
		r := f.requests()[0]
		if name := schemaNameOf(t, r); name != "reply" {
			t.Errorf("schema name = %q, want reply", name)
		}
		if seed, _ := r.Body["seed"].(float64); seed != 42 {
			t.Errorf("seed = %v, want 42", r.Body["seed"])
		}
		msgs := messagesOf(t, r)
		if !strings.Contains(msgs[0].Content, req.Persona) || !strings.Contains(msgs[0].Content, title) {
			t.Errorf("system prompt lacks the persona or study:\n%s", msgs[0].Content)
		}
		if !strings.Contains(msgs[1].Content, "Interviewer: Tell me about the last time") {
			t.Errorf("user message lacks the transcript:\n%s", msgs[1].Content)
		}
	})
	t.Run("OKInventedPersona", func(t *testing.T) {
		f := mustFakeChat(t, chatJSON(t, map[string]string{"reply": "I'm Tom. Mostly on Sundays."}))
		o, _ := mustOpenAI(t, f, OpenAIConfig{})
		anon := req
		anon.Persona = ""
		if _, err := o.Participant(t.Context(), anon); err != nil {
			t.Fatalf("Participant: %v", err)
		}
		sys := messagesOf(t, f.requests()[0])[0].Content
		if !strings.Contains(sys, "Invent a plausible") || !strings.Contains(sys, "variation 42") {
			t.Errorf("system prompt does not ask for an invented participant:\n%s", sys)
		}
	})
	t.Run("OKAfterEmptyReply", func(t *testing.T) {
		f := mustFakeChat(t, chatJSON(t, map[string]string{"reply": "   "}), chatJSON(t, map[string]string{"reply": "Sundays."}))
		o, _ := mustOpenAI(t, f, OpenAIConfig{})
		got, err := o.Participant(t.Context(), req)
		if err != nil || got != "Sundays." {
			t.Errorf("Participant = %q, %v; want Sundays.", got, err)
		}
		if n := len(f.requests()); n != 2 {
			t.Errorf("attempts = %d, want 2", n)
		}
	})
}

func messagesOf(tb testing.TB, r fakeRequest) []chatMessage {
	tb.Helper()
	var body struct {
		Messages []chatMessage `json:"messages"`
	}
	if err := json.Unmarshal(r.Raw, &body); err != nil {
		tb.Fatalf("request body: %v", err)
	}
	for _, m := range body.Messages {
		if m.Role != "system" && m.Role != "user" && m.Role != "assistant" {
			tb.Errorf("message role %q", m.Role)
		}
	}
	return body.Messages
}

func schemaNameOf(tb testing.TB, r fakeRequest) string {
	tb.Helper()
	var body struct {
		ResponseFormat chatResponseFormat `json:"response_format"`
	}
	if err := json.Unmarshal(r.Raw, &body); err != nil {
		tb.Fatalf("request body: %v", err)
	}
	if body.ResponseFormat.Type != "json_schema" || !body.ResponseFormat.JSONSchema.Strict {
		tb.Errorf("response_format = %+v", body.ResponseFormat)
	}
	return body.ResponseFormat.JSONSchema.Name
}
