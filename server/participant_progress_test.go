package server

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"interviewd/kv"
	"interviewd/moderator"
	"interviewd/server/participant"
)

// skip posts /skip for p and expects 200.
func (p *participantClient) skip() participant.ParticipantTurn {
	p.e.t.Helper()
	r := p.e.do("POST", "/i/"+p.token+"/skip", "", "", p.headers()...)
	p.bodies = append(p.bodies, string(r.body))
	if r.status != 200 {
		p.e.t.Fatalf("skip: %d %s", r.status, r.body)
	}
	var out participant.ParticipantTurn
	r.json(p.e.t, &out)
	p.seen = append(p.seen, out.Messages...)
	return out
}

func progressString(p *participant.ParticipantProgress) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprintf("%d/%d", p.Question, p.Total)
}

func TestParticipantProgressAndSkip(t *testing.T) {
	e := mustServe(t)
	title := "Ward rotas"
	brief := kv.Brief{
		Title: &title, Objectives: []string{"Learn how rotas are planned"},
		PreInterviewQuestions: []string{"What is your role?", "How long have you worked on your ward?"},
		VerbatimQuestions:     []string{"How do you plan a rota?", "What gets in the way?", "Is there anything else you would like to share?"},
	}
	st := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeLive, brief)
	token := e.linkFor(st, kv.AudiencePerson, map[string]string{"role": "ward nurse"}, "")
	p := e.participant(token)
	opened, r := p.open()
	// The context answers the first screener question: 4 questions are asked.
	if got := progressString(opened.Progress); got != "1/4" || opened.Rehearsal || !strings.Contains(string(r.body), `"progress":{"question":1,"total":4}`) {
		t.Fatalf("opened at %s, rehearsal %v: %s", got, opened.Rehearsal, r.body)
	}

	t.Run("OK_SkipScreener", func(t *testing.T) {
		turn := p.skip()
		want := []string{moderator.SkippedAnswer, moderator.ScriptSkipped, "How do you plan a rota?"}
		var got []string
		for _, m := range turn.Messages {
			got = append(got, m.Text)
		}
		if !slices.Equal(got, want) || turn.Messages[0].Speaker != kv.SpeakerParticipant || progressString(turn.Progress) != "2/4" {
			t.Fatalf("skip: %q at %s", got, progressString(turn.Progress))
		}
	})
	t.Run("OK_FollowUpKeepsTheNumber", func(t *testing.T) {
		turn := p.mustSay("On paper.") // short: the built-in interviewer follows up
		if len(turn.Messages) != 2 || slices.Contains(brief.VerbatimQuestions, turn.Messages[1].Text) || progressString(turn.Progress) != "2/4" {
			t.Fatalf("follow-up turn %+v at %s", turn.Messages, progressString(turn.Progress))
		}
		turn = p.mustSay("Every Monday, with a spreadsheet and a lot of phone calls to the team.")
		if turn.Messages[1].Text != "What gets in the way?" || progressString(turn.Progress) != "3/4" {
			t.Fatalf("next question %+v at %s", turn.Messages, progressString(turn.Progress))
		}
	})
	t.Run("OK_SkipVerbatimNoFollowUp", func(t *testing.T) {
		turn := p.skip()
		if last := turn.Messages[len(turn.Messages)-1].Text; last != brief.VerbatimQuestions[2] || progressString(turn.Progress) != "4/4" {
			t.Fatalf("after skipping: %+v at %s", turn.Messages, progressString(turn.Progress))
		}
	})
	t.Run("OK_ClosingAnswerEnds", func(t *testing.T) {
		turn := p.mustSay("No, that's everything.")
		if turn.Status != kv.InterviewCompleted || len(turn.Messages) != 2 || turn.Messages[1].Text != moderator.ScriptClosing || turn.Progress != nil {
			t.Fatalf("after a closing answer: %s %+v at %s", turn.Status, turn.Messages, progressString(turn.Progress))
		}
		again, r := p.open()
		if again.Progress != nil || !strings.Contains(string(r.body), `"progress":null`) {
			t.Fatalf("finished interview progress: %s", r.body)
		}
	})
	t.Run("OK_ExportShowsSkipped", func(t *testing.T) {
		tr, err := e.db.FindTranscript(t.Context(), st.Partition(), e.interviewsOf(st)[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, m := range tr {
			if m.Speaker == kv.SpeakerParticipant && m.Text == moderator.SkippedAnswer {
				n++
			}
		}
		if n != 2 {
			t.Fatalf("%d skips stored, want 2: %+v", n, tr)
		}
	})
	t.Run("ErrSkipFinished", func(t *testing.T) {
		r := e.do("POST", "/i/"+token+"/skip", "", "", p.headers()...)
		if r.status != http.StatusConflict || !strings.Contains(string(r.body), `"code":"interview_finished"`) {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
	t.Run("ErrSkipWithoutSession", func(t *testing.T) {
		r := e.do("POST", "/i/"+token+"/skip", "", "")
		if r.status != http.StatusUnauthorized {
			t.Fatalf("%d %s", r.status, r.body)
		}
		r = e.do("POST", "/i/"+kv.NewLinkToken()+"/skip", "", "", p.headers()...)
		if r.status != http.StatusUnauthorized && r.status != http.StatusNotFound {
			t.Fatalf("unknown link: %d %s", r.status, r.body)
		}
	})
	t.Run("OK_Rehearsal", func(t *testing.T) {
		rehearsal := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeTest, brief)
		got, _ := e.participant(rehearsal.LinkToken).open()
		if !got.Rehearsal || progressString(got.Progress) != "1/5" {
			t.Fatalf("rehearsal %v at %s", got.Rehearsal, progressString(got.Progress))
		}
	})
}
