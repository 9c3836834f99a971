package participant

import (
	"interviewd/server/pipeline"
	"reflect"
	"strings"
	"testing"
)

// FuzzQuickMessageInput: whatever body the quick reading accepts, the general binding
// reads to the same input without an error.
func FuzzQuickMessageInput(f *testing.F) {
	for _, seed := range []string{
		`{"text":"hi"}`, `{"text":"hi","modality":"voice"}`, `{"text":"hi","modality":"telepathy"}`, `{"text":"","modality":""}`,
		`{"text":"  "}`, `{"text":"a\nb"}`, `{"text":"\u00e9"}`, `{"text":"é ü 日本"}`, `{"text":"a","x":1}`, `{"text":"a"} `,
		`{ "text":"a"}`, `{"text":"a","text":"b"}`, `{"text":"a\"b"}`, "{\"text\":\"\xff\"}", "{\"text\":\"\x00\"}", "{\"text\":\"\x7f\"}",
		`{"modality":"voice","text":"ok"}`, `{"text":"a","modality":null}`, `{"text":"` + strings.Repeat("é", 10_001) + `"}`,
	} {
		f.Add([]byte(seed))
	}
	plan := pipeline.PlanInput(reflect.TypeFor[ParticipantMessageInput]())
	f.Fuzz(func(t *testing.T, body []byte) {
		var quick ParticipantMessageInput
		if !quickMessageInput(body, &quick) {
			return
		}
		var general ParticipantMessageInput
		if errs := plan.BindBody(reflect.ValueOf(&general).Elem(), body); errs != nil || general != quick {
			t.Fatalf("%q: quick %+v, general %+v %+v", body, quick, general, errs)
		}
	})
}

// TestQuickMessageInput: the bodies the participant page and ordinary clients send are
// read quickly; anything unusual is left to the general binding.
func TestQuickMessageInput(t *testing.T) {
	for body, want := range map[string]*ParticipantMessageInput{
		`{"text":"We keep the rota on paper."}`:                     {Text: "We keep the rota on paper."},
		`{"text":"Auf Papier, jede Woche neu.","modality":"voice"}`: {Text: "Auf Papier, jede Woche neu.", Modality: "voice"},
		`{"text":"  padded  ","modality":"text"}`:                   {Text: "  padded  ", Modality: "text"},
		`{"text":"line\nbreak"}`:                                    nil,
		`{"modality":"voice","text":"reordered"}`:                   nil,
		`{"text":"extra","note":"x"}`:                               nil,
		`{"text": "spaced"}`:                                        nil,
		`{"text":"unterminated}`:                                    nil,
		`{"text":"a"}{"text":"b"}`:                                  nil,
		`{"text":"a","modality":"voice"`:                            nil,
		`{"text":"\u0068i"}`:                                        nil,
		"{\"text\":\"tab\there\"}":                                  nil,
		"{\"text\":\"bad \xc3\"}":                                   nil,
		`{"text":5}`:                                                nil,
		``:                                                          nil,
		`{"text":"ok","modality":5}`:                                nil,
	} {
		var in ParticipantMessageInput
		ok := quickMessageInput([]byte(body), &in)
		if ok != (want != nil) || (ok && in != *want) {
			t.Errorf("%q: %v %+v, want %+v", body, ok, in, want)
		}
	}
}
