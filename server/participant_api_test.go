package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"interviewd/kv"
	"interviewd/moderator"
	"interviewd/server/participant"
)

// participant is one browser or device talking to a link's JSON API with its session.
type participantClient struct {
	e       *testEnv
	token   string
	session string
	seen    []participant.ParticipantMessage // every message this participant was shown, in order
	bodies  []string                         // every raw answer, to check nothing private leaks
}

func (e *testEnv) participant(token string) *participantClient {
	return &participantClient{e: e, token: token}
}

func (p *participantClient) headers() []string {
	if p.session == "" {
		return nil
	}
	return []string{participant.HeaderSession, p.session}
}

// open posts /session (resuming with its session, if any) and expects 200.
func (p *participantClient) open() (participant.ParticipantSession, response) {
	p.e.t.Helper()
	r := p.e.do("POST", "/i/"+p.token+"/session", "", "", p.headers()...)
	p.bodies = append(p.bodies, string(r.body))
	if r.status != 200 {
		p.e.t.Fatalf("open %s: %d %s", p.token, r.status, r.body)
	}
	var out participant.ParticipantSession
	r.json(p.e.t, &out)
	if out.Session != nil {
		p.session = *out.Session
		p.seen = append([]participant.ParticipantMessage(nil), out.Messages...)
	}
	return out, r
}

// say posts one answer and returns the raw response.
func (p *participantClient) say(text, modality string) response {
	p.e.t.Helper()
	body := fmt.Sprintf(`{"text":%q}`, text)
	if modality != "" {
		body = fmt.Sprintf(`{"text":%q,"modality":%q}`, text, modality)
	}
	r := p.e.do("POST", "/i/"+p.token+"/messages", "", body, p.headers()...)
	p.bodies = append(p.bodies, string(r.body))
	return r
}

// mustSay posts an answer, expects 200 and records what was shown.
func (p *participantClient) mustSay(text string) participant.ParticipantTurn {
	p.e.t.Helper()
	r := p.say(text, "")
	if r.status != 200 {
		p.e.t.Fatalf("say %q: %d %s", text, r.status, r.body)
	}
	var out participant.ParticipantTurn
	r.json(p.e.t, &out)
	p.seen = append(p.seen, out.Messages...)
	return out
}

// studyWith creates a study with brief in org's env, moved to mode.
func (e *testEnv) studyWith(org kv.ID, env kv.Environment, mode kv.Mode, brief kv.Brief) kv.Study {
	e.t.Helper()
	p := kv.Partition{Org: org, Env: env}
	st, err := e.db.CreateStudy(context.Background(), kv.StudyInput{Partition: p, Brief: brief})
	if err != nil {
		e.t.Fatal(err)
	}
	if mode == kv.ModePaused {
		e.mustMode(p, st.ID, kv.ModeLive)
	}
	if mode != kv.ModeTest {
		st = e.mustMode(p, st.ID, mode)
	}
	return st
}

func (e *testEnv) mustMode(p kv.Partition, id kv.ID, mode kv.Mode) kv.Study {
	e.t.Helper()
	st, err := e.db.SetStudyMode(context.Background(), p, id, mode)
	if err != nil {
		e.t.Fatal(err)
	}
	return st
}

