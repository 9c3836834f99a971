package kv

import "testing"

// TestInterviewFilterLength: the length filter keeps durations from MinSeconds up to
// (not including) MaxSeconds, leaves out interviews with no duration yet once either
// bound is set, and keeps everything when neither is.
func TestInterviewFilterLength(t *testing.T) {
	secs := func(n int) *int { return &n }
	for _, c := range []struct {
		name     string
		min, max int
		duration *int
		want     bool
	}{
		{"NoBounds_NoDuration", 0, 0, nil, true},
		{"NoBounds", 0, 0, secs(10), true},
		{"Under_In", 0, 300, secs(299), true},
		{"Under_AtBound", 0, 300, secs(300), false},
		{"Between_AtMin", 300, 900, secs(300), true},
		{"Between_Below", 300, 900, secs(299), false},
		{"AtLeast", 1800, 0, secs(4000), true},
		{"AtLeast_Below", 1800, 0, secs(1799), false},
		{"Bound_NoDuration", 0, 300, nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := InterviewFilter{MinSeconds: c.min, MaxSeconds: c.max}
			if got := f.lasted(Interview{DurationSeconds: c.duration}); got != c.want {
				t.Fatalf("lasted = %v, want %v", got, c.want)
			}
		})
	}
}
