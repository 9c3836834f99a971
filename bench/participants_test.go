package main

import (
	"context"
	"io"
	"testing"
	"time"

	"interviewd/server"
)

func TestParticipants_WholeInterviewsNothingLost(t *testing.T) {
	// UntilEnough: the run lasts until an interview has been taken to its end, however
	// slow the machine, rather than a fixed window that a loaded one may not finish in.
	o := options{Conns: 2, Participants: 24, Duration: 700 * time.Millisecond, UntilEnough: true, Scenarios: []string{"participants"}, Studies: 3, Limits: server.RateLimits{Off: true}}
	rep, err := runSuite(context.Background(), o, io.Discard)
	if err != nil {
		t.Fatalf("runSuite: %v", err)
	}
	r := rep.Results[0]
	checkResult(t, r)
	if r.Conns != 24 || r.Ceiling == nil || r.ratio() <= 0 {
		t.Fatalf("conns %d, ceiling %+v", r.Conns, r.Ceiling)
	}
	want := map[string]func(int) bool{
		"interviews": func(n int) bool { return n >= 24 },
		"completed":  func(n int) bool { return n > 0 },
		"messages":   func(n int) bool { return n > 0 },
		"lost":       func(n int) bool { return n == 0 },
		"reordered":  func(n int) bool { return n == 0 },
		"unchecked":  func(n int) bool { return n == 0 },
	}
	for name, ok := range want {
		n, found := r.check(name)
		if !found || !ok(n) {
			t.Errorf("%s = %d (reported %v)", name, n, found)
		}
	}
}

// TestParticipants_VerifyCatchesLossAndReordering tampers with what participants saw:
// the check must notice a missing message and a swapped pair.
func TestParticipants_VerifyCatchesLossAndReordering(t *testing.T) {
	local := mustOpenLocal(t, 2)
	load, err := newParticipantsLoad(context.Background(), local)
	if err != nil {
		t.Fatal(err)
	}
	w := load.workload()
	for worker := range 3 {
		// Open and answer once: greeting, question, answer, reply(s).
		if _, err := capture(local, w.newWorker(worker), 2); err != nil {
			t.Fatal(err)
		}
	}
	if len(load.people) != 3 {
		t.Fatalf("%d participants recorded", len(load.people))
	}
	dropped := load.people[0].interviews[0]
	dropped.shown = dropped.shown[:len(dropped.shown)-1]
	swapped := load.people[1].interviews[0]
	swapped.shown[0], swapped.shown[1] = swapped.shown[1], swapped.shown[0]
	figures, err := w.verify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r := result{Checks: figures}
	if n, _ := r.check("interviews"); n != 3 {
		t.Errorf("interviews = %d, want 3", n)
	}
	if n, _ := r.check("lost"); n != 1 {
		t.Errorf("lost = %d, want 1", n)
	}
	if n, _ := r.check("reordered"); n != 1 {
		t.Errorf("reordered = %d, want 1", n)
	}
	if p := w.newWorker(9); p == nil || len(load.people) != 3 {
		t.Errorf("a worker made after verify was recorded")
	}
}
