package jobs

import (
	"testing"
	"time"

	"interviewd/moderator"
	"interviewd/moderator/chattest"
)

// gatedEngine is an OpenAI engine on a gated fake endpoint that never retries, so a
// simulation on it can be held in the middle of a turn and stepped through.
func gatedEngine(tb testing.TB, g *chattest.Gated) *moderator.OpenAI {
	tb.Helper()
	o, err := moderator.NewOpenAI(moderator.OpenAIConfig{URL: g.URL + "/v1", Model: "gated", MaxRetries: -1, Timeout: time.Minute})
	if err != nil {
		tb.Fatal(err)
	}
	return o
}
