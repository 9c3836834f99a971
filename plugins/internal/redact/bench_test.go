package redact

import (
	"strings"
	"testing"
)

// BenchmarkText redacts interview-like text with some personal data in every few lines.
func BenchmarkText(b *testing.B) {
	lines := []string{
		"Interviewer: Can you walk me through the last time you onboarded a new teammate?",
		"Participant: Sure. In March 2024 we hired two designers, and honestly the first week was rough.",
		"Participant: I emailed the checklist to jane.doe@example.com and she forwarded it to the team lead.",
		"Interviewer: What made the first week rough, in your words?",
		"Participant: Access. Nobody could reach the staging box at 10.20.30.40 until IT opened a ticket.",
		"Participant: I ended up calling the help desk on +44 20 7946 0958 three times, which took 45 minutes.",
		"Interviewer: How did you pay for the extra licences?",
		"Participant: Company card, 4111 1111 1111 1111, then I filed the expense report on the 15th.",
		"Participant: The new dashboard helped a lot; it loaded in under 2 seconds, compared with 12 before.",
	}
	text := []byte(strings.Repeat(strings.Join(lines, "\n")+"\n", 1000))
	r := mustRedactor(b, DefaultConfig())
	b.SetBytes(int64(len(text)))
	var out []byte
	for b.Loop() {
		out = r.Text(out[:0], text)
	}
}
