// Package corpus generates interview studies with planted themes, and scores an
// analysis against what was planted. It lives apart from analysis because the
// engines must never see it: it is the ground truth their quality tests and
// benchmarks are measured by, used from tests and benchmarks only.
//
// A study has a dozen scripted questions, interviews of a participant answering
// them (themed answers, noise, skips, probes), six planted themes each worded many
// ways, one theme on which participants split (half say the price is too high, half
// that it is fair), one objective nobody speaks to, and one theme concentrated in a
// segment of a context key. Two wording sets describe two different products in
// different words, so a quality bar met on both is not met by tuning to one.
package corpus

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"interviewd/analysis"
)

// Options shape a generated study.
type Options struct {
	Seed       uint64
	Interviews int // default 40
	// Wording selects the wording set: 0 a project-management tool, 1 a meal
	// delivery service.
	Wording int
}

// Wordings is the number of wording sets.
const Wordings = 2

// Span is one planted passage: which theme a stretch of a participant message
// carries, and for the split theme which side (+1 fair, -1 too high).
type Span struct {
	InterviewID  string
	MessageIndex int
	Start, End   int
	Theme        string
	Polarity     int
}

// Study is a generated study with its ground truth.
type Study struct {
	Input analysis.Input
	// Themes names the planted themes.
	Themes []string
	Spans  []Span
	// Split is the theme participants disagree on.
	Split string
	// Unaddressed is the objective no answer speaks to.
	Unaddressed string
	// SegmentKey, SegmentTheme and SegmentValue: the theme is planted mostly in
	// interviews whose context has SegmentKey = SegmentValue.
	SegmentKey, SegmentTheme, SegmentValue, OtherValue string
}

// Generate builds a study; the same options always give the same study.
func Generate(o Options) Study {
	if o.Interviews == 0 {
		o.Interviews = 40
	}
	w := wordings[o.Wording%Wordings]
	rng := rand.New(rand.NewPCG(o.Seed, uint64(o.Wording)+0x5eed))
	st := Study{
		Input: analysis.Input{StudyID: fmt.Sprintf("study-%d-%d", o.Wording, o.Seed), Objectives: w.objectives,
			Questions: w.questions},
		Split:        w.themes[w.split].name,
		Unaddressed:  w.objectives[w.unaddressed],
		SegmentKey:   w.segmentKey,
		SegmentTheme: w.themes[w.segmentTheme].name,
		SegmentValue: w.segmentValues[1],
		OtherValue:   w.segmentValues[0],
	}
	for _, t := range w.themes {
		st.Themes = append(st.Themes, t.name)
	}
	splitSide := 0
	for n := range o.Interviews {
		id := fmt.Sprintf("iv-%03d", n+1)
		seg := w.segmentValues[n%2]
		g := gen{rng: rng, w: w, id: id}

		// 2 or 3 themes; the segment theme mostly where the segment is.
		var themes []int
		want := 2 + rng.IntN(2)
		pSeg := 0.1
		if seg == w.segmentValues[1] {
			pSeg = 0.85
		}
		if rng.Float64() < pSeg {
			themes = append(themes, w.segmentTheme)
		}
		for _, t := range rng.Perm(len(w.themes)) {
			if len(themes) == want {
				break
			}
			if t != w.segmentTheme && !contains(themes, t) {
				themes = append(themes, t)
			}
		}
		// Each theme is answered at its own question most of the time, otherwise
		// where the participant has room ("anything else?").
		at := map[int]int{}
		for _, t := range themes {
			q := w.themes[t].question
			if rng.Float64() < 0.2 {
				q = w.anythingElse
			}
			if _, taken := at[q]; taken {
				q = w.themes[t].question
			}
			at[q] = t
		}

		msgs := []analysis.Message{{Speaker: analysis.SpeakerInterviewer, Text: w.greeting}, {Speaker: analysis.SpeakerParticipant, Text: pick(rng, w.hello)}}
		for qi, q := range w.questions {
			if rng.Float64() < 0.04 {
				continue // the interviewer ran short of time and skipped it
			}
			msgs = append(msgs, analysis.Message{Speaker: analysis.SpeakerInterviewer, Text: q.Text})
			t, themed := at[qi]
			if !themed {
				msgs = append(msgs, analysis.Message{Speaker: analysis.SpeakerParticipant, Text: g.noise(qi)})
				continue
			}
			pol := 0
			if t == w.split {
				pol = []int{-1, 1}[splitSide%2]
				splitSide++
			}
			text, start, end := g.themed(t, pol)
			msgs = append(msgs, analysis.Message{Speaker: analysis.SpeakerParticipant, Text: text})
			st.Spans = append(st.Spans, Span{InterviewID: id, MessageIndex: len(msgs) - 1, Start: start, End: end, Theme: w.themes[t].name, Polarity: pol})
			if rng.Float64() < 0.35 {
				msgs = append(msgs, analysis.Message{Speaker: analysis.SpeakerInterviewer, Text: pick(rng, w.probes)})
				text, start, end := g.themed(t, pol)
				msgs = append(msgs, analysis.Message{Speaker: analysis.SpeakerParticipant, Text: text})
				st.Spans = append(st.Spans, Span{InterviewID: id, MessageIndex: len(msgs) - 1, Start: start, End: end, Theme: w.themes[t].name, Polarity: pol})
			}
		}
		msgs = append(msgs, analysis.Message{Speaker: analysis.SpeakerInterviewer, Text: w.goodbye})
		st.Input.Interviews = append(st.Input.Interviews, analysis.Interview{
			ID: id, DesignVersion: 1, Context: map[string]string{w.segmentKey: seg}, Messages: msgs,
		})
	}
	return st
}

