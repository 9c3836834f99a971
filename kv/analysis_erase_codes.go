package kv

// researcherCode drops the erased interview's quotes from a researcher code and counts
// its interviews, share and segments again from the quotes left. A code stands with
// one interview, or none: it is the study's tag, which the erasure leaves.
func (e *analysisEraser) researcherCode(c map[string]any) bool {
	quotes, had := e.quotes(c, "quotes")
	ids := interviewsOf(quotes)
	c["interview_count"] = len(ids)
	c["share"] = analysisShare(len(ids), e.total) // of fewer interviews, even when not this one's
	if !had {
		return true
	}
	seg := map[string]any{}
	for id := range ids {
		for k, val := range e.contexts[id] {
			m, _ := seg[k].(map[string]any)
			if m == nil {
				m = map[string]any{}
				seg[k] = m
			}
			m[val] = intOf(m[val]) + 1
		}
	}
	c["segments"] = seg
	return true
}
