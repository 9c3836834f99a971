package participant

import (
	"interviewd/server/pipeline"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParticipantMessageBody decodes arbitrary message bodies: each is refused with
// field errors or gives an answer of 1 to 10,000 trimmed characters and a known modality.
func FuzzParticipantMessageBody(f *testing.F) {
	for _, seed := range []string{
		`{"text":"hi"}`, `{"text":"hi","modality":"voice"}`, `{"text":"  "}`, `{"text":5}`, `{}`, `[]`, `{"text":"a","x":1}`,
		`{"text":"\u0000"}`, `{"text":"` + strings.Repeat("é", 10_001) + `"}`, `{"text":null}`, `{"modality":"voice","text":" ok "}`,
	} {
		f.Add([]byte(seed))
	}
	plan := pipeline.PlanInput(reflect.TypeFor[ParticipantMessageInput]())
	f.Fuzz(func(t *testing.T, body []byte) {
		var in ParticipantMessageInput
		err := plan.Finish(&in, plan.BindBody(reflect.ValueOf(&in).Elem(), body))
		if err != nil {
			// As the participant API sends it: every refusal a 422 with its fields
			// located in the body.
			ae := pipeline.ToAPIError(err).LocatedREST(plan)
			if ae.Status != 422 || len(ae.Fields) == 0 {
				t.Fatalf("refusal without field errors: %v", err)
			}
			for _, fe := range ae.Fields {
				if len(fe.Loc) == 0 || fe.Loc[0] != "body" || fe.Type == "" {
					t.Fatalf("bad field error %+v", fe)
				}
			}
			return
		}
		n := utf8.RuneCountInString(in.Text)
		if n < 1 || n > MaxAnswerChars || strings.TrimSpace(in.Text) != in.Text || (in.Modality != "text" && in.Modality != "voice") {
			t.Fatalf("accepted %q (%d characters) modality %q", in.Text, n, in.Modality)
		}
	})
}

func FuzzWellFormedSession(f *testing.F) {
	f.Add(NewSessionSecret())
	f.Add("short")
	f.Add(strings.Repeat("=", 43))
	f.Fuzz(func(t *testing.T, s string) {
		if wellFormedSession(s) && (len(s) != 43 || strings.ContainsAny(s, "+/=")) {
			t.Fatalf("accepted %q", s)
		}
	})
}