type gen struct {
	rng *rand.Rand
	w   *wording
	id  string
}

// themed writes an answer carrying theme t (one or two of its sentences, maybe
// after a lead-in and before an aside) and returns it with the planted span.
func (g *gen) themed(t, pol int) (string, int, int) {
	tpl := g.w.themes[t].say
	if pol > 0 {
		tpl = g.w.themes[t].other
	}
	var b strings.Builder
	if g.rng.Float64() < 0.3 {
		b.WriteString(pick(g.rng, g.w.leadIns))
		b.WriteByte(' ')
	}
	start := b.Len()
	first := g.rng.IntN(len(tpl))
	b.WriteString(g.expand(tpl[first]))
	if g.rng.Float64() < 0.45 {
		second := (first + 1 + g.rng.IntN(len(tpl)-1)) % len(tpl)
		b.WriteByte(' ')
		b.WriteString(g.expand(tpl[second]))
	}
	end := b.Len()
	if g.rng.Float64() < 0.2 {
		b.WriteByte(' ')
		b.WriteString(g.expand(pick(g.rng, g.w.noise)))
	}
	return b.String(), start, end
}

// noise answers question qi without any theme: a skip now and then, a short
// answer where the question invites one, otherwise one or two asides.
func (g *gen) noise(qi int) string {
	if g.rng.Float64() < 0.05 {
		return pick(g.rng, g.w.skips)
	}
	if short, ok := g.w.short[qi]; ok && g.rng.Float64() < 0.8 {
		return pick(g.rng, short)
	}
	s := g.expand(pick(g.rng, g.w.noise))
	if g.rng.Float64() < 0.2 {
		s += " " + g.expand(pick(g.rng, g.w.noise))
	}
	return s
}

// expand fills each {a|b|c} of a template with one of its choices, and each {$list}
// with an entry of that list.
func (g *gen) expand(tpl string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(tpl, '{')
		if i < 0 {
			b.WriteString(tpl)
			return b.String()
		}
		j := strings.IndexByte(tpl[i:], '}') + i
		b.WriteString(tpl[:i])
		if name, ok := strings.CutPrefix(tpl[i+1:j], "$"); ok {
			b.WriteString(pick(g.rng, g.w.lists[name]))
		} else {
			b.WriteString(pick(g.rng, strings.Split(tpl[i+1:j], "|")))
		}
		tpl = tpl[j+1:]
	}
}

func pick(rng *rand.Rand, xs []string) string { return xs[rng.IntN(len(xs))] }

func contains(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
