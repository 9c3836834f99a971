package cmd

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"interviewd/kv/pgtest"
)

// A data folder migrated into PostgreSQL and back: the same records on every side,
// counted and verified, usable by the admin commands at each stop; a second copy into
// a store in use is refused.
func TestMigrateCommand(t *testing.T) {
	url := pgtest.URL(t)
	dir := t.TempDir()
	var org struct {
		OrgID string `json:"org_id"`
	}
	admin(t, &org, "setup", "--data", dir, "--org", "Migrated Research", "--email", "m@example.test", "--credits", "7")
	var key struct {
		ID string `json:"id"`
	}
	admin(t, &key, "keys", "create", "--data", dir, "--org", org.OrgID, "--name", "ci", "--env", "live", "--scopes", "studies:read")

	var there, back migrateOutput
	admin(t, &there, "migrate", "--data", dir, "--to", url)
	if !there.Verified || there.Records == 0 || there.Buckets["orgs"] != 1 || there.Buckets["keys"] != 1 {
		t.Fatalf("migrate --to: %+v", there)
	}
	var credits struct {
		Credits int `json:"credits"`
	}
	admin(t, &credits, "credits", "show", "--data", t.TempDir(), "--store", url, "--org", org.OrgID)
	if credits.Credits != 7 {
		t.Fatalf("credits in PostgreSQL: %d, want 7", credits.Credits)
	}
	dir2 := t.TempDir()
	admin(t, &back, "migrate", "--data", dir2, "--from", url)
	if back.Records != there.Records || back.Buckets["keys"] != 1 {
		t.Fatalf("migrate --from: %+v, there %+v", back, there)
	}
	var keys []struct {
		ID string `json:"id"`
	}
	admin(t, &keys, "keys", "list", "--data", dir2, "--org", org.OrgID)
	if len(keys) != 1 || keys[0].ID != key.ID {
		t.Fatalf("keys after the round trip: %+v", keys)
	}
	for _, args := range [][]string{
		{"migrate", "--data", dir, "--to", url},                // PostgreSQL holds the organisation now
		{"migrate", "--data", dir},                             // no direction
		{"migrate", "--data", dir, "--to", "mysql://x"},        // not PostgreSQL
		{"migrate", "--data", t.TempDir(), "--to", url},        // nothing to copy
		{"migrate", "--data", dir, "--to", url, "--from", url}, // both directions
	} {
		var out bytes.Buffer
		err := Run(context.Background(), args, &out, io.Discard, noEnv)
		if err == nil || !strings.HasPrefix(err.Error(), "migrate: ") {
			t.Errorf("%v: %v, want a migrate error", args, err)
		}
	}
}
