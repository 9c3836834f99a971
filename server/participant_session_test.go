package server

import (
	"testing"

	"interviewd/kv"
)

// TestParticipantSessionNewEqualsResumed: the answer that starts an interview is made
// from what starting it stored, without reading it back; reopening the session reads
// the interview from the store, and must answer byte for byte the same.
func TestParticipantSessionNewEqualsResumed(t *testing.T) {
	e := mustServe(t)
	title := "Ward rotas"
	screened := kv.Brief{
		Title: &title, Objectives: []string{"Learn how rotas are planned"},
		PreInterviewQuestions: []string{"What is your role?", "How long have you worked on your ward?"},
		VerbatimQuestions:     []string{"How do you plan a rota?", "What gets in the way?"},
	}
	live := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeLive, screened)
	rehearsal := e.studyWith(e.orgA.ID, kv.EnvTest, kv.ModeTest, plainBrief("Rehearsal", "Why?"))
	empty := e.studyWith(e.orgA.ID, kv.EnvTest, kv.ModeTest, plainBrief("No questions"))
	for name, token := range map[string]string{
		"PersonLinkWithContext": e.linkFor(live, kv.AudiencePerson, map[string]string{"role": "ward nurse"}, "ask about weekends"),
		"GroupLink":             e.linkFor(live, kv.AudienceGroup, nil, ""),
		"PlainRehearsal":        e.linkFor(rehearsal, "", nil, ""),
		"NoQuestions":           e.linkFor(empty, "", nil, ""),
	} {
		t.Run("OK_"+name, func(t *testing.T) {
			p := e.participant(token)
			started, r := p.open()
			if started.Session == nil || len(started.Messages) != 2 {
				t.Fatalf("started %s", r.body)
			}
			_, again := p.open()
			if string(again.body) != string(r.body) {
				t.Fatalf("started:\n%s\nreopened:\n%s", r.body, again.body)
			}
		})
	}
}
