package analysis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Completer asks a language model for one JSON object matching a JSON schema. The
// schema's "title" names it. moderator.OpenAI satisfies it.
type Completer interface {
	CompleteJSON(ctx context.Context, system, user string, schema map[string]any) ([]byte, error)
}

// Bounds on what the model engine sends and accepts.
const (
	modelWorkers          = 4         // interviews read by the model at once
	modelTranscriptBytes  = 64 << 10  // transcript text sent per interview
	modelMaxStatements    = 60        // statements kept per interview
	modelConsolidateLimit = 1500      // statements sent to the consolidation call
	modelConsolidateBytes = 256 << 10 // and their text
)

// NewModel returns the model-based engine ("model:<name>"): one call per interview
// extracts its evidence (statements with the exact quote and message index, the
// objectives each speaks to, sentiment, suggestions), then one call consolidates
// themes, objective findings and suggestions across interviews. Output that does not
// have the requested shape, or a failing endpoint, fails the analysis with the
// reason; a quote the model invents is left for Ground to drop and count.
func NewModel(c Completer, name string) Engine { return &model{c: c, name: name} }

type model struct {
	c    Completer
	name string
}

func (m *model) Name() string { return "model:" + m.name }

// evidence is one statement the model extracted from one interview.
type evidence struct {
	Iv           int    // index into Input.Interviews
	MessageIndex int    `json:"message_index"`
	Quote        string `json:"quote"`
	Summary      string `json:"summary"`
	Objectives   []int  `json:"objectives"`
	Sentiment    string `json:"sentiment"`
	Suggestion   bool   `json:"suggestion"`
}

func (m *model) Analyse(ctx context.Context, in Input) (*Analysis, error) {
	a := Empty(in, m.Name())
	if len(in.Interviews) == 0 {
		a.Summary = summarise(in, a)
		return a, nil
	}
	per, err := m.extractAll(ctx, in)
	if err != nil {
		return nil, err
	}
	var all []evidence
	for _, ev := range per {
		all = append(all, ev...)
	}
	cons, err := m.consolidate(ctx, in, all)
	if err != nil {
		return nil, err
	}
	m.assemble(in, a, all, cons)
	return a, nil
}

// extractAll reads every interview with the model, modelWorkers at a time; the
// first failure cancels the rest and is returned.
func (m *model) extractAll(ctx context.Context, in Input) ([][]evidence, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out := make([][]evidence, len(in.Interviews))
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	next := make(chan int)
	for range min(modelWorkers, len(in.Interviews)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				ev, err := m.extract(ctx, in, i)
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("interview %s: %w", in.Interviews[i].ID, err)
						cancel()
					}
					mu.Unlock()
					continue
				}
				out[i] = ev
			}
		}()
	}
	for i := range in.Interviews {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	return out, ctx.Err()
}

const extractSystem = `You analyse one research interview transcript. Each line is "[index] speaker: text".
Return the participant's substantive statements. For each one:
- message_index: the index of the participant message it comes from;
- quote: text copied exactly, character for character, from that participant message (one or two sentences, never paraphrased, never from the interviewer);
- summary: what it says, in a few plain words;
- objectives: the numbers of the research objectives it gives evidence for (may be empty);
- sentiment: positive, negative, neutral or mixed;
- suggestion: true when the participant asks for or proposes something.
Skip greetings, small talk and refusals to answer.`

var evidenceSchema = map[string]any{
	"title": "interview_evidence",
	"type":  "object", "additionalProperties": false, "required": []string{"statements"},
	"properties": map[string]any{
		"statements": map[string]any{"type": "array", "items": map[string]any{
			"type": "object", "additionalProperties": false,
			"required": []string{"message_index", "quote", "summary", "objectives", "sentiment", "suggestion"},
			"properties": map[string]any{
				"message_index": map[string]any{"type": "integer"},
				"quote":         map[string]any{"type": "string"},
				"summary":       map[string]any{"type": "string"},
				"objectives":    map[string]any{"type": "array", "items": map[string]any{"type": "integer"}},
				"sentiment":     map[string]any{"type": "string", "enum": []string{SentimentPositive, SentimentNegative, SentimentNeutral, SentimentMixed}},
				"suggestion":    map[string]any{"type": "boolean"},
			},
		}},
	},
}

