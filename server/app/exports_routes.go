package app

import (
	"interviewd/server/pipeline"
	"interviewd/server/research"
	"interviewd/webui"
)

// The exports pages need export:read (owners and admins); the operations check it
// again, and refuse the test environment as the API does.
func (s *App) appExportRoutes() []appRoute {
	return []appRoute{
		{"GET", "/exports", AccessAdmin, s.handleAppExports},
		{"POST", "/exports", AccessAdmin, s.handleAppExportStart},
		{"GET", "/exports/{job_id}", AccessAdmin, s.handleAppExport},
		{"GET", "/exports/{job_id}/status", AccessAdmin, s.handleAppExportStatus},
		{"GET", "/exports/{job_id}/download", AccessAdmin, s.handleAppExportDownload},
	}
}

func exportsPage(title string, status int, name string, data any) *appPage {
	return &appPage{name: name, status: status, title: title, nav: webui.NavExports, data: data}
}

func (s *App) handleAppExports(r *pipeline.Request) error {
	page, err := s.buildExportsPage(r.Ctx, r.P, query(r, "study"))
	if err != nil {
		return err
	}
	r.Out = exportsPage("Exports", 0, webui.PageExports, page)
	return nil
}

func (s *App) handleAppExportStart(r *pipeline.Request) error {
	study, format := formValue(r, "study_id"), formValue(r, "format")
	job, err := s.appStartExport(r.Ctx, r.P, study, format)
	if fe := formErrors(err); fe != nil {
		page, perr := s.buildExportsPage(r.Ctx, r.P, study)
		if perr != nil {
			return perr
		}
		page.Errors = fe
		r.Out = exportsPage("Exports", 422, webui.PageExports, page)
		return nil
	}
	if err != nil {
		return err
	}
	r.Out = appRedirect{to: "/app/exports/" + job}
	return nil
}

func (s *App) handleAppExport(r *pipeline.Request) error {
	page, err := s.buildExportPage(r.Ctx, r.P, pathString(r, "job_id"))
	if err != nil {
		return err
	}
	r.Out = exportsPage("Export", 0, webui.PageExport, page)
	return nil
}

func (s *App) handleAppExportStatus(r *pipeline.Request) error {
	st, err := Call[research.ExportStatus](r.Ctx, s, r.P, "get_export_status", &research.JobIDInput{JobID: pathString(r, "job_id")})
	if err != nil {
		return err
	}
	return writeAppJSON(r, st)
}

// handleAppExportDownload streams a finished export as an attachment (never cached:
// the app's headers say no-store).
func (s *App) handleAppExportDownload(r *pipeline.Request) error {
	f, err := s.appExportDownload(r.Ctx, r.P, pathString(r, "job_id"))
	if err != nil {
		return err
	}
	sent, err := s.RedirectArtifact(r.Ctx, r.C, f.Key, f.MediaType, f.Filename, s.Now().Add(research.DownloadURLLifetime))
	if err != nil {
		return err
	}
	if !sent {
		if err := s.StreamArtifact(r.Ctx, r.C, f.Key, f.MediaType, f.Filename); err != nil {
			return err
		}
	}
	r.Written = true
	return nil
}
