package moderator

import (
	"context"
	"errors"
	"strings"
	"testing"

	"interviewd/kv"
)

// simulate plays the brief's questions to the built-in participant and returns the replies.
func simulate(tb testing.TB, persona string, seed int64, brief kv.Brief) []string {
	tb.Helper()
	var transcript []Message
	var replies []string
	questions := append(append([]string{}, brief.PreInterviewQuestions...), brief.VerbatimQuestions...)
	for _, q := range append(questions, "Could you tell me more about that?", ScriptClosing) {
		transcript = append(transcript, Message{Speaker: "interviewer", Text: q})
		r, err := NewBuiltin().Participant(context.Background(), ParticipantRequest{Persona: persona, Seed: seed, Brief: brief, Transcript: transcript})
		if err != nil {
			tb.Fatal(err)
		}
		if strings.TrimSpace(r) == "" || r != strings.TrimSpace(r) {
			tb.Fatalf("reply to %q is blank or untrimmed: %q", q, r)
		}
		transcript = append(transcript, Message{Speaker: "participant", Text: r})
		replies = append(replies, r)
	}
	return replies
}

func TestBuiltinParticipantPersona(t *testing.T) {
	brief := mustDraft(t, "Interview nurses about night shifts")
	persona := "A 34-year-old nurse who works night shifts and is sceptical of new apps"
	replies := simulate(t, persona, 7, brief)

	if !strings.Contains(replies[0], "I'm a nurse") {
		t.Errorf("role answer %q does not give the persona's job", replies[0])
	}
	all := strings.Join(replies, " ")
	for _, detail := range []string{"I work night shifts", "sceptical of new apps"} {
		if !strings.Contains(all, detail) {
			t.Errorf("no reply mentions %q:\n%s", detail, strings.Join(replies, "\n"))
		}
	}
	distinct := map[string]bool{}
	for _, r := range replies {
		distinct[r] = true
	}
	if len(distinct) < len(replies)-1 {
		t.Errorf("replies repeat: %d distinct of %d:\n%s", len(distinct), len(replies), strings.Join(replies, "\n"))
	}
	if f := strings.ToLower(replies[1]); !strings.Contains(f, "often") && !strings.Contains(f, "week") && !strings.Contains(f, "day") && !strings.Contains(f, "daily") && !strings.Contains(f, "month") {
		t.Errorf("frequency question got %q", replies[1])
	}
	if last := replies[len(replies)-1]; !strings.Contains(strings.ToLower(last), "welcome") && !strings.Contains(last, "help") && !strings.Contains(last, "useful") {
		t.Errorf("thank-you got %q", last)
	}
}

func TestBuiltinParticipantDeterministic(t *testing.T) {
	brief := mustDraft(t, "Understand why customers cancel their subscriptions")
	a := simulate(t, "", 42, brief)
	b := simulate(t, "", 42, brief)
	if strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Fatalf("same seed, different replies:\n%q\n%q", a, b)
	}
	c := simulate(t, "", 43, brief)
	if strings.Join(a, "\n") == strings.Join(c, "\n") {
		t.Fatalf("seeds 42 and 43 gave the same interview")
	}
}

func TestInventPersona(t *testing.T) {
	distinct := map[string]bool{}
	for seed := int64(-5); seed < 20; seed++ {
		p := InventPersona(seed)
		if p != InventPersona(seed) {
			t.Fatalf("seed %d gives different personas", seed)
		}
		if !strings.Contains(p, "-year-old") || !strings.Contains(p, " who ") || !strings.HasSuffix(p, ".") {
			t.Fatalf("persona %q is not a person description", p)
		}
		got := parsePersona(p)
		if got.role == "" || len(got.facts) < 2 {
			t.Fatalf("persona %q reads as role %q, facts %q", p, got.role, got.facts)
		}
		distinct[p] = true
	}
	if len(distinct) < 20 {
		t.Fatalf("25 seeds gave only %d personas", len(distinct))
	}
}

func TestBuiltinParticipantInventedRole(t *testing.T) {
	brief := mustDraft(t, "Interview nurses about night shifts")
	for seed := int64(0); seed < 5; seed++ {
		role := parsePersona(InventPersona(seed)).role
		if r := simulate(t, "", seed, brief)[0]; !strings.Contains(r, role) {
			t.Fatalf("seed %d: role answer %q does not name the invented job %q", seed, r, role)
		}
	}
}

