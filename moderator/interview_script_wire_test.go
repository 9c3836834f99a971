package moderator

import (
	"bytes"
	"math"
	"testing"

	json "github.com/goccy/go-json"
)

// TestScriptWire: a Script is stored exactly as json.Marshal writes it, and read back as
// json.Unmarshal reads it, whatever the bytes.
func TestScriptWire(t *testing.T) {
	for _, s := range []Script{{}, {Phase: PhaseScreener}, {Phase: PhaseVerbatim, Index: 3, Probes: 1}, {Phase: PhaseDone, Index: 123456789},
		{Phase: PhaseVerbatim, Index: -1, Probes: math.MaxInt}, {Phase: `odd "phase" <&>`, Index: 2}, {Phase: "verbatim\n"},
		{Phase: PhaseVerbatim, Index: 4, Probes: 1, Asked: 1 << 63}, {Phase: PhaseDone, Asked: math.MaxUint64}, {Phase: PhaseScreener, Asked: 1}} {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		got, err := encodeScript(s)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("encode %+v: %s %v, want %s", s, got, err, want)
		}
		if back, err := decodeScript(got); err != nil || back != s {
			t.Errorf("decode %s: %+v %v", got, back, err)
		}
	}
}

// FuzzDecodeScript: decodeScript reads any bytes as json.Unmarshal does.
func FuzzDecodeScript(f *testing.F) {
	for _, seed := range []string{`{"phase":"verbatim","index":1,"probes":0}`, `{"phase":"screener","index":0,"probes":0}`,
		`{"phase":"done","index":0,"probes":0}`, `{"phase":"","index":0,"probes":0}`, `{"phase":"verbatim"}`,
		`{"phase":"verbatim","index":01,"probes":0}`, `{"phase":"verbatim","index":1234567890,"probes":0}`,
		`{"phase":"verbatim","index":1,"probes":0} `, `{"phase":"verbatim","index":-1,"probes":0}`, `{`, ``,
		`{"phase":"verb\u0061tim","index":1,"probes":2}`, `{"phase":"verbatim","index":1,"probes":2,"probes":3}`,
		`{"phase":"verbatim","index":1,"probes":1,"asked":18446744073709551615}`, `{"phase":"verbatim","index":1,"probes":1,"asked":18446744073709551616}`,
		`{"phase":"verbatim","index":1,"probes":1,"asked":0}`, `{"phase":"verbatim","index":1,"probes":1,"asked":01}`,
		`{"phase":"verbatim","index":1,"probes":1,"asked":-1}`, `{"phase":"verbatim","index":1,"probes":1,"asked":99999999999999999999}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var want Script
		wantErr := json.Unmarshal(raw, &want)
		got, err := decodeScript(raw)
		if (err != nil) != (wantErr != nil) || (err == nil && got != want) {
			t.Fatalf("%q: %+v %v, want %+v %v", raw, got, err, want, wantErr)
		}
	})
}
