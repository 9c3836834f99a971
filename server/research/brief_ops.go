package research

import (
	"context"

	"interviewd/kv"
	"interviewd/server/pipeline"
)

// UpdateBriefInput is a whole brief written directly, replacing the study's current
// one. Every field is required, as PUT replaces: a client that leaves one out is told
// so rather than having it cleared. The limits are kv.ValidateBrief's, the same an
// authoring engine's brief meets, checked there all at once (the doc* tags only
// document them; TestBriefLimitsDocumented keeps the two equal).
type UpdateBriefInput struct {
	StudyID                  kv.ID    `path:"study_id" doc:"The study."`
	Title                    string   `json:"title" required:"true" docMinLength:"1" docMaxLength:"200" doc:"The study's title (and name): 1 to 200 characters on one line after trimming."`
	Objectives               []string `json:"objectives" required:"true" docMinItems:"1" docMaxItems:"20" docItemMaxLength:"1000" doc:"What the study sets out to learn: 1 to 20 items, each 1 to 1,000 characters after trimming (line breaks allowed)."`
	PreInterviewQuestions    []string `json:"pre_interview_questions" required:"true" docMaxItems:"50" docItemMaxLength:"1000" doc:"Screener questions asked before the interview, in order: up to 50, each 1 to 1,000 characters after trimming."`
	VerbatimQuestions        []string `json:"verbatim_questions" required:"true" docMinItems:"1" docMaxItems:"50" docItemMaxLength:"1000" doc:"Questions asked word for word during the interview, in order: 1 to 50, each 1 to 1,000 characters after trimming."`
	EstimatedDurationMinutes *int     `json:"estimated_duration_minutes" required:"true" docMinimum:"1" docMaximum:"480" doc:"Planned length in minutes, 1 to 480, or null when not specified."`

	// BaseVersion, set by the app's form (never from the wire: design versions are not
	// on the API), is the version the form was opened at; a save over a newer one is
	// refused rather than overwriting it unseen.
	BaseVersion int `json:"-"`
}

func (in *UpdateBriefInput) brief() kv.Brief {
	title := in.Title
	return kv.Brief{Title: &title, Objectives: in.Objectives, PreInterviewQuestions: in.PreInterviewQuestions,
		VerbatimQuestions: in.VerbatimQuestions, EstimatedDurationMinutes: in.EstimatedDurationMinutes}
}

func (in *UpdateBriefInput) Validate() []kv.FieldError {
	var errs []kv.FieldError
	null := map[string]bool{} // the binder takes null for an absent list; a brief has lists
	for _, l := range []struct {
		name  string
		items []string
	}{{"objectives", in.Objectives}, {"pre_interview_questions", in.PreInterviewQuestions}, {"verbatim_questions", in.VerbatimQuestions}} {
		if l.items == nil {
			null[l.name] = true
			errs = append(errs, kv.FieldError{Loc: []any{l.name}, Msg: "Input should be a valid list.", Type: "list_type"})
		}
	}
	b, err := kv.ValidateBrief(in.brief())
	if err != nil {
		var ke *kv.Error
		if !pipeline.AsKV(err, &ke) {
			return append(errs, kv.FieldError{Loc: []any{}, Msg: err.Error(), Type: "value_error"})
		}
		for _, f := range ke.Fields {
			if len(f.Loc) == 1 && null[f.Loc[0].(string)] {
				continue // said once, as not a list
			}
			errs = append(errs, f)
		}
	}
	if errs != nil {
		return errs
	}
	in.Title, in.Objectives, in.PreInterviewQuestions, in.VerbatimQuestions = *b.Title, b.Objectives, b.PreInterviewQuestions, b.VerbatimQuestions
	return nil
}

// updateStudyBrief saves the brief as the study's next design version, the way a
// refine does but at once: interviews already started keep the version they started
// with. A brief equal to the current one saves nothing (PUT is idempotent) and answers
// the study as it is.
func (s *Service) updateStudyBrief(ctx context.Context, p *pipeline.Principal, in *UpdateBriefInput) (StudyDetail, error) {
	st, changed, err := s.DB.EditBrief(ctx, kv.BriefEdit{Partition: p.Partition, StudyID: in.StudyID, Brief: in.brief(), BaseVersion: in.BaseVersion,
		Idem: func(st kv.Study) *kv.IdemWrite { return pipeline.IdemWrite(ctx, NewStudyDetail(st)) }})
	if err != nil {
		return StudyDetail{}, err
	}
	if changed {
		s.Log.Info().Str("org_id", p.Partition.Org.String()).Str("environment", string(p.Partition.Env)).
			Str("study_id", st.ID.String()).Int("design_version", st.Version).Str("mode", string(st.Mode)).Msg("study brief edited")
	}
	return NewStudyDetail(st), nil
}
