package kv

import (
	"encoding/base64"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	json "github.com/goccy/go-json"
)

// Every participant turn encodes its interview's record and the turn's messages, and
// the general encoder's reflection-driven walk was a visible part of a turn's CPU.
// These append the same bytes json.Marshal writes for the two types (same field
// order, escaping and time format; FuzzInterviewJSON and FuzzMessageJSON compare them
// byte for byte), so stored records are unchanged and either encoder may write them.

// marshalInterview returns iv's record.
func marshalInterview(iv Interview) ([]byte, error) {
	if !jsonTime(iv.StartedAt) || (iv.CompletedAt != nil && !jsonTime(*iv.CompletedAt)) ||
		(iv.LastMessageAt != nil && !jsonTime(*iv.LastMessageAt)) || (iv.ConsentedAt != nil && !jsonTime(*iv.ConsentedAt)) {
		return json.Marshal(iv) // its error: a year outside 0–9999
	}
	b := make([]byte, 0, 512+len(iv.Script)*4/3)
	b = append(b, `{"id":`...)
	b = appendJSONID(b, iv.ID)
	b = append(b, `,"org_id":`...)
	b = appendJSONID(b, iv.OrgID)
	b = append(b, `,"env":`...)
	b = appendJSONString(b, string(iv.Env))
	b = append(b, `,"study_id":`...)
	b = appendJSONID(b, iv.StudyID)
	b = append(b, `,"status":`...)
	b = appendJSONString(b, iv.Status)
	b = append(b, `,"is_test":`...)
	b = strconv.AppendBool(b, iv.IsTest)
	b = append(b, `,"modality":`...)
	b = appendJSONString(b, iv.Modality)
	b = append(b, `,"started_at":`...)
	b = appendJSONTime(b, iv.StartedAt)
	b = append(b, `,"completed_at":`...)
	if iv.CompletedAt == nil {
		b = append(b, "null"...)
	} else {
		b = appendJSONTime(b, *iv.CompletedAt)
	}
	b = append(b, `,"duration_seconds":`...)
	if iv.DurationSeconds == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, int64(*iv.DurationSeconds), 10)
	}
	b = append(b, `,"entry_attributes":`...)
	b = appendJSONStringMap(b, iv.EntryAttributes)
	b = append(b, `,"invite_audience":`...)
	if iv.InviteAudience == nil {
		b = append(b, "null"...)
	} else {
		b = appendJSONString(b, *iv.InviteAudience)
	}
	b = append(b, `,"link_token":`...)
	b = appendJSONString(b, iv.LinkToken)
	b = append(b, `,"design_version":`...)
	b = strconv.AppendInt(b, int64(iv.DesignVersion), 10)
	if iv.LastMessageAt != nil {
		b = append(b, `,"last_message_at":`...)
		b = appendJSONTime(b, *iv.LastMessageAt)
	}
	if len(iv.Script) > 0 {
		b = append(b, `,"script":"`...)
		b = base64.StdEncoding.AppendEncode(b, iv.Script)
		b = append(b, '"')
	}
	if iv.TranscriptLen != 0 {
		b = append(b, `,"transcript_len":`...)
		b = strconv.AppendInt(b, int64(iv.TranscriptLen), 10)
	}
	if iv.ActiveMS != 0 {
		b = append(b, `,"active_ms":`...)
		b = strconv.AppendInt(b, iv.ActiveMS, 10)
	}
	if iv.ConsentedAt != nil {
		b = append(b, `,"consented_at":`...)
		b = appendJSONTime(b, *iv.ConsentedAt)
	}
	if iv.ConsentText != "" {
		b = append(b, `,"consent_text":`...)
		b = appendJSONString(b, iv.ConsentText)
	}
	if iv.CompletionCode != "" {
		b = append(b, `,"completion_code":`...)
		b = appendJSONString(b, iv.CompletionCode)
	}
	return append(b, '}'), nil
}

// marshalMessage returns m's transcript line.
func marshalMessage(m Message) ([]byte, error) {
	if !jsonTime(m.At) {
		return json.Marshal(m)
	}
	b := make([]byte, 0, 64+len(m.Text)+len(m.Text)/8)
	b = append(b, `{"speaker":`...)
	b = appendJSONString(b, m.Speaker)
	b = append(b, `,"text":`...)
	b = appendJSONString(b, m.Text)
	b = append(b, `,"at":`...)
	b = appendJSONTime(b, m.At)
	return append(b, '}'), nil
}

func appendJSONID(b []byte, id ID) []byte {
	var buf [36]byte
	id.format(&buf)
	b = append(b, '"')
	b = append(b, buf[:]...)
	return append(b, '"')
}

// jsonTime reports whether time.Time's MarshalJSON accepts t.
func jsonTime(t time.Time) bool {
	y := t.Year()
	return y >= 0 && y <= 9999
}

// appendJSONTime is time.Time's MarshalJSON, for a t jsonTime accepts.
func appendJSONTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

// appendJSONStringMap writes m with its keys in order, as json.Marshal does; nil is null.
func appendJSONStringMap(b []byte, m map[string]string) []byte {
	if m == nil {
		return append(b, "null"...)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
		b = append(b, ':')
		b = appendJSONString(b, m[k])
	}
	return append(b, '}')
}

const hexDigits = "0123456789abcdef"

// appendJSONString quotes s as encoding/json does by default: HTML-safe (<, > and &
// escaped), invalid UTF-8 replaced by U+FFFD, U+2028 and U+2029 escaped.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
