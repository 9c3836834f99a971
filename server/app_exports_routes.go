package server

import (
	"interviewd/webui"
)

// The exports pages need export:read (owners and admins); the operations check it
// again, and refuse the test environment as the API does.
func (s *Server) appExportRoutes() []appRoute {
	return []appRoute{
		{"GET", "/exports", accessAdmin, s.handleAppExports},
		{"POST", "/exports", accessAdmin, s.handleAppExportStart},
		{"GET", "/exports/{job_id}", accessAdmin, s.handleAppExport},
		{"GET", "/exports/{job_id}/status", accessAdmin, s.handleAppExportStatus},
		{"GET", "/exports/{job_id}/download", accessAdmin, s.handleAppExportDownload},
	}
}

func exportsPage(title string, status int, name string, data any) *appPage {
	return &appPage{name: name, status: status, title: title, nav: webui.NavExports, data: data}
}

func (s *Server) handleAppExports(r *request) error {
	page, err := s.buildExportsPage(r.ctx, r.p, query(r, "study"))
	if err != nil {
		return err
	}
	r.out = exportsPage("Exports", 0, webui.PageExports, page)
	return nil
}

func (s *Server) handleAppExportStart(r *request) error {
	study, format := r.formValue("study_id"), r.formValue("format")
	job, err := s.appStartExport(r.ctx, r.p, study, format)
	if fe := formErrors(err); fe != nil {
		page, perr := s.buildExportsPage(r.ctx, r.p, study)
		if perr != nil {
			return perr
		}
		page.Errors = fe
		r.out = exportsPage("Exports", 422, webui.PageExports, page)
		return nil
	}
	if err != nil {
		return err
	}
	r.out = appRedirect{to: "/app/exports/" + job}
	return nil
}

func (s *Server) handleAppExport(r *request) error {
	page, err := s.buildExportPage(r.ctx, r.p, pathString(r, "job_id"))
	if err != nil {
		return err
	}
	r.out = exportsPage("Export", 0, webui.PageExport, page)
	return nil
}

func (s *Server) handleAppExportStatus(r *request) error {
	st, err := appCall[ExportStatus](r.ctx, s, r.p, "get_export_status", &JobIDInput{JobID: pathString(r, "job_id")})
	if err != nil {
		return err
	}
	return writeAppJSON(r, st)
}

// handleAppExportDownload streams a finished export as an attachment (never cached:
// the app's headers say no-store).
func (s *Server) handleAppExportDownload(r *request) error {
	f, err := s.appExportDownload(r.ctx, r.p, pathString(r, "job_id"))
	if err != nil {
		return err
	}
	sent, err := s.redirectArtifact(r.ctx, r.c, f.Key, f.MediaType, f.Filename, s.now().Add(downloadURLLifetime))
	if err != nil {
		return err
	}
	if !sent {
		if err := s.streamArtifact(r.ctx, r.c, f.Key, f.MediaType, f.Filename); err != nil {
			return err
		}
	}
	r.written = true
	return nil
}
