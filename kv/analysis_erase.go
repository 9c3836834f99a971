package kv

import (
	"math"
	"slices"

	json "github.com/goccy/go-json"

	"interviewd/analysis/findings"
)

// Erasing an interview takes it out of every stored analysis version of its study:
// its quotes go, and so do its counts (interviews included, objective coverage, a
// theme's interviews and segments, answered and skipped, group and suggestion counts),
// by the same rules the grounding check applies to a dropped quote: a finding, answer
// group or suggestion left with no quote goes, a theme left with quotes from fewer
// than two interviews goes, shares and gaps are worked out again over the
// interviews that remain, and the summary is written again from what is left.
//
// The findings are kept as JSON the analysis package defines (kv does not import it),
// so they are edited as a JSON document: members kv does not know pass through
// unchanged, and any object anywhere that quotes the interview is removed as well.

// AnalysisRef names one stored analysis version.
type AnalysisRef struct {
	StudyID ID  `json:"study_id"`
	Version int `json:"version"`
}

// Gap thresholds, as the analysis package defines a gap: fewer than 3 interviews, or
// under 20% of them, give evidence.
const (
	analysisGapMinInterviews = 3
	analysisGapMinShare      = 0.2
)

// eraseAnalysesOf takes the interviews out of every analysis version of their studies
// and returns the versions it changed.
func eraseAnalysesOf(tx Tx, ivs map[ID]Interview) ([]AnalysisRef, error) {
	type studyKey struct {
		p     Partition
		study ID
	}
	byStudy := map[studyKey][]ID{}
	for _, iv := range ivs {
		k := studyKey{iv.Partition(), iv.StudyID}
		byStudy[k] = append(byStudy[k], iv.ID)
	}
	var out []AnalysisRef
	b := tx.Bucket(bucketAnalyses)
	for sk, ids := range byStudy {
		prefix := sk.p.key(sk.study)
		var changed []AnalysisVersion
		c := b.Cursor()
		for k, raw := c.Seek(prefix); k != nil && len(k) == len(prefix)+4 && string(k[:len(prefix)]) == string(prefix); k, raw = c.Next() {
			var v AnalysisVersion
			if err := jsonUnmarshal(raw, &v); err != nil {
				return nil, err
			}
			touched := false
			for _, id := range ids {
				if !v.includes(id) {
					continue
				}
				var err error
				if v, err = eraseFromVersion(v, id); err != nil {
					return nil, err
				}
				touched = true
			}
			if touched {
				changed = append(changed, v)
			}
		}
		for _, v := range changed { // written after the walk: no writes under a cursor
			if err := putJSON(b, analysisKey(sk.p, v.StudyID, v.Version), v); err != nil {
				return nil, err
			}
			out = append(out, AnalysisRef{StudyID: v.StudyID, Version: v.Version})
		}
	}
	return out, nil
}

// includes reports whether the version was made from the interview.
func (v AnalysisVersion) includes(id ID) bool {
	for _, s := range v.Sources {
		if s.InterviewID == id {
			return true
		}
	}
	return false
}

// eraseFromVersion returns v without interview gone: out of its sources and out of its
// findings.
func eraseFromVersion(v AnalysisVersion, gone ID) (AnalysisVersion, error) {
	var src AnalysisSource
	kept := make([]AnalysisSource, 0, len(v.Sources))
	found := false
	for _, s := range v.Sources {
		if s.InterviewID == gone {
			src, found = s, true
			continue
		}
		kept = append(kept, s)
	}
	if !found {
		return v, nil
	}
	var doc map[string]any
	if err := json.Unmarshal(v.Body, &doc); err != nil {
		return v, err
	}
	e := analysisEraser{gone: gone.String(), src: src, counted: v.Counted, total: len(kept), contexts: map[string]map[string]string{}}
	for _, s := range kept {
		e.contexts[s.InterviewID.String()] = s.Context
	}
	e.erase(doc)
	if err := resummarise(doc); err != nil {
		return v, err
	}
	body, err := json.Marshal(doc)
	if err != nil {
		return v, err
	}
	v.Sources, v.Body, v.Erased = kept, body, v.Erased+1
	return v, nil
}

// analysisEraser edits one analysis document.
type analysisEraser struct {
	gone     string         // the erased interview's id
	src      AnalysisSource // what it was counted under
	counted  bool           // src names its objectives and answer groups
	total    int            // interviews left
	contexts map[string]map[string]string
}

func (e *analysisEraser) erase(doc map[string]any) {
	doc["interviews_included"] = e.total
	if objs, ok := doc["objectives"].([]any); ok {
		for i, o := range objs {
			if om, ok := o.(map[string]any); ok {
				e.objective(om, i)
			}
		}
	}
	if themes, ok := doc["themes"].([]any); ok {
		doc["themes"] = keepObjects(themes, e.theme)
	}
	if qs, ok := doc["questions"].([]any); ok {
		for i, q := range qs {
			if qm, ok := q.(map[string]any); ok {
				e.question(qm, i)
			}
		}
	}
	if ss, ok := doc["suggestions"].([]any); ok {
		doc["suggestions"] = keepObjects(ss, func(s map[string]any) bool {
			quotes, _ := e.quotes(s, "quotes")
			if len(quotes) == 0 {
				return false
			}
			s["interview_count"] = len(interviewsOf(quotes))
			return true
		})
	}
	if codes, ok := doc["researcher_codes"].([]any); ok {
		doc["researcher_codes"] = keepObjects(codes, e.researcherCode)
	}
	// Whatever else quotes the interview (a member added after this was written).
	e.scrub(doc)
}