// linkFor returns the token of a new participant link ("" audience: the plain link).
func (e *testEnv) linkFor(st kv.Study, audience string, context map[string]string, note string) string {
	e.t.Helper()
	if audience == "" {
		return st.LinkToken
	}
	req, err := kv.ValidateLinkRequest(kv.LinkRequest{Audience: audience, Context: context, Note: note})
	if err != nil {
		e.t.Fatal(err)
	}
	l, _, err := e.db.CreateParticipantLink(e.t.Context(), st.Partition(), st.ID, req, kv.NewLinkToken(), nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return l.Token
}

func (e *testEnv) interviewsOf(st kv.Study) []kv.Interview {
	e.t.Helper()
	page, err := e.db.FindInterviews(e.t.Context(), kv.InterviewFilter{Partition: st.Partition(), StudyID: &st.ID, Limit: 200})
	if err != nil {
		e.t.Fatal(err)
	}
	return page.Items
}

func (e *testEnv) credits(org kv.ID) int {
	e.t.Helper()
	o, err := e.db.FindOrgByID(e.t.Context(), org)
	if err != nil {
		e.t.Fatal(err)
	}
	return o.Credits
}

func plainBrief(title string, verbatim ...string) kv.Brief {
	return kv.Brief{Title: &title, Objectives: []string{"Learn"}, VerbatimQuestions: verbatim}
}

func TestParticipantOpenModesAndCredits(t *testing.T) {
	e := mustServe(t)
	brief := plainBrief("Rotas", "How do you plan your week?")
	cases := []struct {
		name        string
		org         kv.ID
		env         kv.Environment
		mode        kv.Mode
		audience    string
		wantState   string
		wantIsTest  bool
		wantSpent   int
		wantStarted bool
	}{
		{"OK_TestModeRehearsal", e.orgA.ID, kv.EnvLive, kv.ModeTest, "", kv.LinkOpen, true, 0, true},
		{"OK_LiveGroupSpendsOneCredit", e.orgA.ID, kv.EnvLive, kv.ModeLive, kv.AudienceGroup, kv.LinkOpen, false, 1, true},
		{"OK_LivePersonSpendsOneCredit", e.orgA.ID, kv.EnvLive, kv.ModeLive, kv.AudiencePerson, kv.LinkOpen, false, 1, true},
		{"OK_LivePlainSpendsOneCredit", e.orgA.ID, kv.EnvLive, kv.ModeLive, "", kv.LinkOpen, false, 1, true},
		{"OK_TestEnvironmentLiveStudyIsFree", e.orgB.ID, kv.EnvTest, kv.ModeLive, kv.AudienceGroup, kv.LinkOpen, false, 0, true},
		{"OK_PausedCreatesNothing", e.orgA.ID, kv.EnvLive, kv.ModePaused, kv.AudiencePerson, kv.LinkPaused, false, 0, false},
		{"OK_ClosedCreatesNothing", e.orgA.ID, kv.EnvLive, kv.ModeClosed, "", kv.LinkClosed, false, 0, false},
		{"OK_NoCreditsUnavailable", e.orgB.ID, kv.EnvLive, kv.ModeLive, "", kv.LinkUnavailable, false, 0, false},
		{"OK_NoCreditsUnavailablePerson", e.orgB.ID, kv.EnvLive, kv.ModeLive, kv.AudiencePerson, kv.LinkUnavailable, false, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := e.studyWith(c.org, c.env, c.mode, brief)
			token := e.linkFor(st, c.audience, nil, "")
			before := e.credits(c.org)
			got, r := e.participant(token).open()
			if got.State != c.wantState {
				t.Fatalf("state %q, want %q: %s", got.State, c.wantState, r.body)
			}
			if spent := before - e.credits(c.org); spent != c.wantSpent {
				t.Fatalf("spent %d credits, want %d", spent, c.wantSpent)
			}
			ivs := e.interviewsOf(st)
			if !c.wantStarted {
				if got.Session != nil || got.Status != nil || len(got.Messages) != 0 || !strings.Contains(string(r.body), `"messages":[]`) ||
					len(ivs) != 0 || r.header.Get("Set-Cookie") != "" {
					t.Fatalf("state %s created something: %s, %d interviews", got.State, r.body, len(ivs))
				}
				return
			}
			if got.Session == nil || len(*got.Session) != 43 || got.Status == nil || *got.Status != kv.InterviewInProgress {
				t.Fatalf("open session: %s", r.body)
			}
			if len(got.Messages) != 2 || got.Messages[0].Text != moderator.ScriptGreeting || got.Messages[1].Text != "How do you plan your week?" ||
				got.Messages[0].Speaker != kv.SpeakerInterviewer || got.Messages[0].At == "" {
				t.Fatalf("opening messages: %+v", got.Messages)
			}
			if len(ivs) != 1 || ivs[0].IsTest != c.wantIsTest || ivs[0].Status != kv.InterviewInProgress || ivs[0].DurationSeconds != nil {
				t.Fatalf("interviews %+v", ivs)
			}
			wantAudience := c.audience
			if got := ivs[0].InviteAudience; (got == nil) != (wantAudience == "") || (got != nil && *got != wantAudience) {
				t.Fatalf("invite_audience %v, want %q", got, wantAudience)
			}
			ck := r.header.Get("Set-Cookie")
			if !strings.HasPrefix(ck, participant.SessionCookieName(token)+"="+*got.Session+";") {
				t.Fatalf("Set-Cookie %q", ck)
			}
			for _, part := range []string{"path=/i/" + strings.ToLower(token), "httponly", "samesite=lax", "max-age=2592000"} {
				if !strings.Contains(strings.ToLower(ck), part) {
					t.Fatalf("Set-Cookie %q lacks %q", ck, part)
				}
			}
			if strings.Contains(ck, "Secure") {
				t.Fatalf("Secure cookie for an http base URL: %q", ck)
			}
			for _, h := range []string{"Cache-Control", "X-Content-Type-Options", "Referrer-Policy"} {
				if r.header.Get(h) == "" {
					t.Fatalf("no %s header", h)
				}
			}
		})
	}
}

