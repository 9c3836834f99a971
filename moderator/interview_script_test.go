package moderator

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"interviewd/kv"
)

// scriptRun is an interview driven through Script.Next to the end.
type scriptRun struct {
	interviewer []string  // every interviewer message in order
	transcript  []Message // the whole conversation
	steps       int       // calls to Next
}

// runScript drives an interview with m as the interviewer's engine and the built-in
// participant answering. Between steps the position goes through JSON, as it does in kv.
func runScript(tb testing.TB, m Engine, brief kv.Brief, facts map[string]string, note string) scriptRun {
	tb.Helper()
	ctx := context.Background()
	var run scriptRun
	var s Script
	answer := ""
	for {
		msgs, next, done, err := s.Next(ctx, m, brief, facts, note, run.transcript, answer)
		if err != nil {
			tb.Fatalf("Next at %+v: %v", s, err)
		}
		run.steps++
		if len(msgs) == 0 {
			tb.Fatalf("Next at %+v sent nothing", s)
		}
		for _, msg := range msgs {
			run.interviewer = append(run.interviewer, msg)
			run.transcript = append(run.transcript, Message{Speaker: "interviewer", Text: msg})
		}
		raw, err := json.Marshal(next)
		if err != nil {
			tb.Fatal(err)
		}
		s = Script{}
		if err := json.Unmarshal(raw, &s); err != nil {
			tb.Fatal(err)
		}
		if done {
			if s.Phase != PhaseDone || msgs[len(msgs)-1] != ScriptClosing {
				tb.Fatalf("done at %+v with last message %q", s, msgs[len(msgs)-1])
			}
			return run
		}
		if run.steps > 200 {
			tb.Fatalf("interview did not end: %q", run.interviewer)
		}
		answer, err = NewBuiltin().Participant(ctx, ParticipantRequest{Seed: 3, Brief: brief, Transcript: run.transcript})
		if err != nil {
			tb.Fatal(err)
		}
		run.transcript = append(run.transcript, Message{Speaker: "participant", Text: answer})
	}
}

// checkScripted asserts that the scripted questions appear word for word, in order, each
// once, with at most maxProbes other messages after each verbatim question.
func checkScripted(tb testing.TB, run scriptRun, screener, verbatim []string, maxProbes int) {
	tb.Helper()
	if run.interviewer[0] != ScriptGreeting || run.interviewer[len(run.interviewer)-1] != ScriptClosing {
		tb.Fatalf("interview does not open with the greeting and close with the thank-you: %q", run.interviewer)
	}
	body := run.interviewer[1 : len(run.interviewer)-1]
	var asked []string
	probes := -1
	for _, msg := range body {
		scripted := slices.Contains(screener, msg) || slices.Contains(verbatim, msg)
		if scripted {
			asked = append(asked, msg)
			probes = 0
			continue
		}
		if len(asked) == 0 || !slices.Contains(verbatim, asked[len(asked)-1]) {
			tb.Fatalf("probe %q outside a verbatim question: %q", msg, run.interviewer)
		}
		if probes++; probes > maxProbes {
			tb.Fatalf("%d probes after %q: %q", probes, asked[len(asked)-1], run.interviewer)
		}
	}
	want := append(append([]string{}, screener...), verbatim...)
	if !reflect.DeepEqual(asked, want) {
		tb.Fatalf("scripted questions asked:\n%q\nwant:\n%q", asked, want)
	}
}

func TestScriptBuiltinInterview(t *testing.T) {
	brief := mustDraft(t, "We want to understand why customers cancel their subscriptions after the free trial, and learn what would bring them back.")
	run := runScript(t, NewBuiltin(), brief, nil, "dig into price")
	checkScripted(t, run, brief.PreInterviewQuestions, brief.VerbatimQuestions, 1)
	probes := len(run.interviewer) - 2 - len(brief.PreInterviewQuestions) - len(brief.VerbatimQuestions)
	if probes == 0 {
		t.Fatalf("the built-in engine never probed: %q", run.interviewer)
	}
	for _, msg := range run.interviewer {
		if strings.Contains(msg, "dig into") {
			t.Fatalf("message %q reveals the note", msg)
		}
	}
	again := runScript(t, NewBuiltin(), brief, nil, "dig into price")
	if !reflect.DeepEqual(run.transcript, again.transcript) {
		t.Fatal("same interview twice, different transcripts")
	}
}

