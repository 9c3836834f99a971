package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"interviewd/server"
)

// runCreateLink runs the create_link scenario alone, in-process.
func runCreateLink(t *testing.T, solo bool) result {
	t.Helper()
	o := options{Conns: 4, Duration: 300 * time.Millisecond, Scenarios: []string{"create_link"}, Studies: 5,
		Limits: server.RateLimits{Off: true}, SoloCommits: solo}
	rep, err := runSuite(context.Background(), o, io.Discard)
	if err != nil {
		t.Fatalf("runSuite: %v", err)
	}
	if len(rep.Results) != 1 {
		t.Fatalf("%d results", len(rep.Results))
	}
	return rep.Results[0]
}

// TestCreateLink_EveryAcknowledgedLinkStored checks the scenario's own verification and
// commit figures, with group commit and with every write committed alone.
func TestCreateLink_EveryAcknowledgedLinkStored(t *testing.T) {
	for _, solo := range []bool{false, true} {
		r := runCreateLink(t, solo)
		checkResult(t, r)
		links, ok := r.check("links")
		missing, ok2 := r.check("missing")
		if !ok || !ok2 || links == 0 || missing != 0 {
			t.Fatalf("solo=%v: links=%d missing=%d (reported: %v %v)", solo, links, missing, ok, ok2)
		}
		if links < r.Requests-r.Errors {
			t.Errorf("solo=%v: %d links recorded for %d successful requests", solo, links, r.Requests-r.Errors)
		}
		c := r.Commits
		if c == nil || c.Commits == 0 || c.WritesPerCommit < 1 || c.PerSecond <= 0 {
			t.Fatalf("solo=%v: commit figures %+v", solo, c)
		}
		if solo && c.WritesPerCommit != 1 {
			t.Errorf("solo commits: %.2f writes per commit, want exactly 1", c.WritesPerCommit)
		}
	}
}

func TestParseOptions_SoloCommitsOnlyInProcess(t *testing.T) {
	if o, err := parseOptions([]string{"--solo-commits", "--scenarios", "create_link"}); err != nil || !o.SoloCommits {
		t.Fatalf("in-process: %+v %v", o, err)
	}
	_, err := parseOptions([]string{"--solo-commits", "--url", "http://127.0.0.1:8080", "--key", "k"})
	if err == nil || !strings.Contains(err.Error(), "--solo-commits") {
		t.Fatalf("with --url: %v", err)
	}
}

func TestReport_CommitFigures(t *testing.T) {
	rep := report{Results: []result{{
		Scenario: "create_link", Conns: 32, Duration: time.Second,
		stats:   stats{Requests: 900, RPS: 900},
		Commits: &commitFigures{Commits: 60, PerSecond: 60, WritesPerCommit: 15},
	}}}
	var text bytes.Buffer
	if err := rep.writeText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), " commits=60 commits_per_s=60 writes_per_commit=15.0\n") {
		t.Errorf("text output: %s", text.String())
	}
	var js bytes.Buffer
	if err := rep.writeJSON(&js); err != nil {
		t.Fatal(err)
	}
	var got []struct {
		Commits map[string]float64 `json:"commits"`
	}
	if err := json.Unmarshal(js.Bytes(), &got); err != nil || len(got) != 1 ||
		got[0].Commits["commits"] != 60 || got[0].Commits["per_s"] != 60 || got[0].Commits["writes_per_commit"] != 15 {
		t.Fatalf("JSON output %s (%v)", js.String(), err)
	}
}
