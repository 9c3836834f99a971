package kv

import (
	"encoding/base64"
	"strings"
	"testing"
)

// FuzzParseAccessProof: whatever is presented, an accepted proof is jmg_ and the
// canonical base64url of exactly 32 bytes, so one secret has one spelling.
func FuzzParseAccessProof(f *testing.F) {
	f.Add("jmg_" + strings.Repeat("A", 43))
	f.Add("jmg_" + strings.Repeat("A", 42) + "B")
	f.Add("jmg_" + strings.Repeat("_", 43))
	f.Add("jsk_live_" + strings.Repeat("A", 49))
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		if !ParseAccessProof(s) {
			return
		}
		raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(s, "jmg_"))
		if err != nil || len(raw) != 32 || "jmg_"+base64.RawURLEncoding.EncodeToString(raw) != s {
			t.Fatalf("%q accepted: %v, %d bytes", s, err, len(raw))
		}
	})
}
