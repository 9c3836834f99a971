package research

import (
	"context"
	"errors"

	json "github.com/goccy/go-json"

	"interviewd/analysis"
	"interviewd/kv"
	"interviewd/server/pipeline"
)

// Analysis of a live study's completed interviews (DECISIONS §22): start a job, poll
// it, read the latest or a given version. Analyses quote participants, so every
// operation needs export:read, as exports do.

// AnalysisJob is the handle start_analysis returns.
type AnalysisJob struct {
	JobID string `json:"job_id"`
}

// AnalysisStatus is an analysis job's state.
type AnalysisStatus struct {
	JobID   string  `json:"job_id"`
	StudyID string  `json:"study_id"`
	Status  string  `json:"status" enum:"queued,running,completed,failed"`
	Version *int    `json:"version,omitempty" doc:"The analysis version the job stored; present once completed."`
	Error   *string `json:"error,omitempty" doc:"Why the job failed; present only when failed. The previous version stays the latest."`
}

// GetAnalysisInput names a study and, optionally, one of its analysis versions.
type GetAnalysisInput struct {
	StudyID kv.ID `path:"study_id" doc:"The study's id."`
	Version *int  `query:"version" min:"1" doc:"An analysis version (1, 2, ...); the latest when omitted."`
}

var errAnalysisTestEnvironment = kv.Errorf(kv.EFORBIDDEN, "test_environment",
	"Test-environment credentials cannot analyse; Test-mode rehearsals have no analysis. Use a jsk_live_ key.")

// startAnalysis queues an analysis of the study, or returns the one already queued or
// running for it: asking twice never runs two.
func (s *Service) startAnalysis(ctx context.Context, p *pipeline.Principal, in *StudyIDInput) (AnalysisJob, error) {
	if p.Partition.Env != kv.EnvLive {
		return AnalysisJob{}, errAnalysisTestEnvironment
	}
	if err := s.Jobs.Admit(kv.JobAnalysis); err != nil {
		return AnalysisJob{}, err
	}
	j, created, err := s.DB.CreateAnalysisJob(ctx, kv.AnalysisInput{
		Partition: p.Partition, JobID: kv.NewV4(), StudyID: in.StudyID, Trigger: kv.AnalysisOnRequest, Limit: s.Jobs.AnalysisLimit(),
		Idem: func(id kv.ID) *kv.IdemWrite { return pipeline.IdemWrite(ctx, AnalysisJob{JobID: id.String()}) },
	})
	if err != nil {
		return AnalysisJob{}, err
	}
	if created || j.Status == kv.AnalysisQueued {
		s.Jobs.Enqueue(j) // a job this process already holds is not queued twice
	}
	return AnalysisJob{JobID: j.ID.String()}, nil
}

func (s *Service) getAnalysisStatus(ctx context.Context, p *pipeline.Principal, in *JobIDInput) (AnalysisStatus, error) {
	id, err := in.id()
	if err != nil {
		return AnalysisStatus{}, err
	}
	j, err := s.DB.FindJobByID(ctx, p.Partition, kv.JobAnalysis, id)
	if err != nil {
		return AnalysisStatus{}, err
	}
	out := AnalysisStatus{JobID: j.ID.String(), Status: j.Status}
	if j.StudyID != nil {
		out.StudyID = j.StudyID.String()
	}
	if o, ok := j.AnalysisOutcome(); ok {
		out.Version = &o.Version
	}
	if j.Status == kv.AnalysisFailed {
		msg := j.Error
		if msg == "" {
			msg = "The analysis did not complete."
		}
		out.Error = &msg
	}
	return out, nil
}

// getAnalysis returns the study's latest completed analysis, or the version asked for.
func (s *Service) getAnalysis(ctx context.Context, p *pipeline.Principal, in *GetAnalysisInput) (analysis.Analysis, error) {
	if p.Partition.Env != kv.EnvLive {
		return analysis.Analysis{}, errAnalysisTestEnvironment
	}
	st, err := s.DB.FindStudyByID(ctx, p.Partition, in.StudyID)
	if err != nil {
		return analysis.Analysis{}, err
	}
	if st.LaunchedAt == nil {
		return analysis.Analysis{}, kv.ErrStudyNotLive()
	}
	version := 0
	if in.Version != nil {
		version = *in.Version
	}
	v, err := s.DB.FindAnalysis(ctx, p.Partition, st.ID, version)
	if err != nil {
		return analysis.Analysis{}, err
	}
	var a analysis.Analysis
	if err := json.Unmarshal(v.Body, &a); err != nil {
		return analysis.Analysis{}, errors.Join(errors.New("stored analysis does not decode"), err)
	}
	a.StudyID, a.Version = st.ID.String(), v.Version
	normaliseAnalysis(&a)
	return a, nil
}

// normaliseAnalysis makes every list and map of a non-nil, so the answer says [] and
// {} rather than null wherever the schema promises an array or an object.
func normaliseAnalysis(a *analysis.Analysis) {
	a.Objectives = nonNilSlice(a.Objectives)
	a.Themes = nonNilSlice(a.Themes)
	a.Questions = nonNilSlice(a.Questions)
	a.Suggestions = nonNilSlice(a.Suggestions)
	for i := range a.Objectives {
		o := &a.Objectives[i]
		o.Findings = nonNilSlice(o.Findings)
		for j := range o.Findings {
			o.Findings[j].Support = nonNilSlice(o.Findings[j].Support)
			o.Findings[j].Contrary = nonNilSlice(o.Findings[j].Contrary)
		}
	}
	for i := range a.Themes {
		t := &a.Themes[i]
		t.Quotes = nonNilSlice(t.Quotes)
		if t.Segments == nil {
			t.Segments = map[string]map[string]int{}
		}
		for k, v := range t.Segments {
			if v == nil {
				t.Segments[k] = map[string]int{}
			}
		}
	}
	for i := range a.Questions {
		q := &a.Questions[i]
		q.Groups = nonNilSlice(q.Groups)
		for j := range q.Groups {
			q.Groups[j].Quotes = nonNilSlice(q.Groups[j].Quotes)
		}
	}
	for i := range a.Suggestions {
		a.Suggestions[i].Quotes = nonNilSlice(a.Suggestions[i].Quotes)
	}
}

func nonNilSlice[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// InterviewEnded follows a turn that may have ended an interview: it is logged, and a
// completed live interview asks for its study to be analysed again.
func (s *Service) InterviewEnded(iv kv.Interview) {
	s.LogInterviewEnded(iv)
	if s.Jobs != nil {
		s.Jobs.InterviewCompleted(iv)
	}
}
