package kv

import (
	"bytes"
	"testing"
	"time"

	json "github.com/goccy/go-json"
)

// FuzzInterviewJSON: marshalInterview writes the bytes json.Marshal writes, for any
// strings (escapes, invalid UTF-8, U+2028), any times, set or unset pointers and maps.
func FuzzInterviewJSON(f *testing.F) {
	f.Add("in_progress", "text", "tok", "k", "v", int64(1767225600123456789), int64(3600), 12, 1, []byte(`{"q":3}`), true, true)
	f.Add("<&>\"\\\n\r\t\b\f\x01\x7f", "é\u2028\u2029\xff\xfe", "", "", "", int64(-62135596800), int64(0), 0, 0, []byte(nil), false, false)
	f.Add("a", "b", "c", "\x00", "\u00e9\U0001F600", int64(253402300799), int64(-1), -5, 7, []byte{0, 1, 2}, true, false)
	f.Fuzz(func(t *testing.T, status, modality, token, key, value string, unixNano, offset int64, n, version int, script []byte, set, isTest bool) {
		at := time.Unix(0, unixNano).In(time.FixedZone("z", int(offset%86400)))
		iv := Interview{ID: NewV4(), OrgID: NewV4(), StudyID: NewV4(), Env: Environment(modality), Status: status,
			IsTest: isTest, Modality: modality, StartedAt: at, LinkToken: token, DesignVersion: version,
			Script: script, TranscriptLen: n, ActiveMS: int64(n) * offset}
		if set {
			iv.CompletedAt, iv.LastMessageAt, iv.DurationSeconds, iv.InviteAudience = &at, &at, &n, &value
			iv.ConsentedAt, iv.ConsentText, iv.CompletionCode = &at, key+value, status
			iv.EntryAttributes = map[string]string{key: value, value: key, "z": status}
		} else if isTest {
			iv.EntryAttributes = map[string]string{}
		}
		want, werr := json.Marshal(iv)
		got, gerr := marshalInterview(iv)
		if (werr == nil) != (gerr == nil) || !bytes.Equal(got, want) {
			t.Fatalf("marshalInterview:\n got  %s (%v)\n want %s (%v)", got, gerr, want, werr)
		}
		m := Message{Speaker: status, Text: value + key, At: at}
		want, werr = json.Marshal(m)
		got, gerr = marshalMessage(m)
		if (werr == nil) != (gerr == nil) || !bytes.Equal(got, want) {
			t.Fatalf("marshalMessage:\n got  %s (%v)\n want %s (%v)", got, gerr, want, werr)
		}
	})
}
