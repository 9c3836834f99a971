package server

import (
	"bytes"
	"context"
	stdjson "encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"interviewd/kv"
)

// a2aJSNodeDir finds the folder where the A2A JavaScript SDK is installed
// (npm ci --prefix .ci/node). It skips the test when the SDK or node is missing, or
// fails it when $INTERVIEWD_REQUIRE_A2A_JS is 1 (as CI sets).
func a2aJSNodeDir(t *testing.T) (node, dir string) {
	t.Helper()
	missing := func(msg string) {
		if os.Getenv("INTERVIEWD_REQUIRE_A2A_JS") == "1" {
			t.Fatal(msg)
		}
		skipMissing(t, msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node not found (the A2A JavaScript SDK test needs Node.js 20 or later)")
	}
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir = filepath.Join(root, ".ci", "node")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@a2a-js", "sdk", "package.json")); err != nil {
		missing("A2A JavaScript SDK not found (install it with `npm ci --prefix .ci/node`)")
	}
	return node, dir
}

// TestA2AJavaScriptClient drives the server with an agent built on the A2A JavaScript
// SDK: it resolves the agent card, sends a message naming a skill and reads the task
// back, over loopback.
func TestA2AJavaScriptClient(t *testing.T) {
	node, dir := a2aJSNodeDir(t)
	e := mustServe(t)
	e.mustKey("agent", e.orgA.ID, kv.EnvLive, allScopes)
	st := e.mustStudy(e.orgA.ID, kv.EnvLive, "Night shifts")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	script, err := filepath.Abs(filepath.Join("testdata", "a2a_js_client.cjs"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, node, script, dir, testBaseURL, e.url, e.keys["agent"], st.ID.String())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node client: %v\n%s", err, stderr.String())
	}
	var got struct {
		SentID    string `json:"sent_id"`
		ReadID    string `json:"read_id"`
		State     string `json:"state"`
		StudyID   string `json:"study_id"`
		StudyName string `json:"study_name"`
	}
	if err := stdjson.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &got); err != nil {
		t.Fatalf("node output %q: %v (stderr %s)", stdout.String(), err, stderr.String())
	}
	if got.SentID == "" || got.ReadID != got.SentID || got.State != "TASK_STATE_COMPLETED" || got.StudyID != st.ID.String() || got.StudyName != "Night shifts" {
		t.Fatalf("the JavaScript client saw %+v", got)
	}
}
