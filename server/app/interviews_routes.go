package app

import (
	"interviewd/server/pipeline"
	"interviewd/webui"
)

// The interviews pages read interviews, which needs export:read: only owners and
// admins hold it (a member gets the 403 page), so the routes are admin-only and the
// operations check the scope again.
func (s *App) appInterviewRoutes() []appRoute {
	return []appRoute{
		{"GET", "/interviews", AccessMember, s.handleAppInterviews},
		{"GET", "/interviews/{interview_id}", AccessMember, s.handleAppTranscript},
	}
}

func (s *App) handleAppInterviews(r *pipeline.Request) error {
	q := InterviewsQuery{Study: query(r, "study"), Status: query(r, "status"), Rehearsal: query(r, "rehearsal"),
		Link: query(r, "link"), Modality: query(r, "modality"), Context: query(r, "context"), Length: query(r, "length"), Cursor: query(r, "cursor")}
	page, err := s.buildInterviewsPage(r.Ctx, r.P, q)
	if err != nil {
		return err
	}
	r.Out = &appPage{name: webui.PageInterviews, title: "Interviews", nav: webui.NavInterviews, data: page}
	return nil
}

// handleAppTranscript is the permalink every interview carries.
func (s *App) handleAppTranscript(r *pipeline.Request) error {
	id, err := pathID(r, "interview_id")
	if err != nil {
		return err
	}
	page, err := s.buildTranscriptPage(r.Ctx, r.P, id)
	if err != nil {
		return err
	}
	r.Out = &appPage{name: webui.PageTranscript, title: "Interview · " + page.StudyName, nav: webui.NavInterviews, data: page}
	return nil
}
