package jobs

import (
	"context"
	"io"
	"strconv"

	json "github.com/goccy/go-json"

	"interviewd/kv"
	"interviewd/plugins"
)

// Exports of a study's findings: the analysis formats are made from a stored analysis
// version (the one the export was asked for, settled when it started), not from a
// table of interviews. Their formatters read the records plugins/internal/analysisdoc
// describes: the analysis first, then, for a format that carries transcripts, each
// interview the version includes, read and redacted exactly as the analysis read them
// (the same chain, the same authored questions left out), so a quote is found in its
// transcript where the analysis found it. Nothing reaches a formatter unredacted.

// analysisFormat is how one analysis format is exported.
type analysisFormat struct {
	ext         string // the artifact's file extension
	transcripts bool   // whether the interviews' transcripts are sent after the analysis
}

var analysisFormats = map[string]analysisFormat{
	plugins.BuiltinAnalysisMarkdown: {ext: ".md"},
	plugins.BuiltinAnalysisHTML:     {ext: ".html"},
	plugins.BuiltinQDPX:             {ext: ".qdpx", transcripts: true},
}

// IsAnalysisFormat reports whether format is made from a study's analysis rather than
// from its interviews.
func IsAnalysisFormat(format string) bool {
	_, ok := analysisFormats[format]
	return ok
}

// analysisHead is the first record: the study and the analysis version as stored
// (kv writes its study_id and version into it).
type analysisHead struct {
	Study    analysisStudy   `json:"study"`
	Analysis json.RawMessage `json:"analysis"`
}

type analysisStudy struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

// analysisTranscript is one interview's record.
type analysisTranscript struct {
	Interview transcriptRecord `json:"interview"`
}

type transcriptRecord struct {
	ID          string            `json:"id"`
	StartedAt   string            `json:"started_at"`
	CompletedAt string            `json:"completed_at"`
	Context     map[string]string `json:"context"`
	Messages    []messageRecord   `json:"messages"`
}

type messageRecord struct {
	Speaker string `json:"speaker"`
	Text    string `json:"text"`
}

// buildAnalysisExport formats the study's analysis version spec.AnalysisVersion and
// stores the artifact. The interviews it holds are the version's sources still
// present (an erased one is out of the version too), so erasing one later finds the
// artifact.
func (r *Runner) buildAnalysisExport(ctx context.Context, j kv.Job, spec kv.ExportSpec) (kv.ExportResult, error) {
	p := j.Partition()
	format := analysisFormats[spec.Format]
	st, err := r.db.FindStudyByID(ctx, p, spec.StudyID)
	if err != nil {
		return kv.ExportResult{}, err
	}
	v, err := r.db.FindAnalysis(ctx, p, st.ID, spec.AnalysisVersion)
	if err != nil {
		return kv.ExportResult{}, err
	}
	inVersion := make(map[kv.ID]bool, len(v.Sources))
	for _, src := range v.Sources {
		inVersion[src.InterviewID] = true
	}
	all, err := r.db.FindExportInterviews(ctx, p, st.ID)
	if err != nil {
		return kv.ExportResult{}, err
	}
	var included []kv.Interview
	for _, iv := range all {
		if inVersion[iv.ID] {
			included = append(included, iv)
		}
	}
	title := st.Name
	if title == "" && st.Brief != nil && st.Brief.Title != nil {
		title = *st.Brief.Title
	}
	head, err := json.Marshal(analysisHead{Study: analysisStudy{ID: st.ID.String(), Title: title}, Analysis: v.Body})
	if err != nil {
		return kv.ExportResult{}, err
	}
	records := []json.RawMessage{head}
	if format.transcripts {
		transcripts, err := r.analysisTranscripts(ctx, st, included)
		if err != nil {
			return kv.ExportResult{}, err
		}
		records = append(records, transcripts...)
	}
	formatter, err := r.formatter(ctx, p.Org, spec.Format)
	if err != nil {
		return kv.ExportResult{}, err
	}
	rel, err := r.storeArtifact(ctx, j, format.ext, func(w io.Writer) error { return r.format(ctx, formatter, records, w) })
	if err != nil {
		return kv.ExportResult{}, err
	}
	held := make([]kv.ID, len(included))
	for i, iv := range included {
		held[i] = iv.ID
	}
	return kv.ExportResult{
		Blob: rel, MediaType: formatter.Descriptor().MediaType, Rows: len(included), Interviews: held,
		Filename:  "analysis-" + st.ID.String()[:8] + "-v" + strconv.Itoa(v.Version) + "-" + r.db.Now().Format("20060102") + format.ext,
		ExpiresAt: r.db.Now().Add(kv.ExportArtifactTTL),
	}, nil
}

// analysisTranscripts reads and redacts the interviews as an analysis does and returns
// one record per interview, in order.
func (r *Runner) analysisTranscripts(ctx context.Context, st kv.Study, ivs []kv.Interview) ([]json.RawMessage, error) {
	p := st.Partition()
	design, err := r.analysisDesign(ctx, st, ivs)
	if err != nil {
		return nil, err
	}
	rows := make([]exportInterview, 0, len(ivs))
	for _, iv := range ivs {
		msgs, err := r.db.FindTranscript(ctx, p, iv.ID)
		if err != nil {
			return nil, err
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
		return nil, err
	}
	out := make([]json.RawMessage, 0, len(rows))
	for _, row := range rows {
		iv := row.Interview
		rec := transcriptRecord{ID: iv.ID.String(), StartedAt: exportTime(&iv.StartedAt), CompletedAt: exportTime(iv.CompletedAt),
			Context: iv.EntryAttributes, Messages: make([]messageRecord, len(row.Transcript))}
		if rec.Context == nil {
			rec.Context = map[string]string{}
		}
		for i, m := range row.Transcript {
			rec.Messages[i] = messageRecord{Speaker: m.Speaker, Text: m.Text}
		}
		raw, err := json.Marshal(analysisTranscript{Interview: rec})
		if err != nil {
			return nil, err
		}
		out = append(out, raw)
	}
	return out, nil
}
