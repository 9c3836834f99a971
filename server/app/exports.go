package app

import (
	"context"

	"interviewd/kv"
	"interviewd/server/pipeline"
	"interviewd/server/research"
	"interviewd/webui"
)

// The exports pages: start an export, watch its progress, download it. They run the
// export operations, so the rules are the API's: export:read, live environment only,
// a format the organisation has.

func (s *App) buildExportsPage(ctx context.Context, p *pipeline.Principal, study string) (webui.ExportsPage, error) {
	if err := s.appMay(p, "start_export", nil); err != nil {
		return webui.ExportsPage{}, err
	}
	page := webui.ExportsPage{TestEnv: p.Partition.Env != kv.EnvLive}
	studies, err := s.studyNames(ctx, p)
	if err != nil {
		return page, err
	}
	for _, st := range studies {
		page.Studies = append(page.Studies, webui.Option{Value: st.ID.String(), Label: st.Name, Selected: st.ID.String() == study})
	}
	page.NoStudies = len(studies) == 0
	page.Formats = []webui.Option{
		{Value: "csv", Label: "CSV (built in)", Selected: true},
		{Value: "analysis-md", Label: "Findings report, Markdown (built in; needs a completed analysis)"},
		{Value: "analysis-html", Label: "Findings report, printable HTML (built in; needs a completed analysis)"},
		{Value: "qdpx", Label: "REFI-QDA project for NVivo, ATLAS.ti, MAXQDA (built in; needs a completed analysis)"},
	}
	plugins, err := s.DB.FindPlugins(ctx, p.Partition.Org)
	if err != nil {
		return page, err
	}
	for _, pl := range plugins {
		if pl.Kind == kv.PluginFormatter {
			page.Formats = append(page.Formats, webui.Option{Value: pl.Name, Label: pl.Name + " (" + pl.MediaType + ")"})
		}
	}
	return page, nil
}

// appStartExport starts an export of study in format; it returns the job's id.
func (s *App) appStartExport(ctx context.Context, p *pipeline.Principal, study, format string) (string, error) {
	id, ok := kv.ParseID(study)
	if !ok {
		return "", kv.Invalid(kv.FieldError{Loc: []any{"body", "study_id"}, Type: "uuid_parsing", Msg: "Choose a study to export."})
	}
	job, err := Call[research.ExportJob](ctx, s, p, "start_export", &research.StartExportInput{StudyID: id, Format: format})
	return job.JobID, err
}

func (s *App) buildExportPage(ctx context.Context, p *pipeline.Principal, jobID string) (webui.ExportPage, error) {
	st, err := Call[research.ExportStatus](ctx, s, p, "get_export_status", &research.JobIDInput{JobID: jobID})
	if err != nil {
		return webui.ExportPage{}, err
	}
	page := webui.ExportPage{JobID: jobID, Status: st.Status, Ready: st.Ready, Failed: st.Status == kv.ExportFailed}
	if st.Ready {
		page.DownloadURL = "/app/exports/" + jobID + "/download"
	}
	return page, nil
}

// appExportFile is a finished export's blob, for the page's download: the
// get_export_download operation decides (409 until ready, gone after expiry).
type appExportFile struct {
	Key, MediaType, Filename string
}

func (s *App) appExportDownload(ctx context.Context, p *pipeline.Principal, jobID string) (appExportFile, error) {
	d, err := Call[research.ExportDownload](ctx, s, p, "get_export_download", &research.JobIDInput{JobID: jobID})
	if err != nil {
		return appExportFile{}, err
	}
	return appExportFile{Key: d.Artifact, MediaType: d.MediaType, Filename: d.Filename}, nil
}
