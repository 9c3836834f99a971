package jobs

import (
	"interviewd/analysis"
	"interviewd/moderator"
)

// NewAnalyser returns the findings engine that goes with the interviewer engine m:
// the model-based engine on the same OpenAI-compatible endpoint when m speaks to one
// (model names the model, as the analysis records it: "model:<model>"), otherwise the
// built-in offline engine. A deployment that set a model for its interviews gets its
// findings from that model too, and one that did not stays offline.
func NewAnalyser(m moderator.Engine, model string) analysis.Engine {
	if c, ok := m.(analysis.Completer); ok {
		if model == "" {
			model = "openai-compatible"
		}
		return analysis.NewModel(c, model)
	}
	return analysis.NewBuiltin()
}