// extract asks the model for interview i's evidence.
func (m *model) extract(ctx context.Context, in Input, i int) ([]evidence, error) {
	var b strings.Builder
	b.WriteString("Research objectives:\n")
	for oi, o := range in.Objectives {
		fmt.Fprintf(&b, "%d. %s\n", oi+1, o)
	}
	b.WriteString("\nTranscript:\n")
	for mi, msg := range in.Interviews[i].Messages {
		line := fmt.Sprintf("[%d] %s: %s\n", mi, msg.Speaker, boundText(msg.Text, MaxReadBytes))
		if b.Len()+len(line) > modelTranscriptBytes {
			b.WriteString("[the rest of the transcript is omitted]\n")
			break
		}
		b.WriteString(line)
	}
	raw, err := m.c.CompleteJSON(ctx, extractSystem, b.String(), evidenceSchema)
	if err != nil {
		return nil, err
	}
	var reply struct {
		Statements *[]evidence `json:"statements"`
	}
	if err := json.Unmarshal(raw, &reply); err != nil || reply.Statements == nil {
		return nil, errors.New("the model's evidence is not in the requested shape")
	}
	out := make([]evidence, 0, len(*reply.Statements))
	for _, e := range *reply.Statements {
		if len(out) == modelMaxStatements {
			break
		}
		e.Iv = i
		e.Summary = clipText(e.Summary, 300)
		if !validSentiment(e.Sentiment) {
			e.Sentiment = SentimentNeutral
		}
		out = append(out, e)
	}
	return out, nil
}

// consolidation is the model's cross-interview reading, by statement number.
type consolidation struct {
	Themes []struct {
		Label       string `json:"label"`
		Description string `json:"description"`
		Sentiment   string `json:"sentiment"`
		Statements  []int  `json:"statements"`
	} `json:"themes"`
	Findings []struct {
		Objective int    `json:"objective"`
		Statement string `json:"statement"`
		Support   []int  `json:"support"`
		Contrary  []int  `json:"contrary"`
	} `json:"findings"`
	Suggestions []struct {
		Text       string `json:"text"`
		Statements []int  `json:"statements"`
	} `json:"suggestions"`
	Summary string `json:"summary"`
}

const consolidateSystem = `You consolidate evidence from several research interviews. Each line is one statement:
"S<number> <interview> [objectives] sentiment: summary | quote".
Return:
- themes: 3 to 10 patterns that recur across interviews (each from at least two interviews), with a short label, a one-sentence description, sentiment (positive, negative, neutral or mixed) and the numbers of the statements that show it;
- findings: per objective number, plain statements of what the interviews say, each with the numbers of supporting and of contrary statements; when participants disagree on a subject, put both sides on one finding;
- suggestions: requests or ideas participants voiced, each with its statement numbers;
- summary: a few plain sentences naming the main themes, any disagreement, and objectives with little evidence.
Refer to statements only by their numbers.`

var consolidationSchema = func() map[string]any {
	ints := map[string]any{"type": "array", "items": map[string]any{"type": "integer"}}
	str := map[string]any{"type": "string"}
	obj := func(props map[string]any) map[string]any {
		req := slices.Sorted(func(yield func(string) bool) {
			for k := range props {
				if !yield(k) {
					return
				}
			}
		})
		return map[string]any{"type": "object", "additionalProperties": false, "required": req, "properties": props}
	}
	s := obj(map[string]any{
		"themes": map[string]any{"type": "array", "items": obj(map[string]any{
			"label": str, "description": str, "statements": ints,
			"sentiment": map[string]any{"type": "string", "enum": []string{SentimentPositive, SentimentNegative, SentimentNeutral, SentimentMixed}},
		})},
		"findings": map[string]any{"type": "array", "items": obj(map[string]any{
			"objective": map[string]any{"type": "integer"}, "statement": str, "support": ints, "contrary": ints,
		})},
		"suggestions": map[string]any{"type": "array", "items": obj(map[string]any{"text": str, "statements": ints})},
		"summary":     str,
	})
	s["title"] = "study_themes"
	return s
}()

