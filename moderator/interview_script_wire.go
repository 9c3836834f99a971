package moderator

import (
	"bytes"
	"math"
	"strconv"

	json "github.com/goccy/go-json"
)

// A Script is read and written at every turn and read again for the progress the
// participant is shown. Its stored form is always the one json.Marshal gives (phase,
// index, probes and, once a follow-up has been asked, asked, in that order, no spaces),
// so that form is read and written directly; anything else goes through the JSON
// package as before.

// encodeScript returns json.Marshal(s).
func encodeScript(s Script) ([]byte, error) {
	switch s.Phase {
	case "", PhaseScreener, PhaseVerbatim, PhaseDone: // nothing to escape
	default:
		return json.Marshal(s)
	}
	b := make([]byte, 0, 48)
	b = append(b, `{"phase":"`...)
	b = append(b, s.Phase...)
	b = append(b, `","index":`...)
	b = strconv.AppendInt(b, int64(s.Index), 10)
	b = append(b, `,"probes":`...)
	b = strconv.AppendInt(b, int64(s.Probes), 10)
	if s.Asked != 0 {
		b = append(b, `,"asked":`...)
		b = strconv.AppendUint(b, s.Asked, 10)
	}
	return append(b, '}'), nil
}

// decodeScript is json.Unmarshal(raw, &s) for a zero s.
func decodeScript(raw []byte) (Script, error) {
	if s, ok := decodeScriptForm(raw); ok {
		return s, nil
	}
	var s Script
	err := json.Unmarshal(raw, &s)
	return s, err
}

// decodeScriptForm reads raw when it is exactly in encodeScript's form with a known
// phase and small non-negative numbers.
func decodeScriptForm(raw []byte) (Script, bool) {
	var s Script
	rest, ok := bytes.CutPrefix(raw, []byte(`{"phase":"`))
	if !ok {
		return s, false
	}
	end := bytes.IndexByte(rest, '"')
	if end < 0 {
		return s, false
	}
	switch phase := string(rest[:end]); phase {
	case "", PhaseScreener, PhaseVerbatim, PhaseDone:
		s.Phase = phase
	default:
		return s, false
	}
	if rest, ok = bytes.CutPrefix(rest[end+1:], []byte(`,"index":`)); !ok {
		return s, false
	}
	if s.Index, rest, ok = scriptNumber(rest); !ok {
		return s, false
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"probes":`)); !ok {
		return s, false
	}
	if s.Probes, rest, ok = scriptNumber(rest); !ok {
		return s, false
	}
	if asked, found := bytes.CutPrefix(rest, []byte(`,"asked":`)); found {
		if s.Asked, rest, ok = scriptFilter(asked); !ok {
			return s, false
		}
	}
	return s, len(rest) == 1 && rest[0] == '}'
}

// scriptFilter reads the unsigned 64-bit decimal number at the start of b, written as
// JSON writes it (no leading 0 but for 0 itself).
func scriptFilter(b []byte) (uint64, []byte, bool) {
	i := 0
	for i < len(b) && i <= 20 && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	if i == 0 || i > 20 || (i > 1 && b[0] == '0') {
		return 0, nil, false
	}
	var n uint64
	for _, c := range b[:i] {
		d := uint64(c - '0')
		if n > (math.MaxUint64-d)/10 {
			return 0, nil, false // past uint64: json.Unmarshal refuses it too
		}
		n = n*10 + d
	}
	return n, b[i:], true
}

// scriptNumber reads the decimal number at the start of b: 0, or up to 9 digits not
// starting with 0.
func scriptNumber(b []byte) (int, []byte, bool) {
	n, i := 0, 0
	for ; i < len(b) && i < 10 && '0' <= b[i] && b[i] <= '9'; i++ {
		n = n*10 + int(b[i]-'0')
	}
	if i == 0 || i > 9 || (i > 1 && b[0] == '0') {
		return 0, nil, false
	}
	return n, b[i:], true
}
