package corpus

import (
	"strings"

	"interviewd/analysis"
)

// RecoveryPurity is the share of a returned theme's quotes that must come from
// passages planted with a theme for that theme to count as recovered.
const RecoveryPurity = 0.7

// Result is how well an analysis found the planted themes.
type Result struct {
	Planted   int
	Recovered int
	Themes    []ThemeScore
	// SingleInterview counts returned themes quoting fewer than two interviews.
	SingleInterview int
}

// ThemeScore is the best match for one planted theme.
type ThemeScore struct {
	Theme      string
	Label      string  // the returned theme that matched best, "" if none quoted it
	Purity     float64 // share of that theme's quotes planted with Theme
	Interviews int     // interviews that theme quotes
	Recovered  bool
}

// Score matches each planted theme to the returned theme whose quotes come most
// purely from its passages. A planted theme is recovered when that returned theme
// quotes at least two interviews and RecoveryPurity of its quotes are planted with it.
func Score(s Study, a *analysis.Analysis) Result {
	r := Result{Planted: len(s.Themes)}
	for _, t := range a.Themes {
		if interviews(t.Quotes) < 2 {
			r.SingleInterview++
		}
	}
	for _, name := range s.Themes {
		best := ThemeScore{Theme: name}
		for _, t := range a.Themes {
			if len(t.Quotes) == 0 {
				continue
			}
			hit := 0
			for _, q := range t.Quotes {
				if sp, ok := s.PlantedAt(q); ok && sp.Theme == name {
					hit++
				}
			}
			p := float64(hit) / float64(len(t.Quotes))
			n := interviews(t.Quotes)
			ok := n >= 2 && p >= RecoveryPurity
			if hit > 0 && (ok && !best.Recovered || ok == best.Recovered && p > best.Purity) {
				best = ThemeScore{Theme: name, Label: t.Label, Purity: p, Interviews: n, Recovered: ok}
			}
		}
		if best.Recovered {
			r.Recovered++
		}
		r.Themes = append(r.Themes, best)
	}
	return r
}

// PlantedAt returns the planted passage a quote falls in, if any.
func (s Study) PlantedAt(q analysis.Quote) (Span, bool) {
	var msg string
	for _, iv := range s.Input.Interviews {
		if iv.ID == q.InterviewID && q.MessageIndex >= 0 && q.MessageIndex < len(iv.Messages) {
			msg = iv.Messages[q.MessageIndex].Text
			break
		}
	}
	at := strings.Index(msg, q.Text)
	if at < 0 || q.Text == "" {
		return Span{}, false
	}
	for _, sp := range s.Spans {
		if sp.InterviewID == q.InterviewID && sp.MessageIndex == q.MessageIndex && at < sp.End && at+len(q.Text) > sp.Start {
			return sp, true
		}
	}
	return Span{}, false
}

func interviews(qs []analysis.Quote) int {
	seen := map[string]bool{}
	for _, q := range qs {
		seen[q.InterviewID] = true
	}
	return len(seen)
}