// consolidate sends every statement (within the bounds) and returns the model's
// themes, findings and suggestions.
func (m *model) consolidate(ctx context.Context, in Input, all []evidence) (*consolidation, error) {
	var b strings.Builder
	b.WriteString("Research objectives:\n")
	for oi, o := range in.Objectives {
		fmt.Fprintf(&b, "%d. %s\n", oi+1, o)
	}
	fmt.Fprintf(&b, "\nStatements from %d interviews:\n", len(in.Interviews))
	for si, e := range all {
		if si == modelConsolidateLimit || b.Len() > modelConsolidateBytes {
			b.WriteString("[further statements omitted]\n")
			break
		}
		objs := make([]string, len(e.Objectives))
		for k, o := range e.Objectives {
			objs[k] = fmt.Sprint(o)
		}
		fmt.Fprintf(&b, "S%d %s [%s] %s: %s | %s\n", si, in.Interviews[e.Iv].ID, strings.Join(objs, ","), e.Sentiment,
			oneLine(clipText(e.Summary, 200)), oneLine(clipText(e.Quote, 200)))
	}
	raw, err := m.c.CompleteJSON(ctx, consolidateSystem, b.String(), consolidationSchema)
	if err != nil {
		return nil, err
	}
	var probe map[string]json.RawMessage
	var cons consolidation
	if json.Unmarshal(raw, &probe) != nil || json.Unmarshal(raw, &cons) != nil ||
		probe["themes"] == nil || probe["findings"] == nil || probe["suggestions"] == nil {
		return nil, errors.New("the model's consolidation is not in the requested shape")
	}
	return &cons, nil
}

// assemble fills a from the evidence and the consolidation.
func (m *model) assemble(in Input, a *Analysis, all []evidence, cons *consolidation) {
	total := len(in.Interviews)
	g := grounder{in: in, byID: map[string]int{}}
	for i, iv := range in.Interviews {
		if _, dup := g.byID[iv.ID]; !dup {
			g.byID[iv.ID] = i
		}
	}
	quotes := func(ids []int) []Quote {
		out := []Quote{}
		for _, id := range ids {
			if id < 0 || id >= len(all) {
				continue
			}
			e := all[id]
			q := Quote{InterviewID: in.Interviews[e.Iv].ID, MessageIndex: e.MessageIndex, Text: e.Quote}
			if !slices.Contains(out, q) {
				out = append(out, q)
			}
		}
		return out
	}

	themeOf := map[int]int{} // statement → theme
	for _, t := range cons.Themes {
		if len(a.Themes) == maxThemes {
			break
		}
		qs := quotes(t.Statements)
		ids := map[string]bool{}
		addInterviews(ids, qs)
		if !validSentiment(t.Sentiment) {
			t.Sentiment = SentimentNeutral
		}
		for _, s := range t.Statements {
			if _, ok := themeOf[s]; !ok {
				themeOf[s] = len(a.Themes)
			}
		}
		a.Themes = append(a.Themes, Theme{
			ID: fmt.Sprintf("t%d", len(a.Themes)+1), Label: oneLine(clipText(t.Label, 80)),
			Description: oneLine(clipText(t.Description, 400)), Sentiment: t.Sentiment,
			InterviewCount: len(ids), Share: share(len(ids), total), Quotes: qs, Segments: g.segments(ids),
		})
	}

	for oi := range a.Objectives {
		ev := map[int]bool{}
		for _, e := range all {
			if slices.Contains(e.Objectives, oi+1) {
				ev[e.Iv] = true
			}
		}
		a.Objectives[oi].Coverage = coverage(len(ev), total)
		a.Objectives[oi].Gap = IsGap(len(ev), total)
		for i, iv := range in.Interviews {
			if ev[i] {
				a.Objectives[oi].Interviews = append(a.Objectives[oi].Interviews, iv.ID)
			}
		}
	}
	for _, f := range cons.Findings {
		oi := f.Objective - 1
		if oi < 0 || oi >= len(a.Objectives) {
			continue
		}
		a.Objectives[oi].Findings = append(a.Objectives[oi].Findings, Finding{
			Statement: oneLine(clipText(f.Statement, 400)), Support: quotes(f.Support), Contrary: quotes(f.Contrary),
		})
	}

	for _, s := range cons.Suggestions {
		if len(a.Suggestions) == maxSuggestions {
			break
		}
		qs := quotes(s.Statements)
		ids := map[string]bool{}
		addInterviews(ids, qs)
		a.Suggestions = append(a.Suggestions, Suggestion{Text: oneLine(clipText(s.Text, 300)), InterviewCount: len(ids), Quotes: qs})
	}

	m.questions(in, a, all, themeOf)
	a.Summary = oneLine(clipText(cons.Summary, 1500))
	if a.Summary == "" {
		a.Summary = summarise(in, a)
	}
}

