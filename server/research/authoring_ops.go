package research

import (
	"context"
	"strings"
	"unicode/utf8"

	"interviewd/kv"
	"interviewd/server/pipeline"
)

// Guidance limits (DECISIONS §4).
const (
	guidanceMaxChars = 20000
	MaxFileIDs       = 10
)

// CreateStudyInput is the study guidance request.
type CreateStudyInput struct {
	Guidance string  `json:"guidance" required:"true" minLength:"1" doc:"Plain-language instruction: for a new study the research goal, intended participants and what to learn; for a refine what to change. 1 to 20,000 characters after trimming."`
	FileIDs  []kv.ID `json:"file_ids" doc:"Ids from file upload, at most 10, uploaded by the same organisation and environment."`
}

func (in *CreateStudyInput) Validate() []kv.FieldError {
	return validateGuidance(&in.Guidance, in.FileIDs)
}

// RefineStudyInput is the guidance request for an existing study. Its body is the
// same StudyGuidanceRequest as create's, so its tags match CreateStudyInput's (the
// document refuses two shapes under one component name).
type RefineStudyInput struct {
	StudyID  kv.ID   `path:"study_id" doc:"The study to refine."`
	Guidance string  `json:"guidance" required:"true" minLength:"1" doc:"Plain-language instruction: for a new study the research goal, intended participants and what to learn; for a refine what to change. 1 to 20,000 characters after trimming."`
	FileIDs  []kv.ID `json:"file_ids" doc:"Ids from file upload, at most 10, uploaded by the same organisation and environment."`
}

func (in *RefineStudyInput) Validate() []kv.FieldError {
	return validateGuidance(&in.Guidance, in.FileIDs)
}

func validateGuidance(g *string, files []kv.ID) []kv.FieldError {
	var errs []kv.FieldError
	*g = strings.TrimSpace(*g)
	switch n := utf8.RuneCountInString(*g); {
	case n == 0:
		errs = append(errs, kv.FieldError{Loc: []any{"guidance"}, Msg: "Guidance must not be empty.", Type: "string_too_short", Ctx: map[string]any{"min_length": 1}})
	case n > guidanceMaxChars:
		errs = append(errs, kv.FieldError{Loc: []any{"guidance"}, Msg: "Guidance must be at most 20000 characters.", Type: "string_too_long", Ctx: map[string]any{"max_length": guidanceMaxChars}})
	}
	if len(files) > MaxFileIDs {
		errs = append(errs, kv.FieldError{Loc: []any{"file_ids"}, Msg: "At most 10 file ids.", Type: "too_long", Ctx: map[string]any{"max_length": MaxFileIDs}})
	}
	return errs
}

// AuthoringJob is the handle create and refine return.
type AuthoringJob struct {
	JobID    string `json:"job_id"`
	ThreadID kv.ID  `json:"thread_id"`
}

func (s *Service) createStudy(ctx context.Context, p *pipeline.Principal, in *CreateStudyInput) (AuthoringJob, error) {
	return s.startAuthoring(ctx, p, nil, kv.NewV4(), in.Guidance, in.FileIDs)
}

func (s *Service) refineStudy(ctx context.Context, p *pipeline.Principal, in *RefineStudyInput) (AuthoringJob, error) {
	st, err := s.DB.FindStudyByID(ctx, p.Partition, in.StudyID)
	if err != nil {
		return AuthoringJob{}, err
	}
	return s.startAuthoring(ctx, p, &st.ID, st.ThreadID, in.Guidance, in.FileIDs)
}

func (s *Service) startAuthoring(ctx context.Context, p *pipeline.Principal, study *kv.ID, thread kv.ID, guidance string, files []kv.ID) (AuthoringJob, error) {
	if err := s.Jobs.Admit(kv.JobAuthoring); err != nil {
		return AuthoringJob{}, err
	}
	jobID := kv.NewV4()
	out := AuthoringJob{JobID: jobID.String(), ThreadID: thread}
	job, err := s.DB.CreateAuthoringJob(ctx, kv.AuthoringInput{
		Partition: p.Partition, JobID: jobID, ThreadID: thread, StudyID: study, Guidance: guidance, FileIDs: files,
	}, pipeline.IdemWrite(ctx, out))
	if err != nil {
		return AuthoringJob{}, err
	}
	s.Jobs.Enqueue(job)
	return out, nil
}

// JobIDInput names a job. Job ids are strings on the wire; anything that is not one of
// ours is simply not found.
type JobIDInput struct {
	JobID string `path:"job_id" doc:"The job id a start call returned."`
}

func (in *JobIDInput) id() (kv.ID, error) {
	id, ok := kv.ParseID(in.JobID)
	if !ok {
		return kv.ID{}, kv.Errorf(kv.ENOTFOUND, "not_found", "Job not found.")
	}
	return id, nil
}

