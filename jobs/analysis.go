package jobs

import (
	"context"
	"errors"
	"sort"
	"unicode/utf8"

	json "github.com/goccy/go-json"

	"interviewd/analysis"
	"interviewd/kv"
	"interviewd/plugins"
)

// An analysis reads what an export reads: the study's completed live interviews
// (never test-mode rehearsals, test-environment interviews or simulations), redacted by
// the organisation's chain exactly as an export's cells are. The engine sees only that
// redacted text, and every quote it returns is checked against it (analysis.Ground)
// before the version is stored, so a stored quote is an exact span of a redacted
// participant message.

// analysisMaxRunes bounds one message as the engine sees it: a participant's answer is
// at most 10,000 characters, and an interviewer message longer than that adds nothing
// to the findings. A cut message is a prefix of the redacted message, so a quote of it
// is still an exact span of what was said.
const analysisMaxRunes = 10000

// AnalysisLimit is how many analyses one organisation may have queued or running at
// once (kv.AnalysisInput.Limit).
func (r *Runner) AnalysisLimit() int { return r.analysisLimit }

// Analyser returns the engine analyses run on.
func (r *Runner) Analyser() analysis.Engine { return r.analyser }

// runAnalysis analyses the study's completed live interviews and stores the next
// version. An engine failure ends the job failed with its reason and leaves the
// previous version the latest; a shutdown leaves the job for the next start, which runs
// it again from the start.
func (r *Runner) runAnalysis(ctx context.Context, j kv.Job) error {
	p := j.Partition()
	if _, err := r.db.StartAnalysis(ctx, p, j.ID); err != nil {
		return err
	}
	in, sources, err := r.analysisInput(ctx, j)
	if err != nil {
		if r.ctx.Err() != nil {
			return nil
		}
		msg := "The analysis did not complete: the interviews could not be read."
		var pe *plugins.Error
		switch {
		case kv.ErrorCode(err) == kv.ENOTFOUND:
			msg = "The analysis did not complete: the study no longer exists."
		case errors.As(err, &pe):
			msg = "The analysis did not complete: redaction failed: " + pe.Error()
		}
		r.fail(j, msg)
		return err
	}
	a, err := r.analyser.Analyse(ctx, in)
	if err == nil && a == nil {
		err = errors.New("the engine returned no analysis")
	}
	if err != nil {
		if r.ctx.Err() != nil {
			return nil // shutting down: run again after the restart
		}
		msg := "The analysis did not complete: " + err.Error()
		if ctx.Err() != nil {
			msg = "The analysis did not complete in time."
		}
		r.fail(j, msg)
		return err
	}
	analysis.Ground(in, a)
	a.ResearcherCodes = analysis.ResearcherCodes(in)
	a.StudyID = in.StudyID
	a.Engine = r.analyser.Name()
	a.InterviewsIncluded = len(in.Interviews)
	a.GeneratedAt = r.db.Now().UTC()
	body, err := json.Marshal(a)
	if err != nil {
		r.fail(j, "The analysis did not complete: its findings could not be encoded.")
		return err
	}
	countSources(sources, a)
	v, err := r.db.FinishAnalysis(ctx, p, j.ID, kv.AnalysisResult{Sources: sources, Body: body, Counted: true})
	if err != nil {
		if kv.ErrorCode(err) == kv.ENOTFOUND {
			r.fail(j, "The analysis did not complete: the study no longer exists.")
		}
		return err
	}
	r.log.Info().Str("org_id", p.Org.String()).Str("environment", string(p.Env)).Str("job_id", j.ID.String()).
		Str("study_id", in.StudyID).Int("version", v.Version).Int("interviews", a.InterviewsIncluded).
		Int("quotes_dropped", a.QuotesDropped).Str("engine", a.Engine).Msg("analysis finished")
	return nil
}

// analysisInput reads and redacts the study's completed live interviews and the design
// they were asked under: the objectives and scripted questions of every design version
// an included interview used (the current design when there is none). It returns the
// engine's input and, per interview, what a stored version counts it under.
func (r *Runner) analysisInput(ctx context.Context, j kv.Job) (analysis.Input, []kv.AnalysisSource, error) {
	p := j.Partition()
	spec, err := j.AnalysisSpec()
	if err != nil {
		return analysis.Input{}, nil, err
	}
	st, err := r.db.FindStudyByID(ctx, p, spec.StudyID)
	if err != nil {
		return analysis.Input{}, nil, err
	}
	ivs, err := r.db.FindExportInterviews(ctx, p, spec.StudyID)
	if err != nil {
		return analysis.Input{}, nil, err
	}
	design, err := r.analysisDesign(ctx, st, ivs)
	if err != nil {
		return analysis.Input{}, nil, err
	}
	rows := make([]exportInterview, 0, len(ivs))
	for _, iv := range ivs {
		msgs, err := r.db.FindTranscript(ctx, p, iv.ID)
		if err != nil {
			return analysis.Input{}, nil, err
		}
		t := make([]exportMessage, len(msgs))
		for i, m := range msgs {
			t[i] = exportMessage{Speaker: m.Speaker, Text: m.Text}
		}
		rows = append(rows, exportInterview{Interview: iv, Transcript: t})
	}
	authored := make([]string, len(design.Questions))
	for i, q := range design.Questions {
		authored[i] = q.Text
	}
	if err := r.redactTranscripts(ctx, p.Org, authored, rows); err != nil {
		return analysis.Input{}, nil, err
	}
	in := analysis.Input{StudyID: st.ID.String(), Objectives: design.Objectives, Questions: design.Questions,
		Interviews: make([]analysis.Interview, 0, len(rows))}
	sources := make([]kv.AnalysisSource, 0, len(rows))
	for _, row := range rows {
		iv := analysis.Interview{ID: row.Interview.ID.String(), DesignVersion: row.Interview.DesignVersion,
			Context: map[string]string{}, Messages: make([]analysis.Message, len(row.Transcript))}
		for k, v := range row.Interview.EntryAttributes {
			iv.Context[k] = boundText(v)
		}
		for i, m := range row.Transcript {
			iv.Messages[i] = analysis.Message{Speaker: m.Speaker, Text: boundText(m.Text)}
		}
		in.Interviews = append(in.Interviews, iv)
		sources = append(sources, kv.AnalysisSource{InterviewID: row.Interview.ID, Context: iv.Context,
			Answered: answeredQuestions(design.Questions, iv)})
	}
	if err := r.researcherCodes(ctx, p, st.ID, &in); err != nil {
		return analysis.Input{}, nil, err
	}
	return in, sources, nil
}

