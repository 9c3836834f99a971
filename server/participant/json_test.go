package participant

import (
	"bytes"
	"interviewd/server/pipeline"
	"testing"

	json "github.com/goccy/go-json"
)

// FuzzParticipantTurnJSON: a turn's answer is written byte for byte as the JSON package
// writes it, whatever its text.
func FuzzParticipantTurnJSON(f *testing.F) {
	for _, s := range []string{"", "We keep the rota on paper.", `say "no" \ maybe`, "<b>&amp;</b>", "tab\tnew\nline\r", "\x00\x01\x1f\x7f",
		"é ü 日本 🎉", "\xff\xfe", "\ufffd", "a\u2028b\u2029c", "\xed\xa0\x80"} {
		f.Add(s, "in_progress", 3, true)
	}
	f.Fuzz(func(t *testing.T, text, status string, n int, progress bool) {
		turns := []ParticipantTurn{
			{Status: status},
			{Status: status, Messages: []ParticipantMessage{}},
			{Status: status, Messages: []ParticipantMessage{{Speaker: "participant", Text: text, At: "2026-11-27T07:03:42.123Z"},
				{Speaker: "interviewer", Text: "Could you tell me more about that?", At: pipeline.Time(text)}}},
		}
		if progress {
			for i := range turns {
				turns[i].Progress = &ParticipantProgress{Question: n, Total: -n}
			}
		}
		for _, turn := range turns {
			want, err := json.MarshalNoEscape(any(turn))
			if err != nil {
				t.Fatal(err)
			}
			got, err := appendParticipantTurn(nil, turn)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%+v:\n%s %v\nwant\n%s", turn, got, err, want)
			}
		}
	})
}
