package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/rs/zerolog"
	"github.com/valyala/fasthttp"

	"interviewd/kv"
	"interviewd/moderator"
	"interviewd/server/participant"
	"interviewd/server/pipeline"
	"interviewd/server/research"
)

// Questions with typography a careless engine would "fix": they must reach the
// participant byte for byte.
var trickyVerbatim = []string{
	"Walk me through the last time you planned a rota — step by step.",
	"What’s the single hardest part of that, and why?",
	"If you could change one thing about “handover notes”, what would it be?  ",
	"Anything else? (Say “no” if not.)",
}

const secretNote = "Dig into rota; NOTE-SECRET-7f3a: she complained about nights."

// answerFor is a participant's answer to the interviewer's last message: short enough
// that the built-in engine probes verbatim answers, and mentioning the note's subject.
func answerFor(i int) string {
	return fmt.Sprintf("Answer %d: the rota is on paper and it changes every week.", i)
}

func TestParticipantFullInterview(t *testing.T) {
	clock := &testClock{now: time.Date(2026, 5, 4, 9, 0, 0, 0, time.UTC)}
	e := mustServe(t, withClock(clock))
	title := "Ward rotas"
	minutes := 15
	brief := kv.Brief{
		Title: &title, Objectives: []string{"Learn how rotas are planned"},
		PreInterviewQuestions:    []string{"What is your role?", "How long have you worked on your ward?"},
		VerbatimQuestions:        trickyVerbatim,
		EstimatedDurationMinutes: &minutes,
	}
	st := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeLive, brief)
	token := e.linkFor(st, kv.AudiencePerson, map[string]string{"role": "ward nurse"}, secretNote)
	p := e.participant(token)
	opened, _ := p.open()
	if opened.Messages[1].Text != "How long have you worked on your ward?" {
		t.Fatalf("the screener the context answers was asked: %+v", opened.Messages)
	}

	answers, status := 0, kv.InterviewInProgress
	for status == kv.InterviewInProgress {
		if answers > 30 {
			t.Fatalf("interview did not end: %+v", p.seen)
		}
		clock.Advance(7 * time.Second)
		if answers == 2 {
			clock.Advance(10 * time.Minute) // a long pause counts as MaxGap
		}
		turn := p.mustSay(answerFor(answers))
		answers++
		if turn.Messages[0].Speaker != kv.SpeakerParticipant || turn.Messages[0].Text != answerFor(answers-1) || len(turn.Messages) < 2 {
			t.Fatalf("turn %d: %+v", answers, turn.Messages)
		}
		status = turn.Status
	}
	if status != kv.InterviewCompleted {
		t.Fatalf("ended %s", status)
	}

	t.Run("OK_QuestionsVerbatimInOrder", func(t *testing.T) {
		var asked []string
		for _, m := range p.seen {
			if m.Speaker == kv.SpeakerInterviewer && (slices.Contains(brief.PreInterviewQuestions, m.Text) || slices.Contains(trickyVerbatim, m.Text)) {
				asked = append(asked, m.Text)
			}
		}
		want := append([]string{"How long have you worked on your ward?"}, trickyVerbatim...)
		if !slices.Equal(asked, want) {
			t.Fatalf("asked %q\nwant %q", asked, want)
		}
		if p.seen[0].Text != moderator.ScriptGreeting || p.seen[len(p.seen)-1].Text != moderator.ScriptClosing {
			t.Fatalf("greeting/closing: %q … %q", p.seen[0].Text, p.seen[len(p.seen)-1].Text)
		}
	})
	t.Run("OK_ResumeShowsExactlyWhatWasSeen", func(t *testing.T) {
		seen := p.seen
		again, _ := p.open()
		if *again.Status != kv.InterviewCompleted || fmt.Sprint(again.Messages) != fmt.Sprint(seen) {
			t.Fatalf("transcript differs:\n%+v\n%+v", again.Messages, seen)
		}
	})
	t.Run("OK_InterviewsAPIShowsItCompleted", func(t *testing.T) {
		r := e.do("GET", "/v1/api/interviews?study_id="+st.ID.String(), "a_live", "")
		var got []research.Interview
		r.json(t, &got)
		// Every answer came 7 s after the question before it, one of them after a further
		// 10-minute pause (that gap counts 120 s); interviewer replies are instant.
		want := 7*(answers-1) + 120
		if len(got) != 1 || got[0].Status != kv.InterviewCompleted || !got[0].IsComplete || got[0].IsTest ||
			got[0].CompletedAt == nil || got[0].DurationSeconds == nil || *got[0].DurationSeconds != want || got[0].Modality != "text" {
			t.Fatalf("interview %s (want duration %d)", r.body, want)
		}
		if at, _ := got[0].CompletedAt.Parse(); !at.Equal(clock.Now()) {
			t.Fatalf("completed_at %s, now %s", *got[0].CompletedAt, clock.Now())
		}
	})
	t.Run("ErrFinished", func(t *testing.T) {
		r := p.say("One more thing!", "")
		if r.status != http.StatusConflict || !strings.Contains(string(r.body), `"code":"interview_finished"`) {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
	t.Run("OK_NoteNeverShown", func(t *testing.T) {
		for _, b := range p.bodies {
			if strings.Contains(b, "NOTE-SECRET") || strings.Contains(b, "complained") {
				t.Fatalf("a participant response shows the note: %s", b)
			}
		}
		page := e.do("GET", "/i/"+token, "", "")
		if strings.Contains(string(page.body), "NOTE-SECRET") || strings.Contains(string(page.body), "ward nurse") {
			t.Fatal("the page shows the note or the context")
		}
	})
}

func TestParticipantMessageErrors(t *testing.T) {
	e := mustServe(t)
	brief := plainBrief("Errors", "Q1?", "Q2?", "Q3?", "Q4?", "Q5?", "Q6?", "Q7?", "Q8?")
	st := e.studyWith(e.orgA.ID, kv.EnvTest, kv.ModeTest, brief)
	other := e.studyWith(e.orgA.ID, kv.EnvTest, kv.ModeTest, brief)
	p := e.participant(st.LinkToken)
	p.open()
	stranger := e.participant(other.LinkToken)
	stranger.open()
	long := strings.Repeat("é", participant.MaxAnswerChars)
	cases := []struct {
		name       string
		token      string
		session    string
		body       string
		wantStatus int
		wantBody   string
	}{
		{"ErrNoSession", st.LinkToken, "", `{"text":"hi"}`, 401, `"code":"invalid_session"`},
		{"ErrMalformedSession", st.LinkToken, "abc", `{"text":"hi"}`, 401, `"code":"invalid_session"`},
		{"ErrUnknownSession", st.LinkToken, participant.NewSessionSecret(), `{"text":"hi"}`, 401, `"code":"invalid_session"`},
		{"ErrSessionOfAnotherLink", st.LinkToken, stranger.session, `{"text":"hi"}`, 401, `"code":"invalid_session"`},
		{"ErrUnknownLink", kv.NewLinkToken(), p.session, `{"text":"hi"}`, 404, `"code":"not_found"`},
		{"ErrEmptyText", st.LinkToken, p.session, `{"text":""}`, 422, `{"detail":[{"loc":["body","text"],"msg":"String should have at least 1 character after trimming.","type":"string_too_short","ctx":{"min_length":1}}]}`},
		{"ErrBlankText", st.LinkToken, p.session, `{"text":" \n\t "}`, 422, `"type":"string_too_short"`},
		{"ErrTooLong", st.LinkToken, p.session, fmt.Sprintf(`{"text":%q}`, long+"x"), 422, `"loc":["body","text"],"msg":"String should have at most 10000 characters.","type":"string_too_long","ctx":{"max_length":10000}`},
		{"ErrMissingText", st.LinkToken, p.session, `{"modality":"text"}`, 422, `"loc":["body","text"],"msg":"Field required.","type":"missing"`},
		{"ErrModality", st.LinkToken, p.session, `{"text":"hi","modality":"video"}`, 422, `"loc":["body","modality"]`},
		{"ErrExtraField", st.LinkToken, p.session, `{"text":"hi","note":"x"}`, 422, `"type":"extra_forbidden"`},
		{"ErrBadJSON", st.LinkToken, p.session, `{"text":`, 422, `"type":"json_invalid"`},
		{"ErrTextNotString", st.LinkToken, p.session, `{"text":5}`, 422, `"type":"string_type"`},
		{"OK_TenThousandCharacters", st.LinkToken, p.session, fmt.Sprintf(`{"text":%q}`, long), 200, `"status":"in_progress"`},
		{"OK_TrimmedToTenThousand", st.LinkToken, p.session, fmt.Sprintf(`{"text":%q}`, "  "+long+"\n"), 200, `"status":"in_progress"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var h []string
			if c.session != "" {
				h = []string{participant.HeaderSession, c.session}
			}
			r := e.do("POST", "/i/"+c.token+"/messages", "", c.body, h...)
			if r.status != c.wantStatus || !strings.Contains(string(r.body), c.wantBody) {
				t.Fatalf("%d %s, want %d with %s", r.status, r.body, c.wantStatus, c.wantBody)
			}
			if r.status == 401 && r.header.Get("WWW-Authenticate") != `Session realm="interview"` {
				t.Fatalf("401 WWW-Authenticate %q", r.header.Get("WWW-Authenticate"))
			}
			if !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") || r.header.Get("Cache-Control") != "no-store" {
				t.Fatalf("headers %v", r.header)
			}
		})
	}
	t.Run("OK_RefusalsStoredNothing", func(t *testing.T) {
		tr, _ := e.db.FindTranscript(t.Context(), st.Partition(), e.interviewsOf(st)[0].ID)
		said := 0
		for _, m := range tr {
			if m.Speaker == kv.SpeakerParticipant {
				said++
				if m.Text != long {
					t.Fatalf("stored answer of %d characters, not trimmed to the 10,000 sent", len([]rune(m.Text)))
				}
			}
		}
		if said != 2 {
			t.Fatalf("%d answers stored, want the 2 accepted", said)
		}
	})
}

func TestParticipantVoice(t *testing.T) {
	e := mustServe(t)
	st := e.studyWith(e.orgA.ID, kv.EnvTest, kv.ModeTest, plainBrief("Voice", "Q1?", "Q2?", "Q3?"))
	p := e.participant(st.LinkToken)
	p.open()
	p.mustSay("Typed first.")
	if iv := e.interviewsOf(st)[0]; iv.Modality != kv.ModalityText {
		t.Fatalf("modality %s after a typed answer", iv.Modality)
	}
	if r := p.say("Then spoken.", "voice"); r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	p.mustSay("Typed again.")
	r := e.do("GET", "/v1/api/interviews/"+e.interviewsOf(st)[0].ID.String(), "a_test", "")
	if !strings.Contains(string(r.body), `"modality":"voice"`) {
		t.Fatalf("one spoken answer must make the interview voice: %s", r.body)
	}
}

func TestParticipantConcurrentPostsNeverInterleave(t *testing.T) {
	e := mustServe(t)
	var verbatim []string
	for i := range 40 {
		verbatim = append(verbatim, fmt.Sprintf("Question %d?", i+1))
	}
	st := e.studyWith(e.orgA.ID, kv.EnvTest, kv.ModeTest, plainBrief("Race", verbatim...))
	token := e.linkFor(st, kv.AudiencePerson, nil, "")
	first := e.participant(token)
	first.open()
	devices := []*participantClient{first}
	for range 3 {
		d := e.participant(token)
		d.open()
		devices = append(devices, d)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var turns [][]participant.ParticipantMessage
	for w := range 12 {
		wg.Go(func() {
			d := devices[w%len(devices)]
			for i := range 3 {
				r := e.do("POST", "/i/"+token+"/messages", "", fmt.Sprintf(`{"text":"w%d-%d"}`, w, i), participant.HeaderSession, d.session)
				if r.status != 200 {
					t.Errorf("%d %s", r.status, r.body)
					return
				}
				var out participant.ParticipantTurn
				if err := json.Unmarshal(r.body, &out); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				turns = append(turns, out.Messages)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	after, _ := first.open()
	got := after.Messages
	said := 0
	for _, m := range got {
		if m.Speaker == kv.SpeakerParticipant {
			said++
		}
	}
	if said != 36 || len(turns) != 36 {
		t.Fatalf("%d answers stored, %d accepted; want 36", said, len(turns))
	}
	// Each turn's messages sit together in the transcript, exactly as returned.
	for _, turn := range turns {
		i := slices.IndexFunc(got, func(m participant.ParticipantMessage) bool { return m == turn[0] })
		if i < 0 || i+len(turn) > len(got) || fmt.Sprint(got[i:i+len(turn)]) != fmt.Sprint(turn) {
			t.Fatalf("turn %+v is not contiguous in the transcript", turn)
		}
	}
	if n := e.srv.part.Turns.Held(); n != 0 {
		t.Fatalf("%d turn locks left behind", n)
	}
}

// TestParticipantEngineFailure runs the interviewer on an OpenAI-compatible endpoint
// that fails: the interview ends failed, the answer is kept, and nothing more is taken.
func TestParticipantEngineFailure(t *testing.T) {
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, `{"error":{"message":"overloaded"}}`, http.StatusInternalServerError)
	}))
	defer fake.Close()
	engine, err := moderator.NewOpenAI(moderator.OpenAIConfig{URL: fake.URL + "/v1", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	e := mustServeEngine(t, engine)
	brief := kv.Brief{Title: ptrTo("Failing"), PreInterviewQuestions: []string{"What is your role?"}, VerbatimQuestions: []string{"How do you plan?", "Why?"}}
	st := e.studyWith(e.orgA.ID, kv.EnvTest, kv.ModeTest, brief)
	p := e.participant(st.LinkToken)
	p.open()
	if turn := p.mustSay("Nurse."); turn.Status != kv.InterviewInProgress { // screener: no engine call
		t.Fatalf("screener turn %+v", turn)
	}
	turn := p.mustSay("On paper.")
	if turn.Status != kv.InterviewFailed || len(turn.Messages) != 1 || turn.Messages[0].Text != "On paper." {
		t.Fatalf("failed turn %+v", turn)
	}
	iv := e.interviewsOf(st)[0]
	if iv.Status != kv.InterviewFailed || iv.CompletedAt != nil {
		t.Fatalf("interview %+v", iv)
	}
	if r := p.say("Hello?", ""); r.status != http.StatusConflict {
		t.Fatalf("after failure: %d %s", r.status, r.body)
	}
	if again, _ := p.open(); *again.Status != kv.InterviewFailed || again.Messages[len(again.Messages)-1].Text != "On paper." {
		t.Fatalf("resume after failure %+v", again)
	}
}

// TestParticipantKeepsDesignVersion refines a live study mid-interview: the interview
// under way keeps the questions it started with; a new one gets the new version.
func TestParticipantKeepsDesignVersion(t *testing.T) {
	e := mustServe(t)
	st := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeLive, plainBrief("Versions", "How do you plan your week?", "What gets in the way?"))
	early := e.participant(st.LinkToken)
	early.open()
	_, refined := e.mustAuthor("a_live", "/v1/api/studies/"+st.ID.String()+":refine", `{"guidance":"Add a question about pricing."}`)
	if refined.Status != "ready" || len(refined.Brief.VerbatimQuestions) != 3 {
		t.Fatalf("refine: %+v", refined)
	}
	added := refined.Brief.VerbatimQuestions[2]
	for status := kv.InterviewInProgress; status == kv.InterviewInProgress; {
		status = early.mustSay("It depends on the week.").Status
		if len(early.seen) > 20 {
			t.Fatal("interview did not end")
		}
	}
	for _, m := range early.seen {
		if m.Text == added {
			t.Fatalf("the interview under way was asked the refined question %q", added)
		}
	}
	late := e.participant(st.LinkToken)
	late.open()
	for status := kv.InterviewInProgress; status == kv.InterviewInProgress; {
		status = late.mustSay("It depends on the week.").Status
		if len(late.seen) > 20 {
			t.Fatal("interview did not end")
		}
	}
	if !slices.ContainsFunc(late.seen, func(m participant.ParticipantMessage) bool { return m.Text == added }) {
		t.Fatalf("a new interview was not asked the refined question %q", added)
	}
	versions := map[int]int{}
	for _, iv := range e.interviewsOf(st) {
		versions[iv.DesignVersion]++
	}
	if versions[1] != 1 || versions[2] != 1 {
		t.Fatalf("design versions %v", versions)
	}
}

func ptrTo[T any](v T) *T { return &v }

// TestParticipantOpeningRaces opens a fresh person link from many devices at once: one
// interview, greeted once.
func TestParticipantOpeningRaces(t *testing.T) {
	e := mustServe(t)
	st := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeLive, plainBrief("Race to open", "Q1?", "Q2?"))
	token := e.linkFor(st, kv.AudiencePerson, nil, "")
	before := e.credits(e.orgA.ID)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			r := e.do("POST", "/i/"+token+"/session", "", "")
			if r.status != 200 {
				t.Errorf("%d %s", r.status, r.body)
			}
		})
	}
	wg.Wait()
	ivs := e.interviewsOf(st)
	if len(ivs) != 1 || before-e.credits(e.orgA.ID) != 1 {
		t.Fatalf("%d interviews, %d credits spent", len(ivs), before-e.credits(e.orgA.ID))
	}
	tr, _ := e.db.FindTranscript(t.Context(), st.Partition(), ivs[0].ID)
	if len(tr) != 2 || tr[0].Text != moderator.ScriptGreeting || tr[1].Text != "Q1?" {
		t.Fatalf("transcript %+v", tr)
	}
}

// TestParticipantAnswerBeforeOpening answers an interview that was opened without its
// opening being said (opened straight through the store): the opening comes first.
func TestParticipantAnswerBeforeOpening(t *testing.T) {
	e := mustServe(t)
	st := e.studyWith(e.orgA.ID, kv.EnvTest, kv.ModeTest, plainBrief("Unopened", "Q1?", "Q2?"))
	session := participant.NewSessionSecret()
	e.mustOpen(st.LinkToken, session)
	p := &participantClient{e: e, token: st.LinkToken, session: session}
	turn := p.mustSay("Hello?")
	var said []string
	for _, m := range turn.Messages {
		said = append(said, m.Speaker+": "+m.Text)
	}
	if len(said) < 4 || said[0] != "interviewer: "+moderator.ScriptGreeting || said[1] != "interviewer: Q1?" || said[2] != "participant: Hello?" {
		t.Fatalf("turn %q", said)
	}
	if again, _ := p.open(); fmt.Sprint(again.Messages) != fmt.Sprint(turn.Messages) {
		t.Fatalf("stored %+v, returned %+v", again.Messages, turn.Messages)
	}
}

// TestParticipantSecureCookie checks the cookie of an instance served over https.
func TestParticipantSecureCookie(t *testing.T) {
	db := mustOpenDB(t)
	org, _, err := db.CreateOrg(t.Context(), kv.OrgInput{Name: "TLS", Email: "tls@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := db.CreateStudy(t.Context(), kv.StudyInput{Partition: kv.Partition{Org: org.ID, Env: kv.EnvTest}, Brief: plainBrief("TLS", "Q?")})
	if err != nil {
		t.Fatal(err)
	}
	off := pipeline.RateLimits{Off: true}
	srv := New(Config{DB: db, Log: zerolog.Nop(), BaseURL: "https://interviews.example.com", RateLimits: &off})
	defer srv.Shutdown(context.Background())
	var c fasthttp.RequestCtx
	c.Request.Header.SetMethod("POST")
	c.Request.SetRequestURI("/i/" + st.LinkToken + "/session")
	srv.Handler()(&c)
	ck := string(c.Response.Header.Peek("Set-Cookie"))
	if c.Response.StatusCode() != 200 || !strings.Contains(ck, "; secure") || !strings.Contains(ck, "HttpOnly") {
		t.Fatalf("%d Set-Cookie %q", c.Response.StatusCode(), ck)
	}
}