func TestScriptSkipsScreenerByContext(t *testing.T) {
	screener := []string{"What is your role?", "What is your company size?", "Which city are you based in?", "How old are you?"}
	verbatim := []string{"What is your role in hiring?", "How do you run interviews?", "What would you change?"}
	brief := kv.Brief{PreInterviewQuestions: screener, VerbatimQuestions: verbatim}
	tests := []struct {
		name  string
		facts map[string]string
		asked []string
	}{
		{"NoContext", nil, screener},
		{"RoleKnown", map[string]string{"role": "designer"}, screener[1:]},
		{"KeyCaseAndUnderscores", map[string]string{"Company_Size": "50-200", "ROLE": "designer"}, screener[2:]},
		{"HyphenAndSynonym", map[string]string{"home-city": "Leeds", "location": "Leeds", "age": "34"}, screener[:2]},
		{"EmptyValueNotAFact", map[string]string{"role": " ", "company-size": ""}, screener},
		{"UnrelatedKey", map[string]string{"utm_source": "newsletter", "plan": "pro"}, screener},
		{"AllKnown", map[string]string{"job_title": "CTO", "company size": "10", "city": "Oslo", "age": "40"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := runScript(t, NewBuiltin(), brief, tt.facts, "")
			checkScripted(t, run, tt.asked, verbatim, 1)
		})
	}
}

// rogueModerator is an interviewer engine that misbehaves on purpose: its probe comes
// from probe(req), whatever the script would want.
type rogueModerator struct {
	probe func(req ProbeRequest) (string, error)
	calls int
}

func (r *rogueModerator) Author(context.Context, AuthorRequest) (kv.Brief, error) {
	return kv.Brief{}, errors.New("rogue: no authoring")
}

func (r *rogueModerator) Probe(_ context.Context, req ProbeRequest) (string, error) {
	r.calls++
	return r.probe(req)
}

func (r *rogueModerator) Participant(context.Context, ParticipantRequest) (string, error) {
	return "", errors.New("rogue: no participant")
}

func TestScriptRogueEngine(t *testing.T) {
	brief := kv.Brief{
		PreInterviewQuestions: []string{"What is your role?"},
		VerbatimQuestions:     []string{"How do you plan your week?", "What gets in the way of planning?", "What would you change about your planning app?"},
	}
	next := func(req ProbeRequest) string {
		i := slices.Index(brief.VerbatimQuestions, req.Question)
		return brief.VerbatimQuestions[(i+1)%len(brief.VerbatimQuestions)]
	}
	tests := []struct {
		name      string
		probe     func(req ProbeRequest) (string, error)
		maxProbes int
		exact     int // exact probe count over the interview, -1 to skip
	}{
		{"RepeatsTheQuestion", func(req ProbeRequest) (string, error) { return req.Question, nil }, 0, 0},
		{"RewordsTheQuestion", func(req ProbeRequest) (string, error) {
			return "Great answer! " + strings.ToUpper(strings.TrimSuffix(req.Question, "?")) + " ... ?", nil
		}, 0, 0},
		{"JumpsAhead", func(req ProbeRequest) (string, error) { return next(req), nil }, 0, 0},
		{"FragmentOfQuestion", func(req ProbeRequest) (string, error) { return "what gets in the way", nil }, 0, 0},
		{"AsksTheScreener", func(req ProbeRequest) (string, error) { return "So, what is your role?", nil }, 0, 0},
		{"Huge", func(req ProbeRequest) (string, error) { return strings.Repeat("Tell me more. ", 30), nil }, 0, 0},
		{"Blank", func(req ProbeRequest) (string, error) { return " \n\t ", nil }, 0, 0},
		// The same follow-up is asked once in an interview, however often it is offered.
		{"NeverStops", func(req ProbeRequest) (string, error) { return "Why is that?", nil }, 1, 1},
		{"IgnoresProbesSoFar", func(req ProbeRequest) (string, error) {
			return "Follow-up number " + string(rune('1'+req.ProbesSoFar)) + "?", nil
		}, 2, 2},
		{"NewEachTime", func(req ProbeRequest) (string, error) {
			return "Follow-up " + strconv.Itoa(slices.Index(brief.VerbatimQuestions, req.Question)) + "." + strconv.Itoa(req.ProbesSoFar) + "?", nil
		}, 2, 2 * len(brief.VerbatimQuestions)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rogue := &rogueModerator{probe: tt.probe}
			run := runScript(t, rogue, brief, nil, "")
			checkScripted(t, run, brief.PreInterviewQuestions, brief.VerbatimQuestions, tt.maxProbes)
			probes := len(run.interviewer) - 2 - len(brief.PreInterviewQuestions) - len(brief.VerbatimQuestions)
			if tt.exact >= 0 && probes != tt.exact {
				t.Fatalf("%d probes, want %d: %q", probes, tt.exact, run.interviewer)
			}
			if rogue.calls > 2*len(brief.VerbatimQuestions) {
				t.Fatalf("engine asked for %d probes, more than 2 per verbatim question", rogue.calls)
			}
		})
	}
}

