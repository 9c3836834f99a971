package moderator

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"interviewd/kv"
)

// refusingEngine fails whatever it is asked.
type refusingEngine struct{}

var errAsked = errors.New("the engine was asked")

func (refusingEngine) Author(context.Context, AuthorRequest) (kv.Brief, error) {
	return kv.Brief{}, errAsked
}
func (refusingEngine) Probe(context.Context, ProbeRequest) (string, error) { return "", errAsked }
func (refusingEngine) Participant(context.Context, ParticipantRequest) (string, error) {
	return "", errAsked
}

// TestOpening_AsConduct: the opening stored with a new interview is what Conduct says
// to open it, and no engine is asked for it.
func TestOpening_AsConduct(t *testing.T) {
	cases := []struct {
		name  string
		brief kv.Brief
		facts map[string]string
	}{
		{"OK_ScreenerFirst", kv.Brief{PreInterviewQuestions: []string{"What is your role?"}, VerbatimQuestions: []string{"Why?"}}, nil},
		{"OK_ScreenerAnsweredByContext", kv.Brief{PreInterviewQuestions: []string{"What is your role?"}, VerbatimQuestions: []string{"Why?"}}, map[string]string{"role": "nurse"}},
		{"OK_VerbatimOnly", kv.Brief{VerbatimQuestions: []string{"", "Walk me through it."}}, nil},
		{"OK_NoQuestionsCloses", kv.Brief{}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Opening(c.brief, c.facts)
			want, err := Conduct(context.Background(), refusingEngine{}, ConductInput{Brief: c.brief, Context: c.facts, Answer: "ignored"})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("Opening %+v (script %s)\nConduct %+v (script %s)", got, got.Script, want, want.Script)
			}
			if len(got.Messages) == 0 || got.Messages[0] != ScriptGreeting {
				t.Fatalf("opening %q", got.Messages)
			}
		})
	}
}