// questions counts answers by position and groups each question's answers by the
// theme of the statements taken from them.
func (m *model) questions(in Input, a *Analysis, all []evidence, themeOf map[int]int) {
	byMsg := map[[2]int][]int{} // interview, message → statements
	for si, e := range all {
		k := [2]int{e.Iv, e.MessageIndex}
		byMsg[k] = append(byMsg[k], si)
	}
	for qi := range a.Questions {
		a.Questions[qi].Skipped = 0
	}
	groups := make([]map[string]*AnswerGroup, len(in.Questions))
	var order [][]string
	for range in.Questions {
		order = append(order, nil)
	}
	for i, iv := range in.Interviews {
		answered := make([]bool, len(in.Questions))
		for _, ans := range AnswersOf(in.Questions, iv) {
			label, quote := "", Quote{}
			for _, mi := range ans.Messages {
				if IsNonAnswer(iv.Messages[mi].Text) {
					continue
				}
				answered[ans.Question] = true
				for _, si := range byMsg[[2]int{i, mi}] {
					if t, ok := themeOf[si]; ok && label == "" {
						label = a.Themes[t].Label
						quote = Quote{InterviewID: iv.ID, MessageIndex: mi, Text: all[si].Quote}
					}
				}
				if label == "" && quote.Text == "" {
					quote = Quote{InterviewID: iv.ID, MessageIndex: mi, Text: strings.TrimSpace(iv.Messages[mi].Text)}
				}
			}
			if !answered[ans.Question] {
				continue
			}
			if label == "" {
				label = "other answers"
			}
			if groups[ans.Question] == nil {
				groups[ans.Question] = map[string]*AnswerGroup{}
			}
			gr, ok := groups[ans.Question][label]
			if !ok {
				gr = &AnswerGroup{Label: label, Quotes: []Quote{}}
				groups[ans.Question][label] = gr
				order[ans.Question] = append(order[ans.Question], label)
			}
			gr.Count++
			gr.Interviews = append(gr.Interviews, iv.ID)
			if len(gr.Quotes) < groupQuotes {
				gr.Quotes = append(gr.Quotes, quote)
			}
		}
		for qi, ok := range answered {
			if ok {
				a.Questions[qi].Answered++
			} else {
				a.Questions[qi].Skipped++
			}
		}
	}
	for qi := range a.Questions {
		for _, label := range order[qi] {
			a.Questions[qi].Groups = append(a.Questions[qi].Groups, *groups[qi][label])
		}
		slices.SortStableFunc(a.Questions[qi].Groups, func(x, y AnswerGroup) int { return y.Count - x.Count })
	}
}

func validSentiment(s string) bool {
	switch s {
	case SentimentPositive, SentimentNegative, SentimentNeutral, SentimentMixed:
		return true
	}
	return false
}

// clipText cuts s to at most n bytes on a rune boundary.
func clipText(s string, n int) string { return boundText(s, n) }

// oneLine folds whitespace runs so model text cannot add lines.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