func TestScriptProbeTidied(t *testing.T) {
	brief := kv.Brief{VerbatimQuestions: []string{"How do you plan your week?"}}
	rogue := &rogueModerator{probe: func(ProbeRequest) (string, error) { return "  Could you\n say   more?  ", nil }}
	s := Script{Phase: PhaseVerbatim}
	msgs, next, done, err := s.Next(context.Background(), rogue, brief, nil, "", nil, "On paper.")
	if err != nil || done || !reflect.DeepEqual(msgs, []string{"Could you say more?"}) || next != (Script{Phase: PhaseVerbatim, Probes: 1, Asked: probeBit("could you say more")}) {
		t.Fatalf("Next = %q, %+v, %v, %v", msgs, next, done, err)
	}
}

func TestScriptEngineError(t *testing.T) {
	boom := errors.New("model unreachable")
	brief := kv.Brief{VerbatimQuestions: []string{"How do you plan your week?", "Why?"}}
	rogue := &rogueModerator{probe: func(ProbeRequest) (string, error) { return "", boom }}
	at := Script{Phase: PhaseVerbatim, Index: 0, Probes: 1}
	msgs, next, done, err := at.Next(context.Background(), rogue, brief, nil, "", nil, "On paper.")
	if !errors.Is(err, boom) || msgs != nil || done || next != at {
		t.Fatalf("Next = %q, %+v, %v, %v; want the engine's error and no move", msgs, next, done, err)
	}
}

func TestScriptProbeRequest(t *testing.T) {
	brief := kv.Brief{VerbatimQuestions: []string{"How do you plan your week?"}}
	facts := map[string]string{"plan": "pro"}
	transcript := []Message{{Speaker: "interviewer", Text: "How do you plan your week?"}, {Speaker: "participant", Text: "On paper."}}
	var got ProbeRequest
	rogue := &rogueModerator{probe: func(req ProbeRequest) (string, error) { got = req; return "", nil }}
	_, next, done, err := Script{Phase: PhaseVerbatim, Probes: 1}.Next(context.Background(), rogue, brief, facts, "dig into paper", transcript, "On paper.")
	if err != nil || !done || next.Phase != PhaseDone {
		t.Fatalf("Next = %+v, %v, %v", next, done, err)
	}
	want := ProbeRequest{Brief: brief, Question: "How do you plan your week?", Answer: "On paper.", ProbesSoFar: 1, Context: facts, Note: "dig into paper", Transcript: transcript,
		topicOpen: true} // the script has checked the answer does not close the topic
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("probe request = %+v, want %+v", got, want)
	}
}

