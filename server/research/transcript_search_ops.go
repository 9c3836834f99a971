package research

import (
	"context"
	"strings"
	"unicode"
	"unicode/utf8"

	"interviewd/kv"
	"interviewd/server/pipeline"
)

// Searching a study's transcripts: words and "quoted phrases", all of which a message
// must contain, compared ignoring case (letter by letter, so offsets in the folded text
// are offsets in the message). kv scans the study's interviews with a bound on the
// messages one page reads (searchBudget), so a request costs the same whatever the
// study's size and a large study is searched over several pages: a page may hold
// fewer hits than its limit, even none, and still carry a next cursor.

const (
	searchMaxQuery   = 200   // characters of a query
	searchMaxTerms   = 10    // words and phrases in a query
	searchBudget     = 20000 // messages (and interview records) one page reads at most
	searchSnippetPad = 60    // characters of context either side of the first match
)

// TranscriptSearchInput is one page of a search.
type TranscriptSearchInput struct {
	StudyID kv.ID  `path:"study_id" doc:"The study whose transcripts are searched."`
	Query   string `query:"q" required:"true" maxLength:"200" doc:"Words and \"quoted phrases\" (up to 10), all of which a message must contain, ignoring case; a word matches inside longer words (plan matches planning)."`
	Limit   *int   `query:"limit" min:"1" max:"100" default:"20" doc:"Hits in a page, 1 to 100 (default 20)."`
	Cursor  string `query:"cursor" doc:"Opaque cursor: the X-Next-Cursor (REST) or next_cursor (MCP) of the previous page of the same search."`

	terms [][]rune // folded, set by validate
	// Raw, set by the app only (the researcher's own view), leaves snippets unredacted.
	Raw bool `json:"-"`
}

func (in *TranscriptSearchInput) Validate() []kv.FieldError {
	terms := ParseSearchQuery(in.Query)
	switch {
	case len(terms) == 0:
		return []kv.FieldError{{Loc: []any{"q"}, Type: "string_too_short", Msg: "Give a word or a \"quoted phrase\" to search for."}}
	case len(terms) > searchMaxTerms:
		return []kv.FieldError{{Loc: []any{"q"}, Type: "too_long", Msg: "Search for at most 10 words and phrases.", Ctx: map[string]any{"max_length": searchMaxTerms}}}
	}
	in.terms = terms
	return nil
}

// ParseSearchQuery splits a query into folded words and phrases; an unclosed quote
// runs to the end.
func ParseSearchQuery(q string) [][]rune {
	var terms [][]rune
	add := func(s string) {
		s = strings.Join(strings.Fields(s), " ")
		if s != "" {
			terms = append(terms, Fold(s))
		}
	}
	for q != "" {
		q = strings.TrimLeftFunc(q, unicode.IsSpace)
		if strings.HasPrefix(q, `"`) {
			end := strings.IndexByte(q[1:], '"')
			if end < 0 {
				add(q[1:])
				break
			}
			add(q[1 : 1+end])
			q = q[2+end:]
			continue
		}
		end := strings.IndexFunc(q, func(r rune) bool { return unicode.IsSpace(r) || r == '"' })
		if end < 0 {
			add(q)
			break
		}
		add(q[:end])
		q = q[end:]
	}
	return terms
}

// Fold lowers every letter one for one, so the folded text has the message's length
// in characters.
func Fold(s string) []rune {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		out = append(out, unicode.ToLower(r))
	}
	return out
}

// IndexRunes returns the first position of needle in hay at or after from, or -1.
func IndexRunes(hay, needle []rune, from int) int {
	for i := from; i+len(needle) <= len(hay); i++ {
		if hay[i] == needle[0] && equalRunes(hay[i:i+len(needle)], needle) {
			return i
		}
	}
	return -1
}

func equalRunes(a, b []rune) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// holdsAllTerms reports whether the text holds every term.
func holdsAllTerms(text string, terms [][]rune) bool {
	// Most messages hold none of the terms: a case-insensitive byte test first
	// (ASCII terms only) saves folding them.
	for _, t := range terms {
		if isASCII(t) && !containsFoldASCII(text, t) {
			return false
		}
	}
	folded := Fold(text)
	for _, t := range terms {
		if IndexRunes(folded, t, 0) < 0 {
			return false
		}
	}
	return true
}