// AuthoringStatus is the state of an authoring job. Its wire shape is exactly the
// contract's three fields (a failed job with nothing saved is {failed, null, null}, on
// which the hosted service's own client raises its job-failed error), so why a job
// failed is not among them: it travels beside the answer, where each surface has room
// (an MCP result's text, an A2A task's status message, the app's page).
type AuthoringStatus struct {
	Status  string    `json:"status" enum:"working,ready,failed"`
	StudyID *kv.ID    `json:"study_id"`
	Brief   *kv.Brief `json:"brief" component:"Brief"`
	// failure is the failed job's error: the engine's reason for a refusal.
	failure string
}

// Failure returns why a failed job failed ("Nothing was changed: …"), or "".
func (o AuthoringStatus) Failure() string { return o.failure }

// ToolNote is said beside a failed job's result over MCP.
func (o AuthoringStatus) ToolNote() string {
	if o.failure == "" {
		return ""
	}
	return "The authoring job failed. " + o.failure
}

func (s *Service) getAuthoringStatus(ctx context.Context, p *pipeline.Principal, in *JobIDInput) (AuthoringStatus, error) {
	id, err := in.id()
	if err != nil {
		return AuthoringStatus{}, err
	}
	j, err := s.DB.FindJobByID(ctx, p.Partition, kv.JobAuthoring, id)
	if err != nil {
		return AuthoringStatus{}, err
	}
	out := AuthoringStatus{Status: j.Status, StudyID: j.StudyID}
	if j.Status == kv.AuthoringFailed {
		out.failure = j.Error
		if out.failure == "" {
			out.failure = "Authoring did not complete."
		}
	}
	if j.StudyID != nil {
		st, err := s.DB.FindStudyByID(ctx, p.Partition, *j.StudyID)
		switch {
		case err == nil && st.Brief != nil:
			b := st.Brief.Normalised()
			out.Brief = &b
		case kv.ErrorCode(err) == kv.ENOTFOUND:
			out.StudyID = nil
		case err != nil:
			return AuthoringStatus{}, err
		}
	}
	// A failed job answers 200 whatever was saved: {failed, null, null} when nothing was
	// (a refused request), so clients raise their job-failed error rather than an HTTP
	// one (DECISIONS §4). 409 is kept for the one case the spec names: a job that
	// completed without a failure, yet whose study change cannot be confirmed.
	if j.Status == kv.AuthoringReady && out.Brief == nil {
		return AuthoringStatus{}, kv.Errorf(kv.ECONFLICT, "authoring_unconfirmed",
			"The authoring job completed but its study change cannot be confirmed; poll the study or start a new job.")
	}
	return out, nil
}

// SetModeInput is the study mode request.
type SetModeInput struct {
	StudyID kv.ID   `path:"study_id" doc:"The study."`
	Mode    kv.Mode `json:"mode" required:"true" enum:"test,live,paused,closed" doc:"Explicit target; the endpoint never toggles."`
}

// ModeResult is the settled mode and the study's invite URL (DECISIONS §7), plus a
// notice when a live study cannot start interviews yet.
type ModeResult struct {
	Mode   kv.Mode `json:"mode" enum:"test,live,paused,closed"`
	URL    string  `json:"url"`
	Notice *string `json:"notice,omitempty" doc:"Present only when something stops the settled mode from working as expected: a study live in the live environment while the organisation has 0 credits accepts no interviews until credits are added."`
}

// noCreditsNotice is the mode response's notice for a live study of an organisation
// with no credits: the link shows "not accepting responses" until credits are added.
const noCreditsNotice = "The organisation has 0 credits: no interview starts, and the invite link says it is not accepting responses, until credits are added (interviewd credits add)."

func modeScope(in any) string {
	if in.(*SetModeInput).Mode == kv.ModeLive {
		return kv.ScopeStudiesGoLive
	}
	return kv.ScopeStudiesWrite
}

func (s *Service) setStudyMode(ctx context.Context, p *pipeline.Principal, in *SetModeInput) (ModeResult, error) {
	st, err := s.DB.SetStudyMode(ctx, p.Partition, in.StudyID, in.Mode)
	if err != nil {
		return ModeResult{}, err
	}
	out := ModeResult{Mode: st.Mode, URL: s.LinkURL(st.LinkToken)}
	noCredits := false
	if st.Mode == kv.ModeLive && p.Partition.Env == kv.EnvLive {
		// Advisory, read after the change: going live never depends on credits.
		org, err := s.DB.FindOrgByID(ctx, p.Partition.Org)
		if err != nil {
			return ModeResult{}, err
		}
		if org.Credits <= 0 {
			notice := noCreditsNotice
			out.Notice, noCredits = &notice, true
		}
	}
	s.LogModeChange(p, st, noCredits)
	return out, nil
}
