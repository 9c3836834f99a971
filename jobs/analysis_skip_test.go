package jobs

import (
	"testing"

	"interviewd/analysis"
	"interviewd/moderator"
)

// TestSkippedAnswerIsNotAnAnswer ties the transcript's record of a skipped question to
// the analysis: a skip counts as skipped, never as an answer quoted in a group.
func TestSkippedAnswerIsNotAnAnswer(t *testing.T) {
	if !analysis.IsNonAnswer(moderator.SkippedAnswer) {
		t.Fatalf("analysis.IsNonAnswer(%q) = false: skipped questions would be counted as answered", moderator.SkippedAnswer)
	}
}
