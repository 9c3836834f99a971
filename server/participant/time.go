package participant

import (
	"strings"
	"time"

	"interviewd/kv"
	"interviewd/server/pipeline"
)

// Every participant answer carries the time of each message it shows. They are written
// side by side into one string rather than one time.Format string each.

// wireTimeLen is the length of a wireTime of a year from 0 to 9999.
const wireTimeLen = len("2006-01-02T15:04:05.000Z")

// participantMessages returns the messages of parts, in order, as the participant sees them.
func participantMessages(parts ...[]kv.Message) []ParticipantMessage {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	var times strings.Builder
	times.Grow(n * wireTimeLen)
	for _, p := range parts {
		for _, m := range p {
			writeWireTime(&times, m.At)
		}
	}
	all := times.String()
	out := make([]ParticipantMessage, 0, n)
	for _, p := range parts {
		for _, m := range p {
			end := strings.IndexByte(all, 'Z') + 1 // a time's only Z is its last byte
			out = append(out, ParticipantMessage{Speaker: m.Speaker, Text: m.Text, At: pipeline.Time(all[:end])})
			all = all[end:]
		}
	}
	return out
}

// writeWireTime writes wireTime(t) to b.
func writeWireTime(b *strings.Builder, t time.Time) {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		b.WriteString(string(pipeline.WireTime(t)))
		return
	}
	hour, minute, sec := t.Clock()
	var buf [wireTimeLen]byte
	digits(buf[0:4], year)
	buf[4] = '-'
	digits(buf[5:7], int(month))
	buf[7] = '-'
	digits(buf[8:10], day)
	buf[10] = 'T'
	digits(buf[11:13], hour)
	buf[13] = ':'
	digits(buf[14:16], minute)
	buf[16] = ':'
	digits(buf[17:19], sec)
	buf[19] = '.'
	digits(buf[20:23], t.Nanosecond()/int(time.Millisecond)) // truncated, as Format does
	buf[23] = 'Z'
	b.Write(buf[:])
}

// digits writes n into b in decimal, zero-padded to len(b).
func digits(b []byte, n int) {
	for i := len(b) - 1; i >= 0; i-- {
		b[i] = byte('0' + n%10)
		n /= 10
	}
}
