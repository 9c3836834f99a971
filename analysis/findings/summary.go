package findings

import (
	"fmt"
	"slices"
	"strings"
)

// Summarise says in a few plain sentences what the analysis found: how many
// interviews, the top themes, any disagreement and the objectives with thin evidence.
// The built-in engine writes it, and an erasure writes it again over what remains.
func Summarise(a *Analysis) string {
	n := a.InterviewsIncluded
	if n == 0 {
		return "No completed live interviews yet, so there is nothing to report; every objective is a gap."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s analysed.", plural(n, "interview"))
	if len(a.Themes) > 0 {
		var top []string
		for _, t := range a.Themes[:min(3, len(a.Themes))] {
			top = append(top, fmt.Sprintf("%s (%d of %d)", t.Label, t.InterviewCount, n))
		}
		fmt.Fprintf(&b, " The most common themes: %s.", strings.Join(top, ", "))
	} else {
		b.WriteString(" No theme recurs across interviews.")
	}
	var split []string
	for _, o := range a.Objectives {
		for _, f := range o.Findings {
			if strings.HasPrefix(f.Statement, "Participants disagree about ") {
				subject, _, _ := strings.Cut(strings.TrimPrefix(f.Statement, "Participants disagree about "), ":")
				if !slices.Contains(split, subject) {
					split = append(split, subject)
				}
			}
		}
	}
	if len(split) > 0 {
		fmt.Fprintf(&b, " Participants disagree about %s.", strings.Join(split, " and "))
	}
	var gaps []string
	for _, o := range a.Objectives {
		if o.Gap {
			gaps = append(gaps, fmt.Sprintf("%q (%d of %d)", o.Objective, o.Coverage.Interviews, n))
		}
	}
	if len(gaps) > 0 {
		fmt.Fprintf(&b, " Too little evidence for: %s.", strings.Join(gaps, "; "))
	}
	return b.String()
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
