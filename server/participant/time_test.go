package participant

import (
	"math"
	"strings"
	"testing"
	"time"

	"interviewd/kv"
	"interviewd/server/pipeline"
)

// FuzzParticipantMessageTimes: the times a participant is shown are wireTime's, whatever
// the instant and its location.
func FuzzParticipantMessageTimes(f *testing.F) {
	f.Add(int64(0), int64(0), 0)
	f.Add(time.Date(2026, 11, 27, 7, 3, 42, 999_999_999, time.UTC).Unix(), int64(999_999_999), 3600)
	f.Add(int64(-62135596800), int64(1), -7200)   // year 1
	f.Add(int64(253402300799), int64(5e8), 0)     // the last second of 9999
	f.Add(int64(253402300800), int64(0), 0)       // year 10000
	f.Add(int64(-62167219200-86400), int64(0), 0) // before year 0
	f.Add(int64(math.MaxInt64/2), int64(0), 0)
	f.Fuzz(func(t *testing.T, sec, nsec int64, offset int) {
		at := time.Unix(sec, nsec).In(time.FixedZone("here", offset%(26*3600)))
		msgs := []kv.Message{{Speaker: kv.SpeakerParticipant, Text: "a", At: at}, {Speaker: kv.SpeakerInterviewer, Text: "b", At: at.Add(time.Millisecond)}}
		got := participantMessages(msgs[:1], nil, msgs[1:])
		if len(got) != 2 {
			t.Fatalf("%d messages", len(got))
		}
		for i, m := range msgs {
			if want := (ParticipantMessage{Speaker: m.Speaker, Text: m.Text, At: pipeline.WireTime(m.At)}); got[i] != want {
				t.Fatalf("%v: %+v, want %+v", m.At, got[i], want)
			}
		}
	})
}

// TestParticipantMessageTimesShareOneString: a turn's times are formatted into one
// string, not one allocation each.
func TestParticipantMessageTimesShareOneString(t *testing.T) {
	now := time.Now()
	msgs := []kv.Message{{At: now}, {At: now.Add(time.Second)}, {At: now.Add(time.Minute)}}
	allocs := testing.AllocsPerRun(100, func() { participantMessages(msgs) })
	if allocs > 2 {
		t.Fatalf("%v allocations for 3 messages, want 2 (the slice and the times)", allocs)
	}
	if got := participantMessages(msgs); !strings.HasSuffix(string(got[2].At), "Z") || len(got[0].At) != wireTimeLen {
		t.Fatalf("%+v", got)
	}
}
