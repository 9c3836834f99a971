package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"interviewd/kv"
	"interviewd/server"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// checkResult asserts what every finished scenario must show: requests done, none
// failed, percentiles in order.
func checkResult(tb testing.TB, r result) {
	tb.Helper()
	if r.Requests <= 0 {
		tb.Errorf("%s: requests = %d, want > 0", r.Scenario, r.Requests)
	}
	if r.Errors != 0 {
		tb.Errorf("%s: errors = %d, want 0", r.Scenario, r.Errors)
	}
	if !(0 < r.P50 && r.P50 <= r.P99 && r.P99 <= r.Max) {
		tb.Errorf("%s: want 0 < p50 ≤ p99 ≤ max, got p50=%s p99=%s max=%s", r.Scenario, r.P50, r.P99, r.Max)
	}
	if r.RPS <= 0 {
		tb.Errorf("%s: rps = %f, want > 0", r.Scenario, r.RPS)
	}
}

func mustOpenLocal(tb testing.TB, studies int) *target {
	tb.Helper()
	t, err := openLocal(context.Background(), studies, io.Discard, server.RateLimits{Off: true}, kv.Options{})
	if err != nil {
		tb.Fatalf("openLocal: %v", err)
	}
	tb.Cleanup(func() {
		if err := t.close(); err != nil {
			tb.Errorf("close target: %v", err)
		}
	})
	return t
}

func TestRunSuite_InProcessEveryScenario(t *testing.T) {
	o := options{Conns: 2, Duration: 200 * time.Millisecond, Scenarios: scenarioNames(), Studies: 30, Limits: server.RateLimits{Off: true}}
	rep, err := runSuite(context.Background(), o, io.Discard)
	if err != nil {
		t.Fatalf("runSuite: %v", err)
	}
	if rep.Startup <= 0 {
		t.Errorf("startup = %s, want > 0", rep.Startup)
	}
	if len(rep.Results) != len(scenarios) {
		t.Fatalf("got %d results, want one per scenario (%d)", len(rep.Results), len(scenarios))
	}
	for i, r := range rep.Results {
		if r.Scenario != scenarios[i].name {
			t.Errorf("result %d is %q, want %q", i, r.Scenario, scenarios[i].name)
		}
		checkResult(t, r)
		if r.Ceiling == nil {
			t.Errorf("%s: ceiling not measured", r.Scenario)
			continue
		}
		checkResult(t, result{Scenario: r.Scenario + " ceiling", stats: *r.Ceiling})
		if r.ratio() <= 0 {
			t.Errorf("%s: ceiling_ratio = %f, want > 0", r.Scenario, r.ratio())
		}
	}
}

func TestRunSuite_RemoteTargetSkipsCeiling(t *testing.T) {
	local := mustOpenLocal(t, 5)
	o := options{Conns: 2, Duration: 150 * time.Millisecond, Scenarios: scenarioNames(), Studies: 5, URL: local.baseURL, Key: local.key, AgentKey: local.agentKey}
	rep, err := runSuite(context.Background(), o, io.Discard)
	if err != nil {
		t.Fatalf("runSuite: %v", err)
	}
	if rep.Startup != 0 {
		t.Errorf("startup = %s, want unmeasured against --url", rep.Startup)
	}
	for _, r := range rep.Results {
		checkResult(t, r)
		if r.Ceiling != nil || r.ratio() != 0 {
			t.Errorf("%s: ceiling measured against --url", r.Scenario)
		}
	}
}

func TestOpenRemote_CollectsSeededIDsAcrossPages(t *testing.T) {
	const seeded = 230 // more than one page of 200
	local := mustOpenLocal(t, seeded)
	tests := []struct {
		name string
		want int
	}{
		{"AllOfThem", seeded},
		{"FewerThanSeeded", 7},
		{"MoreThanSeeded", seeded + 50},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			remote, err := openRemote(context.Background(), local.baseURL+"/", local.key, tc.want)
			if err != nil {
				t.Fatalf("openRemote: %v", err)
			}
			want := min(tc.want, seeded)
			if len(remote.studyIDs) != want {
				t.Fatalf("collected %d ids, want %d", len(remote.studyIDs), want)
			}
			for _, id := range remote.studyIDs {
				if !slices.Contains(local.studyIDs, id) {
					t.Fatalf("collected id %s was never seeded", id)
				}
			}
		})
	}
}

func TestOpenRemote_ErrWrongKey(t *testing.T) {
	local := mustOpenLocal(t, 1)
	_, err := openRemote(context.Background(), local.baseURL, "jsk_live_nonsense", 10)
	if err == nil || !strings.Contains(err.Error(), "status 401") {
		t.Fatalf("err = %v, want a 401 from listing studies", err)
	}
}

func TestOpenLocal_AccessLogIsOn(t *testing.T) {
	local := mustOpenLocal(t, 1)
	resp, err := apiGet(local, "/v1/api/studies/"+local.studyIDs[0])
	if err != nil {
		t.Fatalf("get study: %v", err)
	}
	if resp.StatusCode() != 200 {
		t.Fatalf("get study answered %d: %s", resp.StatusCode(), resp.Body())
	}
	// The server writes the line after the response is sent: poll the file.
	deadline := time.Now().Add(60 * time.Second)
	for {
		raw, err := os.ReadFile(local.logPath)
		if err != nil {
			t.Fatalf("read log: %v", err)
		}
		sc := bufio.NewScanner(bytes.NewReader(raw))
		for sc.Scan() {
			var line struct {
				Message string `json:"message"`
				Route   string `json:"route"`
				Status  int    `json:"status"`
			}
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Message == "request" && line.Route == "/v1/api/studies/{study_id}" && line.Status == 200 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no access log line for the request in %s:\n%s", local.logPath, raw)
		}
	}
}