func isASCII(t []rune) bool {
	for _, r := range t {
		if r >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// containsFoldASCII reports whether text holds the ASCII term in any letter case. A
// non-ASCII letter whose lower case is ASCII (the Kelvin sign) is missed here, and
// then found by the folded scan, which is only reached when this says yes: so such a
// message may be missed for such a term, the price of the fast test.
func containsFoldASCII(text string, t []rune) bool {
	n := len(t)
	for i := 0; i+n <= len(text); i++ {
		j := 0
		for ; j < n; j++ {
			c := text[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if rune(c) != t[j] {
				break
			}
		}
		if j == n {
			return true
		}
	}
	return false
}

// Span is a range of characters (Unicode code points from 0), end exclusive.
type Span struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// TranscriptHit is one message that holds every term.
type TranscriptHit struct {
	InterviewID  kv.ID  `json:"interview_id"`
	IsTest       bool   `json:"is_test" doc:"True for a Test-mode rehearsal."`
	MessageIndex int    `json:"message_index" doc:"The message's position in the transcript (from 0)."`
	Speaker      string `json:"speaker" enum:"interviewer,participant"`
	Start        int    `json:"start" doc:"The first match's first character in the stored message: with end, the span to annotate."`
	End          int    `json:"end" doc:"Just after the first match's last character in the stored message."`
	Snippet      string `json:"snippet" doc:"The message around the first match (redacted as an export is), with … where it was cut."`
	Highlights   []Span `json:"highlights" doc:"Every match of every term in the snippet, in characters of the snippet, in order and not overlapping."`
}

// searchTranscripts runs one page of a search.
func (s *Service) searchTranscripts(ctx context.Context, p *pipeline.Principal, in *TranscriptSearchInput) (pipeline.List[TranscriptHit], error) {
	limit := 20
	if in.Limit != nil {
		limit = *in.Limit
	}
	terms := in.terms
	hits, next, err := s.DB.SearchTranscripts(ctx, kv.TranscriptSearch{Partition: p.Partition, StudyID: in.StudyID, Limit: limit, Budget: searchBudget, Cursor: in.Cursor,
		Match: func(_, text string) bool { return holdsAllTerms(text, terms) }})
	if err != nil {
		return pipeline.List[TranscriptHit]{}, err
	}
	texts := make([]string, len(hits))
	for i, h := range hits {
		texts[i] = h.Text
	}
	if !in.Raw {
		if texts, err = s.Jobs.RedactTexts(ctx, p.Partition.Org, texts); err != nil {
			return pipeline.List[TranscriptHit]{}, err
		}
	}
	out := make([]TranscriptHit, 0, len(hits))
	for i, h := range hits {
		start, end := firstMatch(Fold(h.Text), terms)
		hit := TranscriptHit{InterviewID: h.InterviewID, IsTest: h.IsTest, MessageIndex: h.MessageIndex, Speaker: h.Speaker, Start: start, End: end}
		var ok bool
		if hit.Snippet, hit.Highlights, ok = snippet(texts[i], terms); !ok {
			// Redaction took a term away: the word was inside what an export hides, and
			// showing the hit would tell that it is there.
			continue
		}
		out = append(out, hit)
	}
	return pipeline.NewList(out, next), nil
}

// firstMatch returns the earliest match of any term in folded.
func firstMatch(folded []rune, terms [][]rune) (int, int) {
	start, end := -1, -1
	for _, t := range terms {
		if i := IndexRunes(folded, t, 0); i >= 0 && (start < 0 || i < start) {
			start, end = i, i+len(t)
		}
	}
	return max(start, 0), max(end, 0)
}

// snippet cuts text around its first match and returns every match in the cut, or
// false when text does not hold every term.
func snippet(text string, terms [][]rune) (string, []Span, bool) {
	folded := Fold(text)
	for _, t := range terms {
		if IndexRunes(folded, t, 0) < 0 {
			return "", nil, false
		}
	}
	first, firstEnd := firstMatch(folded, terms)
	from := max(first-searchSnippetPad, 0)
	to := min(firstEnd+searchSnippetPad, len(folded))
	// Start and end on a word boundary when one is near.
	for from > 0 && from > first-searchSnippetPad-15 && !unicode.IsSpace(folded[from-1]) {
		from--
	}
	for to < len(folded) && to < firstEnd+searchSnippetPad+15 && !unicode.IsSpace(folded[to]) {
		to++
	}
	var spans []Span
	for i := from; i < to; {
		best, bestEnd := -1, -1
		for _, t := range terms {
			if j := IndexRunes(folded[:to], t, i); j >= 0 && (best < 0 || j < best || (j == best && j+len(t) > bestEnd)) {
				best, bestEnd = j, j+len(t)
			}
		}
		if best < 0 {
			break
		}
		spans = append(spans, Span{Start: best - from, End: bestEnd - from})
		i = bestEnd
	}
	cut := kv.RuneSlice(text, from, to)
	prefix := 0
	if from > 0 {
		cut, prefix = "…"+cut, 1
	}
	if to < len(folded) {
		cut += "…"
	}
	for i := range spans {
		spans[i].Start += prefix
		spans[i].End += prefix
	}
	if spans == nil {
		spans = []Span{}
	}
	return cut, spans, true
}
