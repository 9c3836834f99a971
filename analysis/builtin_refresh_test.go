package analysis

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"testing"

	"interviewd/analysis/findings"
)

// refreshStudy is smallStudy with more varied answers: n interviews, each saying two
// of the things in turn, so a few more interviews add well under refreshShare.
func refreshStudy(n int) Input {
	in := smallStudy(n)
	for i := range in.Interviews {
		in.Interviews[i].Messages = append(in.Interviews[i].Messages,
			Message{Speaker: SpeakerInterviewer, Text: "Anything else?"},
			Message{Speaker: SpeakerParticipant, Text: []string{
				"Support answered within the hour. They were friendly and fixed it.",
				"Exports to spreadsheets keep failing. We lose the formatting every time.",
				"The search is slow on big projects. It takes ages to find an old task.",
			}[i%3]})
	}
	return in
}

func analyseJSON(t *testing.T, e *builtin, in Input) []byte {
	t.Helper()
	a, err := e.Analyse(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestBuiltinRefreshDeterministic: a refresh is a function of the full run it
// extends and its own input, so two engines that fitted the same study give the
// same bytes; and a refresh with nothing new gives the full run's bytes.
func TestBuiltinRefreshDeterministic(t *testing.T) {
	all := refreshStudy(64)
	before := all
	before.Interviews = all.Interviews[:62]
	run := func() (full, again, refreshed []byte, refreshes int64) {
		e := newBuiltin(DefaultCacheBytes)
		full = analyseJSON(t, e, before)
		again = analyseJSON(t, e, before)
		refreshed = analyseJSON(t, e, all)
		return full, again, refreshed, e.refreshes.Load()
	}
	full1, again1, ref1, n1 := run()
	full2, _, ref2, _ := run()
	if n1 != 2 {
		t.Fatalf("%d refreshes, want 2 (nothing new, then two more interviews)", n1)
	}
	if !bytes.Equal(full1, full2) {
		t.Error("two engines' full runs differ")
	}
	if !bytes.Equal(again1, full1) {
		t.Error("a refresh with nothing new differs from the full run")
	}
	if !bytes.Equal(ref1, ref2) {
		t.Error("two engines' refreshes of the same study differ")
	}
	if bytes.Contains(ref1, []byte("null")) {
		t.Error("the refresh's JSON has a null list")
	}
}

// TestBuiltinRefreshKeepsThemes: a refresh keeps the study's themes and counts the
// new interviews in them, in the answer groups and in the coverage, and every quote
// is still an exact span.
func TestBuiltinRefreshKeepsThemes(t *testing.T) {
	all := refreshStudy(64)
	before := all
	before.Interviews = all.Interviews[:62]
	e := newBuiltin(DefaultCacheBytes)
	old, err := e.Analyse(context.Background(), before)
	if err != nil {
		t.Fatal(err)
	}
	a, err := e.Analyse(context.Background(), all)
	if err != nil {
		t.Fatal(err)
	}
	if e.refreshes.Load() != 1 {
		t.Fatalf("%d refreshes, want 1", e.refreshes.Load())
	}
	if n := Ground(all, a); n != 0 {
		t.Errorf("Ground dropped %d quotes", n)
	}
	if a.InterviewsIncluded != 64 {
		t.Errorf("%d interviews included, want 64", a.InterviewsIncluded)
	}
	labels := func(a *Analysis) []string {
		var out []string
		for _, th := range a.Themes {
			out = append(out, th.Label)
		}
		slices.Sort(out)
		return out
	}
	if got, want := labels(a), labels(old); !slices.Equal(got, want) {
		t.Errorf("themes after the refresh %q, before %q", got, want)
	}
	grew := false
	for _, th := range a.Themes {
		for _, o := range old.Themes {
			if o.Label == th.Label {
				if th.InterviewCount < o.InterviewCount {
					t.Errorf("theme %q fell from %d to %d interviews", th.Label, o.InterviewCount, th.InterviewCount)
				}
				grew = grew || th.InterviewCount > o.InterviewCount
			}
		}
	}
	if !grew {
		t.Error("no theme counts the new interviews")
	}
	newIDs := []string{all.Interviews[62].ID, all.Interviews[63].ID}
	q := a.Questions[0]
	if q.Answered != 64 {
		t.Errorf("first question answered by %d, want 64", q.Answered)
	}
	counted := 0
	var ids []string
	for _, g := range q.Groups {
		counted += g.Count
		ids = append(ids, g.Interviews...)
	}
	if counted != 64 {
		t.Errorf("the first question's groups count %d answers, want 64", counted)
	}
	for _, id := range newIDs {
		if !slices.Contains(ids, id) {
			t.Errorf("new interview %s is in no answer group", id)
		}
	}
	if got := findings.Summarise(a); got != a.Summary {
		t.Errorf("summary %q, want %q", a.Summary, got)
	}
}

// TestBuiltinRefreshFallsBack: whatever a refresh cannot extend is a full run,
// byte-identical to a fresh engine's: an edited, erased or reordered interview, a
// changed design, or more new material than refreshShare.
func TestBuiltinRefreshFallsBack(t *testing.T) {
	base := refreshStudy(64)
	before := base
	before.Interviews = base.Interviews[:62]
	cases := map[string]func() Input{
		"edited": func() Input {
			in := base
			in.Interviews = slices.Clone(base.Interviews)
			msgs := slices.Clone(in.Interviews[3].Messages)
			msgs[1].Text = "[redacted] " + msgs[1].Text
			in.Interviews[3].Messages = msgs
			return in
		},
		"erased": func() Input {
			in := base
			in.Interviews = slices.Delete(slices.Clone(base.Interviews), 5, 6)
			return in
		},
		"reordered": func() Input {
			in := base
			in.Interviews = slices.Clone(base.Interviews)
			in.Interviews[0], in.Interviews[1] = in.Interviews[1], in.Interviews[0]
			return in
		},
		"design": func() Input {
			in := base
			in.Objectives = append(slices.Clone(base.Objectives), "Learn what support is like.")
			return in
		},
		"too much new": func() Input {
			in := refreshStudy(80)
			return in
		},
	}
	for name, input := range cases {
		t.Run(name, func(t *testing.T) {
			in := input()
			e := newBuiltin(DefaultCacheBytes)
			analyseJSON(t, e, before)
			got := analyseJSON(t, e, in)
			if n := e.refreshes.Load(); n != 0 {
				t.Errorf("%d refreshes, want a full run", n)
			}
			if want := analyseJSON(t, newBuiltin(DefaultCacheBytes), in); !bytes.Equal(got, want) {
				t.Error("the full run differs from a fresh engine's")
			}
		})
	}
}

// TestModelCacheBounded: the fitted models stay within their bound, least recently
// used evicted first, and a model larger than the bound is not kept.
func TestModelCacheBounded(t *testing.T) {
	mc := newModelCache(1000)
	for _, s := range []string{"a", "b", "c"} {
		mc.put(s, &studyModel{size: 400})
	}
	if mc.used > mc.limit {
		t.Errorf("%d bytes kept, over the bound %d", mc.used, mc.limit)
	}
	if mc.get("a") != nil || mc.get("b") == nil || mc.get("c") == nil {
		t.Error("want a evicted, b and c kept")
	}
	mc.put("b", &studyModel{size: 2000})
	if mc.get("b") != nil {
		t.Error("a model over the bound was kept")
	}
	if mc.used != 400 {
		t.Errorf("%d bytes counted, want 400 (c alone)", mc.used)
	}
}

// TestBuiltinRefreshTwiceListed: an interview listed twice in the fitted run (the
// same id and transcript) cannot be matched one for one, so what follows is a full
// run, not a refresh that miscounts it.
func TestBuiltinRefreshTwiceListed(t *testing.T) {
	base := refreshStudy(64)
	before := base
	before.Interviews = append(slices.Clone(base.Interviews[:62]), base.Interviews[61])
	e := newBuiltin(DefaultCacheBytes)
	analyseJSON(t, e, before)
	for _, in := range []Input{before, base} {
		got := analyseJSON(t, e, in)
		if n := e.refreshes.Load(); n != 0 {
			t.Fatalf("%d refreshes, want full runs", n)
		}
		if want := analyseJSON(t, newBuiltin(DefaultCacheBytes), in); !bytes.Equal(got, want) {
			t.Error("the full run differs from a fresh engine's")
		}
	}
}