func TestScriptEdges(t *testing.T) {
	ctx := context.Background()
	m := NewBuiltin()
	t.Run("EmptyBriefEndsAtOnce", func(t *testing.T) {
		msgs, next, done, err := Script{}.Next(ctx, m, kv.Brief{}, nil, "", nil, "")
		if err != nil || !done || !reflect.DeepEqual(msgs, []string{ScriptGreeting, ScriptClosing}) || next.Phase != PhaseDone {
			t.Fatalf("Next = %q, %+v, %v, %v", msgs, next, done, err)
		}
	})
	t.Run("DoneStaysDone", func(t *testing.T) {
		msgs, next, done, err := Script{Phase: PhaseDone}.Next(ctx, m, kv.Brief{VerbatimQuestions: []string{"Q?"}}, nil, "", nil, "hi")
		if err != nil || !done || msgs != nil || next.Phase != PhaseDone {
			t.Fatalf("Next = %q, %+v, %v, %v", msgs, next, done, err)
		}
	})
	t.Run("UnknownPhase", func(t *testing.T) {
		if _, _, _, err := (Script{Phase: "middle"}).Next(ctx, m, kv.Brief{}, nil, "", nil, ""); err == nil {
			t.Fatal("unknown phase accepted")
		}
	})
	t.Run("PositionPastTheBrief", func(t *testing.T) {
		msgs, _, done, err := Script{Phase: PhaseVerbatim, Index: 7}.Next(ctx, m, kv.Brief{VerbatimQuestions: []string{"Q?"}}, nil, "", nil, "yes")
		if err != nil || !done || !reflect.DeepEqual(msgs, []string{ScriptClosing}) {
			t.Fatalf("Next = %q, %v, %v", msgs, done, err)
		}
	})
	t.Run("ContextDone", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, _, _, err := (Script{}).Next(cctx, m, kv.Brief{}, nil, "", nil, ""); !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestScriptQuestion(t *testing.T) {
	brief := kv.Brief{PreInterviewQuestions: []string{"S1?"}, VerbatimQuestions: []string{"V1?", "V2?"}}
	tests := []struct {
		s    Script
		want string
	}{
		{Script{}, ""},
		{Script{Phase: PhaseScreener}, "S1?"},
		{Script{Phase: PhaseVerbatim, Index: 1, Probes: 2}, "V2?"},
		{Script{Phase: PhaseVerbatim, Index: 2}, ""},
		{Script{Phase: PhaseVerbatim, Index: -1}, ""},
		{Script{Phase: PhaseDone}, ""},
	}
	for _, tt := range tests {
		if got := tt.s.Question(brief); got != tt.want {
			t.Errorf("%+v.Question = %q, want %q", tt.s, got, tt.want)
		}
	}
}

func TestScriptJSON(t *testing.T) {
	raw, err := json.Marshal(Script{Phase: PhaseVerbatim, Index: 2, Probes: 1})
	if err != nil || string(raw) != `{"phase":"verbatim","index":2,"probes":1}` {
		t.Fatalf("Marshal = %s, %v", raw, err)
	}
	var zero Script
	if err := json.Unmarshal([]byte(`{}`), &zero); err != nil || zero != (Script{}) {
		t.Fatalf("Unmarshal({}) = %+v, %v", zero, err)
	}
}

// TestScriptOnward: moving on never asks the engine and never follows up: the opening
// at the start, the next scripted question word for word, the closing after the last.
func TestScriptOnward(t *testing.T) {
	brief := kv.Brief{PreInterviewQuestions: []string{"What is your role?"}, VerbatimQuestions: []string{"How do you plan your week?", "What gets in the way?"}}
	want := [][]string{{ScriptGreeting, "What is your role?"}, {"How do you plan your week?"}, {"What gets in the way?"}, {ScriptClosing}}
	s := Script{Asked: 1 << 7}
	for i, w := range want {
		msgs, next, done := s.Onward(brief, nil)
		if !slices.Equal(msgs, w) || done != (i == len(want)-1) || next.Asked != s.Asked {
			t.Fatalf("step %d: %q %+v %v, want %q", i, msgs, next, done, w)
		}
		s = next
	}
	if msgs, _, done := s.Onward(brief, nil); msgs != nil || !done {
		t.Fatalf("after the closing: %q %v", msgs, done)
	}
}
