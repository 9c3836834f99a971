package findings

// ResearcherCode is one of a study's tags as researchers applied it: the interviews
// whose participants' words were annotated with it, and those words. Unlike a theme,
// which an engine finds, a code is the researchers' own reading; it stands with one
// interview.
type ResearcherCode struct {
	ID             string       `json:"id"` // the tag's id
	Name           string       `json:"name"`
	InterviewCount int          `json:"interview_count"`
	Share          float64      `json:"share"`
	Quotes         []CodedQuote `json:"quotes"`
	// Segments counts the interviews with the code by each value of each context key,
	// as a theme's do.
	Segments map[string]map[string]int `json:"segments"`
}

// CodedQuote is an annotated span, an exact span of the participant message it names
// (after redaction), with the researcher's note on it.
type CodedQuote struct {
	InterviewID  string `json:"interview_id"`
	MessageIndex int    `json:"message_index"`
	Text         string `json:"text"`
	Note         string `json:"note,omitempty"`
}
