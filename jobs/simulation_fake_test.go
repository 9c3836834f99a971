package jobs

import (
	"testing"
	"time"

	"interviewd/jobs/chattest"
)

// gatedEngine is an OpenAI engine on a gated fake endpoint that never retries, so a
// simulation on it can be held in the middle of a turn and stepped through.
func gatedEngine(tb testing.TB, g *chattest.Gated) *OpenAI {
	tb.Helper()
	o, err := NewOpenAI(OpenAIConfig{URL: g.URL + "/v1", Model: "gated", MaxRetries: -1, Timeout: time.Minute})
	if err != nil {
		tb.Fatal(err)
	}
	return o
}