func TestParseOptions(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"OKDefaults", nil, ""},
		{"OKRemote", []string{"--url", "http://10.0.0.5:8080", "--key", "jsk_live_x", "--scenarios", "list_studies"}, ""},
		{"ErrConnsZero", []string{"--conns", "0"}, "--conns"},
		{"ErrConnsTooMany", []string{"--conns", "5000"}, "--conns"},
		{"ErrParticipantsZero", []string{"--participants", "0"}, "--participants"},
		{"ErrParticipantsTooMany", []string{"--participants", "5000"}, "--participants"},
		{"ErrDurationTooShort", []string{"--duration", "1ms"}, "--duration"},
		{"ErrDurationTooLong", []string{"--duration", "2h"}, "--duration"},
		{"ErrStudiesTooMany", []string{"--studies", "1000000"}, "--studies"},
		{"ErrUnknownScenario", []string{"--scenarios", "get_study,nope"}, `unknown scenario "nope"`},
		{"ErrNoScenario", []string{"--scenarios", ","}, "at least one"},
		{"ErrURLWithoutKey", []string{"--url", "http://127.0.0.1:8080"}, "--url needs --key"},
		{"ErrKeyWithoutURL", []string{"--key", "jsk_live_x"}, "only for --url"},
		{"ErrURLNotHTTP", []string{"--url", "ftp://host", "--key", "k"}, "want http://"},
		{"ErrStrayArgument", []string{"extra"}, "unexpected argument"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parseOptions(tc.args)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("parseOptions: %v", err)
				}
				if len(o.Scenarios) == 0 {
					t.Fatalf("no scenarios chosen")
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestParseOptions_DefaultsRunEveryScenario(t *testing.T) {
	o, err := parseOptions(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(o.Scenarios, scenarioNames()) || o.Conns != 32 || o.Participants != 200 || o.Duration != 10*time.Second || o.Studies != 500 {
		t.Fatalf("defaults = %+v", o)
	}
}

func TestPercentile(t *testing.T) {
	ms := func(n ...int) []time.Duration {
		out := make([]time.Duration, len(n))
		for i, v := range n {
			out[i] = time.Duration(v) * time.Millisecond
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1
	}
	tests := []struct {
		name   string
		sorted []time.Duration
		q      float64
		want   time.Duration
	}{
		{"EmptyIsZero", nil, 0.5, 0},
		{"OneValue", ms(7), 0.99, 7 * time.Millisecond},
		{"MedianOfFour", ms(1, 2, 3, 4), 0.5, 2 * time.Millisecond},
		{"P99OfHundred", ms(hundred...), 0.99, 99 * time.Millisecond},
		{"MaxOfHundred", ms(hundred...), 1, 100 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := percentile(tc.sorted, tc.q); got != tc.want {
				t.Fatalf("percentile(%v) = %s, want %s", tc.q, got, tc.want)
			}
		})
	}
}

func TestReport_Output(t *testing.T) {
	rep := report{
		Startup: 3 * time.Millisecond,
		Results: []result{{
			Scenario: "get_study", Conns: 32, Duration: 10 * time.Second,
			stats:   stats{Requests: 1000, RPS: 100, P50: 400 * time.Microsecond, P99: 2 * time.Millisecond, Max: 15 * time.Millisecond},
			Ceiling: &stats{Requests: 4000, RPS: 400},
			Checks:  []figure{{"interviews", 12}, {"lost", 0}},
		}},
	}
	var text bytes.Buffer
	if err := rep.writeText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"startup=3.00ms\n", "get_study  conns=32 dur=10s req=1000 rps=100 p50=0.40ms p99=2.00ms max=15.0ms errors=0", "ceiling_ratio=0.25 interviews=12 lost=0\n"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text output lacks %q:\n%s", want, text.String())
		}
	}
	var js bytes.Buffer
	if err := rep.writeJSON(&js); err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	if err := json.Unmarshal(js.Bytes(), &got); err != nil {
		t.Fatalf("JSON output does not decode: %v\n%s", err, js.String())
	}
	if len(got) != 2 || got[0]["scenario"] != "startup" || got[0]["startup_ms"] != 3.0 ||
		got[1]["scenario"] != "get_study" || got[1]["p50_ms"] != 0.4 || got[1]["ceiling_ratio"] != 0.25 || got[1]["errors"] != 0.0 ||
		fmt.Sprint(got[1]["checks"]) != "map[interviews:12 lost:0]" {
		t.Fatalf("JSON output = %s", js.String())
	}
}

func TestRun_HelpPrintsUsage(t *testing.T) {
	for _, arg := range []string{"-h", "--help"} {
		var out strings.Builder
		if err := run(context.Background(), []string{arg}, &out, io.Discard); err != nil {
			t.Fatalf("run %s: %v", arg, err)
		}
		for _, want := range []string{"usage: go run ./bench", "-scenarios", "-solo-commits"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("run %s: usage lacks %q:\n%s", arg, want, out.String())
			}
		}
	}
}