func TestParsePersona(t *testing.T) {
	tests := []struct {
		persona, role string
		facts         []string
		tone          int
	}{
		{"A 34-year-old nurse who works night shifts and is sceptical of new apps", "nurse", []string{"I work night shifts", "I'm sceptical of new apps"}, -1},
		{"Maya, a secondary school teacher who studies part time and loves gadgets", "secondary school teacher", []string{"I study part time", "I love gadgets"}, 1},
		{"I'm a busy mum of two and I shop online every week", "busy mum", []string{"I'm a busy mum of two", "I shop online every week"}, 0},
		{"Retired, often travels with her husband", "", []string{"I often travel with my husband"}, 0},
		{"Dana, 52, owns a small bakery in Leeds with 6 staff, is sceptical of new software and worries about rising flour prices", "bakery owner",
			[]string{"I own a small bakery in Leeds with 6 staff", "I'm sceptical of new software", "I worry about rising flour prices"}, -2},
		{"Bakery owner in Leeds, sceptical of supermarket chains", "bakery owner", []string{"I'm sceptical of supermarket chains"}, -1},
	}
	for _, tt := range tests {
		t.Run(tt.persona, func(t *testing.T) {
			p := parsePersona(tt.persona)
			if p.role != tt.role || strings.Join(p.facts, "|") != strings.Join(tt.facts, "|") || p.tone != tt.tone {
				t.Fatalf("parsePersona = role %q facts %q tone %d; want %q %q %d", p.role, p.facts, p.tone, tt.role, tt.facts, tt.tone)
			}
		})
	}
}

func TestBuiltinParticipantContextDone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewBuiltin().Participant(ctx, ParticipantRequest{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// bakeryBrief is a study about bakery owners whose questions name its subject.
func bakeryBrief(t *testing.T) kv.Brief {
	t.Helper()
	return mustDraft(t, "Interview independent bakery owners about how they plan staff rotas and order ingredients")
}

// TestBuiltinParticipantFollowsPersona: the synthetic participant answers as the persona
// from its first reply (who they are, where they stand), about the study's subject,
// and never with a job of the engine's own that the persona does not have.
func TestBuiltinParticipantFollowsPersona(t *testing.T) {
	brief := bakeryBrief(t)
	noFirstRole := brief
	noFirstRole.PreInterviewQuestions = nil // the first question is not about their job
	tests := []struct {
		name, persona string
		brief         kv.Brief
		first         []string // the first reply says all of these
		somewhere     []string // some reply says each of these
	}{
		{"OwnsWithoutArticle", "Dana, 52, owns a small bakery in Leeds with 6 staff, is sceptical of new software and worries about rising flour prices", brief,
			[]string{"bakery owner", "I own a small bakery in Leeds with 6 staff"}, []string{"sceptical of new software", "rising flour prices", "staff rotas"}},
		{"LeadingRole", "Bakery owner in Leeds, sceptical of supermarket chains", brief,
			[]string{"I'm a bakery owner in Leeds"}, []string{"sceptical of supermarket chains", "staff rotas"}},
		{"FirstQuestionNotAboutWork", "Dana, 52, owns a small bakery in Leeds with 6 staff, is sceptical of new software", noFirstRole,
			[]string{"I'm a bakery owner."}, []string{"staff rotas"}},
		{"NoJobInPersona", "Someone who hates queues and distrusts apps", brief,
			[]string{"I'm an independent bakery owner.", "I hate queues"}, []string{"staff rotas"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for seed := int64(0); seed < 6; seed++ {
				replies := simulate(t, tt.persona, seed, tt.brief)
				for _, want := range tt.first {
					if !strings.Contains(replies[0], want) {
						t.Fatalf("seed %d: first reply %q does not say %q", seed, replies[0], want)
					}
				}
				all := strings.Join(replies, "\n")
				for _, want := range tt.somewhere {
					if !strings.Contains(all, want) {
						t.Fatalf("seed %d: no reply says %q:\n%s", seed, want, all)
					}
				}
				for _, own := range builtinNoRole {
					if strings.Contains(all, own) {
						t.Fatalf("seed %d: a reply makes up a job (%q) the persona does not have:\n%s", seed, own, all)
					}
				}
			}
		})
	}
}

// TestStudyTopicAndGroup: what a study is about and whom it is with, in the
// participant's words.
func TestStudyTopicAndGroup(t *testing.T) {
	tests := []struct{ guidance, topic, group string }{
		{"Interview independent bakery owners about how they plan staff rotas and order ingredients", "planning staff rotas", "independent bakery owner"},
		{"Interview nurses about night shifts", "night shifts", "nurse"},
		{"Understand why customers cancel their subscriptions", "my subscriptions", "customer"},
	}
	for _, title := range [][2]string{{"Online Groceries", "online groceries"}, {"NHS Nights Study", "NHS nights"}, {"How Independent Bakery Owners Plan Staff Rotas", ""}} {
		if got := studyTopic(kv.Brief{Title: &title[0], VerbatimQuestions: []string{"What would make you switch?"}}); got != title[1] {
			t.Errorf("title %q: topic %q, want %q", title[0], got, title[1])
		}
	}
	for _, tt := range tests {
		b := mustDraft(t, tt.guidance)
		if got := studyTopic(b); got != tt.topic {
			t.Errorf("%q: topic %q, want %q", tt.guidance, got, tt.topic)
		}
		if got := studyGroup(b); got != tt.group {
			t.Errorf("%q: group %q, want %q", tt.guidance, got, tt.group)
		}
	}
}
