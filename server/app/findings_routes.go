package app

import (
	"strconv"

	"interviewd/kv"
	"interviewd/server/pipeline"
	"interviewd/server/research"
	"interviewd/webui"
)

// A study's findings and dashboard read what participants said, which needs
// export:read: only owners and admins hold it (a member gets the 403 page), so the
// routes are admin-only, as the interviews and exports pages are, and the operations
// check the scope again.
func (s *App) appAnalysisRoutes() []appRoute {
	return []appRoute{
		{"GET", "/studies/{study_id}/findings", AccessMember, s.handleAppFindings},
		{"POST", "/studies/{study_id}/findings", AccessResearch, s.handleAppAnalysisStart},
		{"GET", "/studies/{study_id}/findings/status", AccessMember, s.handleAppAnalysisStatus},
		{"GET", "/studies/{study_id}/dashboard", AccessMember, s.handleAppDashboard},
	}
}

func (s *App) handleAppFindings(r *pipeline.Request) error {
	id, err := pathID(r, "study_id")
	if err != nil {
		return err
	}
	q := FindingsQuery{Job: query(r, "job"), Segment: query(r, "segment")}
	if raw := query(r, "version"); raw != "" {
		n, convErr := strconv.Atoi(raw)
		if convErr != nil || n < 1 {
			return &pipeline.APIError{Status: 422, Code: "validation_error", Detail: "Version is a whole number from 1: choose one from the list."}
		}
		q.Version = n
	}
	page, err := s.buildFindingsPage(r.Ctx, r.P, id, q)
	if err != nil {
		return err
	}
	r.Out = studyPage("Findings · "+page.StudyName, 0, page, webui.PageFindings)
	return nil
}

// handleAppAnalysisStart is the Run analysis / Refresh button: the study's analysis
// starts (or the one already under way is found) and the page watches it.
func (s *App) handleAppAnalysisStart(r *pipeline.Request) error {
	id, err := s.studyInPath(r)
	if err != nil {
		return err
	}
	job, err := s.appStartAnalysis(r.Ctx, r.P, id)
	if err != nil {
		return err
	}
	r.Out = appRedirect{to: findingsURL(id, job)}
	return nil
}

// AnalysisStatusJSON is what the findings page's script polls: the operation's own
// answer and, once completed, the page to show.
type AnalysisStatusJSON struct {
	research.AnalysisStatus
	FindingsURL string `json:"findings_url,omitempty"`
}

func (s *App) handleAppAnalysisStatus(r *pipeline.Request) error {
	id, err := s.studyInPath(r)
	if err != nil {
		return err
	}
	st, err := s.appAnalysisStatus(r.Ctx, r.P, id, query(r, "job"))
	if err != nil {
		return err
	}
	out := AnalysisStatusJSON{AnalysisStatus: st}
	if st.Status == kv.AnalysisCompleted {
		out.FindingsURL = findingsURL(id, st.JobID)
	}
	return writeAppJSON(r, out)
}

func (s *App) handleAppDashboard(r *pipeline.Request) error {
	id, err := pathID(r, "study_id")
	if err != nil {
		return err
	}
	page, err := s.buildDashboardPage(r.Ctx, r.P, id)
	if err != nil {
		return err
	}
	r.Out = studyPage("Dashboard · "+page.StudyName, 0, page, webui.PageDashboard)
	return nil
}
