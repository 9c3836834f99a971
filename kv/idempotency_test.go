package kv

import (
	"context"
	"testing"
)

// TestIdemLegacyRecordReplays: a record written when idempotency records held the REST
// status beside the body replays its body as the operation's output.
func TestIdemLegacyRecordReplays(t *testing.T) {
	db := mustOpenDB(t, nil)
	org := mustOrg(t, db, "legacy")
	p := Partition{Org: org.ID, Env: EnvLive}
	fp := [32]byte{7}
	legacy := []byte(`{"fp":[` + fpJSON(fp) + `],"done":true,"status":202,"body":"eyJqb2JfaWQiOiJqMSJ9","created_at":"` +
		db.Now().UTC().Format("2006-01-02T15:04:05.999999999Z07:00") + `"}`)
	if err := db.update(context.Background(), func(tx Tx) error {
		return tx.Bucket(bucketIdempotency).Put(idemKey(p, "old"), legacy)
	}); err != nil {
		t.Fatal(err)
	}
	out, output, err := db.ClaimIdem(context.Background(), p, "old", fp)
	if err != nil || out != IdemReplay || string(output) != `{"job_id":"j1"}` {
		t.Fatalf("legacy replay = %v %q %v, want IdemReplay {\"job_id\":\"j1\"}", out, output, err)
	}
	if out, _, err := db.ClaimIdem(context.Background(), p, "old", [32]byte{8}); err != nil || out != IdemReused {
		t.Fatalf("legacy record, other fingerprint = %v %v, want IdemReused", out, err)
	}
}

func fpJSON(fp [32]byte) string {
	s := ""
	for i, b := range fp {
		if i > 0 {
			s += ","
		}
		s += itoa(int(b))
	}
	return s
}