// objective drops the interview's quotes from the findings (and findings left with
// none) and takes it out of the coverage when it was part of the evidence: as its
// source records, or (for versions stored before sources did) when it was quoted.
func (e *analysisEraser) objective(o map[string]any, at int) {
	had := false
	if fs, ok := o["findings"].([]any); ok {
		o["findings"] = keepObjects(fs, func(f map[string]any) bool {
			sup, a := e.quotes(f, "support")
			con, b := e.quotes(f, "contrary")
			had = had || a || b
			return len(sup)+len(con) > 0
		})
	}
	n := 0
	if cov, ok := o["coverage"].(map[string]any); ok {
		n = intOf(cov["interviews"])
	}
	if e.counted {
		had = slices.Contains(e.src.Objectives, at)
	}
	if had {
		n--
	}
	n = min(max(n, 0), e.total)
	o["coverage"] = map[string]any{"interviews": n, "of": e.total, "share": analysisShare(n, e.total)}
	o["gap"] = n < analysisGapMinInterviews || e.total == 0 || float64(n) < analysisGapMinShare*float64(e.total)
}

// theme drops the interview's quotes and reports whether the theme still stands (two
// interviews or more); its counts, share and segments follow its quotes.
func (e *analysisEraser) theme(t map[string]any) bool {
	quotes, had := e.quotes(t, "quotes")
	ids := interviewsOf(quotes)
	if len(ids) < 2 {
		return false
	}
	t["interview_count"] = len(ids)
	t["share"] = analysisShare(len(ids), e.total)
	if had {
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
		t["segments"] = seg
	}
	return true
}

// question takes the interview out of answered or skipped, and out of the answer
// groups that count it (a group left with no quote goes).
func (e *analysisEraser) question(q map[string]any, at int) {
	text, _ := q["question"].(string)
	answered := false
	for _, a := range e.src.Answered {
		if a == text {
			answered = true
		}
	}
	if answered {
		q["answered"] = max(intOf(q["answered"])-1, 0)
	} else {
		q["skipped"] = max(intOf(q["skipped"])-1, 0)
	}
	if gs, ok := q["groups"].([]any); ok {
		q["groups"] = keepObjects(gs, func(g map[string]any) bool {
			quotes, had := e.quotes(g, "quotes")
			if len(quotes) == 0 {
				return false
			}
			count := intOf(g["count"])
			if e.counted {
				label, _ := g["label"].(string)
				had = slices.Contains(e.src.Groups, AnalysisGroupRef{Question: at, Label: label})
			}
			if had {
				count--
			}
			g["count"] = max(count, len(quotes))
			return true
		})
	}
}

// quotes removes the erased interview's quotes from obj[key] and returns the quotes
// left and whether any was removed.
func (e *analysisEraser) quotes(obj map[string]any, key string) ([]any, bool) {
	list, ok := obj[key].([]any)
	if !ok {
		return nil, false
	}
	kept := make([]any, 0, len(list))
	for _, q := range list {
		if e.quotes1(q) {
			continue
		}
		kept = append(kept, q)
	}
	obj[key] = kept
	return kept, len(kept) != len(list)
}

// quotes1 reports whether v is an object that names the erased interview.
func (e *analysisEraser) quotes1(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	id, _ := m["interview_id"].(string)
	return id == e.gone
}

// scrub removes, at any depth, the array elements that name the erased interview.
func (e *analysisEraser) scrub(v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, child := range t {
			if list, ok := child.([]any); ok {
				kept := list[:0:0]
				for _, el := range list {
					if !e.quotes1(el) {
						kept = append(kept, el)
					}
				}
				if len(kept) != len(list) {
					t[k] = kept
					child = kept
				}
			}
			e.scrub(child)
		}
	case []any:
		for _, el := range t {
			e.scrub(el)
		}
	}
}

// keepObjects returns the objects of list that keep accepts (editing them in place);
// elements that are not objects are kept as they are.
func keepObjects(list []any, keep func(map[string]any) bool) []any {
	out := make([]any, 0, len(list))
	for _, el := range list {
		if m, ok := el.(map[string]any); ok && !keep(m) {
			continue
		}
		out = append(out, el)
	}
	return out
}

// interviewsOf returns the set of interviews the quotes come from.
func interviewsOf(quotes []any) map[string]bool {
	ids := map[string]bool{}
	for _, q := range quotes {
		if m, ok := q.(map[string]any); ok {
			if id, ok := m["interview_id"].(string); ok {
				ids[id] = true
			}
		}
	}
	return ids
}

// intOf reads a JSON number as an int (0 for anything else).
func intOf(v any) int {
	switch n := v.(type) {
	case float64:
		return int(n)
	case int:
		return n
	case json.Number:
		i, _ := n.Int64()
		return int(i)
	}
	return 0
}

// analysisShare is n/of rounded to four places, as the analysis package writes shares.
func analysisShare(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return math.Round(float64(n)/float64(of)*1e4) / 1e4
}

// resummarise writes the summary again over what the erasure left: the one a version
// was stored with names counts (and, from a model, may paraphrase the participant)
// that are no longer true.
func resummarise(doc map[string]any) error {
	raw, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	var a findings.Analysis
	if err := json.Unmarshal(raw, &a); err != nil {
		return err
	}
	doc["summary"] = findings.Summarise(&a)
	return nil
}