// analysisDesign is the objectives and scripted questions an analysis reads.
type analysisDesign struct {
	Objectives []string
	Questions  []analysis.Question
}

// analysisDesign gathers the objectives and questions of the design versions the
// interviews used, oldest version first, each once. A study without included
// interviews is read under its current design, so an empty analysis still lists every
// objective (as a gap) and every question.
func (r *Runner) analysisDesign(ctx context.Context, st kv.Study, ivs []kv.Interview) (analysisDesign, error) {
	used := map[int]bool{}
	for _, iv := range ivs {
		used[iv.DesignVersion] = true
	}
	versions := make([]int, 0, len(used))
	for v := range used {
		versions = append(versions, v)
	}
	sort.Ints(versions)
	var briefs []kv.Brief
	for _, v := range versions {
		bv, err := r.db.FindBriefVersion(ctx, st.Partition(), st.ID, v)
		if kv.ErrorCode(err) == kv.ENOTFOUND {
			continue // a version the store no longer has: the current design stands in
		}
		if err != nil {
			return analysisDesign{}, err
		}
		briefs = append(briefs, bv.Brief)
	}
	if len(briefs) == 0 && st.Brief != nil {
		briefs = append(briefs, *st.Brief)
	}
	var d analysisDesign
	seenObjective := map[string]bool{}
	seenQuestion := map[analysis.Question]bool{}
	addQuestion := func(text, kind string) {
		q := analysis.Question{Text: text, Kind: kind}
		if text != "" && !seenQuestion[q] {
			seenQuestion[q] = true
			d.Questions = append(d.Questions, q)
		}
	}
	for _, b := range briefs {
		for _, o := range b.Objectives {
			if o != "" && !seenObjective[o] {
				seenObjective[o] = true
				d.Objectives = append(d.Objectives, o)
			}
		}
		for _, q := range b.PreInterviewQuestions {
			addQuestion(q, analysis.QuestionScreener)
		}
		for _, q := range b.VerbatimQuestions {
			addQuestion(q, analysis.QuestionVerbatim)
		}
	}
	return d, nil
}

// answeredQuestions returns the text of each scripted question the interview gave a
// real answer to (not a skip): what it counts under in a version's answered figures.
func answeredQuestions(questions []analysis.Question, iv analysis.Interview) []string {
	var out []string
	seen := map[int]bool{}
	for _, ans := range analysis.AnswersOf(questions, iv) {
		if seen[ans.Question] {
			continue
		}
		for _, mi := range ans.Messages {
			if !analysis.IsNonAnswer(iv.Messages[mi].Text) {
				seen[ans.Question] = true
				out = append(out, questions[ans.Question].Text)
				break
			}
		}
	}
	return out
}

// boundText cuts s to analysisMaxRunes runes.
func boundText(s string) string {
	if utf8.RuneCountInString(s) <= analysisMaxRunes {
		return s
	}
	n := 0
	for i := range s {
		if n == analysisMaxRunes {
			return s[:i]
		}
		n++
	}
	return s
}

// countSources records in each source the objectives and answer groups whose counts
// include its interview, so that erasing it later subtracts it from exactly those.
func countSources(sources []kv.AnalysisSource, a *analysis.Analysis) {
	at := make(map[string]int, len(sources))
	for i, s := range sources {
		at[s.InterviewID.String()] = i
	}
	for oi, o := range a.Objectives {
		for _, id := range o.Interviews {
			if i, ok := at[id]; ok {
				sources[i].Objectives = append(sources[i].Objectives, oi)
			}
		}
	}
	for qi, q := range a.Questions {
		for _, g := range q.Groups {
			for _, id := range g.Interviews {
				if i, ok := at[id]; ok {
					sources[i].Groups = append(sources[i].Groups, kv.AnalysisGroupRef{Question: qi, Label: g.Label})
				}
			}
		}
	}
}