func TestParticipantAudiences(t *testing.T) {
	e := mustServe(t)
	brief := plainBrief("Audiences", "How do you plan your week?", "What gets in the way?", "What would you change?")

	t.Run("OK_GroupSessionResumesNewSessionStartsAnother", func(t *testing.T) {
		st := e.studyWith(e.orgA.ID, kv.EnvTest, kv.ModeTest, brief)
		token := e.linkFor(st, kv.AudienceGroup, map[string]string{"segment": "nurses"}, "")
		a := e.participant(token)
		a.open()
		a.mustSay("Mostly on paper.")
		again, _ := a.open()
		if len(again.Messages) != len(a.seen) || len(again.Messages) < 4 {
			t.Fatalf("resume shows %d messages, %d were seen", len(again.Messages), len(a.seen))
		}
		b := e.participant(token)
		first, _ := b.open()
		if *first.Session == a.session || len(first.Messages) != 2 {
			t.Fatalf("a new visitor continued someone else's interview: %+v", first)
		}
		ivs := e.interviewsOf(st)
		if len(ivs) != 2 || ivs[0].EntryAttributes["segment"] != "nurses" || *ivs[0].InviteAudience != kv.AudienceGroup {
			t.Fatalf("interviews %+v", ivs)
		}
	})
	t.Run("OK_CookieResumes", func(t *testing.T) {
		st := e.studyWith(e.orgA.ID, kv.EnvTest, kv.ModeTest, brief)
		a := e.participant(st.LinkToken)
		a.open()
		a.mustSay("On a spreadsheet.")
		cookie := participant.SessionCookieName(st.LinkToken) + "=" + a.session
		r := e.do("POST", "/i/"+st.LinkToken+"/session", "", "", "Cookie", cookie)
		var got participant.ParticipantSession
		r.json(t, &got)
		if r.status != 200 || *got.Session != a.session || len(got.Messages) != len(a.seen) {
			t.Fatalf("cookie resume: %s", r.body)
		}
		r = e.do("POST", "/i/"+st.LinkToken+"/messages", "", `{"text":"Every Monday."}`, "Cookie", cookie)
		if r.status != 200 {
			t.Fatalf("cookie message: %d %s", r.status, r.body)
		}
		if n := len(e.interviewsOf(st)); n != 1 {
			t.Fatalf("%d interviews", n)
		}
	})
	t.Run("OK_PersonLinkSameInterviewFromAnyDevice", func(t *testing.T) {
		st := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeLive, brief)
		token := e.linkFor(st, kv.AudiencePerson, map[string]string{"crm_id": "c-42"}, "")
		before := e.credits(e.orgA.ID)
		phone := e.participant(token)
		phone.open()
		phone.mustSay("On paper.")
		laptop := e.participant(token)
		got, _ := laptop.open()
		if *got.Session == phone.session {
			t.Fatal("a second device got the first device's session")
		}
		if len(got.Messages) != len(phone.seen) || got.Messages[2].Text != "On paper." {
			t.Fatalf("second device sees %+v, first saw %+v", got.Messages, phone.seen)
		}
		laptop.mustSay("Sometimes in a shared calendar.")
		phone.mustSay("That's all.")
		ivs := e.interviewsOf(st)
		if len(ivs) != 1 || ivs[0].EntryAttributes["crm_id"] != "c-42" || *ivs[0].InviteAudience != kv.AudiencePerson {
			t.Fatalf("interviews %+v", ivs)
		}
		if spent := before - e.credits(e.orgA.ID); spent != 1 {
			t.Fatalf("spent %d credits for one interview", spent)
		}
		tr, _ := e.db.FindTranscript(t.Context(), st.Partition(), ivs[0].ID)
		var said []string
		for _, m := range tr {
			if m.Speaker == kv.SpeakerParticipant {
				said = append(said, m.Text)
			}
		}
		if fmt.Sprint(said) != "[On paper. Sometimes in a shared calendar. That's all.]" {
			t.Fatalf("participant said %q", said)
		}
	})
	t.Run("OK_OneCreditThenUnavailableForNewSessions", func(t *testing.T) {
		org, _, err := e.db.CreateOrg(t.Context(), kv.OrgInput{Name: "One credit", Email: "one@example.com", Credits: 1})
		if err != nil {
			t.Fatal(err)
		}
		st := e.studyWith(org.ID, kv.EnvLive, kv.ModeLive, brief)
		first := e.participant(st.LinkToken)
		if got, _ := first.open(); got.State != kv.LinkOpen {
			t.Fatalf("first: %+v", got)
		}
		if got, _ := e.participant(st.LinkToken).open(); got.State != kv.LinkUnavailable || got.Session != nil {
			t.Fatalf("second: %+v", got)
		}
		if got, _ := first.open(); got.State != kv.LinkOpen || *got.Session != first.session {
			t.Fatalf("the first participant could not resume: %+v", got)
		}
		first.mustSay("Fine.")
		if n, c := len(e.interviewsOf(st)), e.credits(org.ID); n != 1 || c != 0 {
			t.Fatalf("%d interviews, %d credits", n, c)
		}
	})
	t.Run("OK_UnderWayContinuesWhenPaused", func(t *testing.T) {
		st := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeLive, brief)
		a := e.participant(st.LinkToken)
		a.open()
		e.mustMode(st.Partition(), st.ID, kv.ModePaused)
		a.mustSay("Still here.")
		if got, _ := e.participant(st.LinkToken).open(); got.State != kv.LinkPaused {
			t.Fatalf("new visitor while paused: %+v", got)
		}
	})
	t.Run("OK_MalformedSessionGetsANewOne", func(t *testing.T) {
		st := e.studyWith(e.orgA.ID, kv.EnvTest, kv.ModeTest, brief)
		r := e.do("POST", "/i/"+st.LinkToken+"/session", "", "", participant.HeaderSession, "short")
		var got participant.ParticipantSession
		r.json(t, &got)
		if r.status != 200 || got.Session == nil || *got.Session == "short" || len(*got.Session) != 43 {
			t.Fatalf("%s", r.body)
		}
	})
	t.Run("ErrUnknownLink", func(t *testing.T) {
		for _, token := range []string{kv.NewLinkToken(), "short", "has%20space%20in%20it%20xx"} {
			r := e.do("POST", "/i/"+token+"/session", "", "")
			if r.status != http.StatusNotFound || !strings.Contains(string(r.body), `"code":"not_found"`) {
				t.Fatalf("%s: %d %s", token, r.status, r.body)
			}
		}
	})
}
