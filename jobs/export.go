package jobs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	json "github.com/goccy/go-json"

	"interviewd/blobs"
	"interviewd/kv"
	"interviewd/plugins"
)

// CheckExportFormat returns EINVALID at ["format"] unless format is built in (csv, or
// one of the analysis formats) or the name of one of the organisation's formatter
// plugins.
func (r *Runner) CheckExportFormat(ctx context.Context, org kv.ID, format string) error {
	if format == plugins.BuiltinCSV || IsAnalysisFormat(format) {
		return nil
	}
	list, err := r.db.FindPlugins(ctx, org)
	if err != nil {
		return err
	}
	for _, p := range list {
		if p.Kind == kv.PluginFormatter && p.Name == format {
			return nil
		}
	}
	return kv.Invalid(kv.FieldError{Loc: []any{"format"}, Type: "enum",
		Msg: "Unknown export format; use csv, analysis-md, analysis-html, qdpx or the name of one of your organisation's formatter plugins."})
}

type formatRecord struct {
	Cells []string `json:"cells"`
}

// runExport builds the table of a study's completed live interviews, redacts every
// free-text cell (the built-in redactor with the organisation's settings, then the
// organisation's own redactors), formats it, and stores the artifact.
func (r *Runner) runExport(ctx context.Context, j kv.Job) error {
	p := j.Partition()
	if _, err := r.db.StartExport(ctx, p, j.ID); err != nil {
		return err
	}
	artifact, err := r.buildExport(ctx, j)
	// A bucket that cannot be reached is usually back soon (a restart, a network blip):
	// the export is built again, with waits growing to storageRetryMax, until it is
	// stored or the job's deadline passes.
	for wait := storageRetryMin; errors.Is(err, blobs.ErrUnavailable) && ctx.Err() == nil; wait = min(2*wait, storageRetryMax) {
		r.log.Warn().Err(err).Str("job_id", j.ID.String()).Dur("retry_in", wait).Msg("blob store unreachable; the export will retry")
		select {
		case <-ctx.Done():
		case <-time.After(wait):
			artifact, err = r.buildExport(ctx, j)
		}
	}
	if err != nil {
		if r.ctx.Err() != nil {
			return nil // shutting down: resumed after restart
		}
		msg := "The export did not complete."
		var pe *plugins.Error
		switch {
		case errors.As(err, &pe):
			msg = "The export did not complete: " + pe.Error()
		case errors.Is(err, blobs.ErrUnavailable):
			msg = "The export did not complete: file storage was unreachable; start it again."
		case kv.ErrorCode(err) == kv.ENOTFOUND:
			msg = "The export did not complete: the study, or the analysis version it exports, no longer exists."
		}
		r.fail(j, msg)
		return err
	}
	if err := r.db.FinishExport(ctx, p, j.ID, artifact); err != nil {
		// The artifact is never recorded: remove it, since it may hold an interview
		// erased while it was being built.
		_ = r.db.Blobs().Delete(context.WithoutCancel(ctx), artifact.Blob)
		var ke *kv.Error
		if errors.As(err, &ke) && ke.Reason == "interview_erased" {
			r.fail(j, ke.Message)
		}
		return err
	}
	r.log.Info().Str("org_id", p.Org.String()).Str("environment", string(p.Env)).Str("job_id", j.ID.String()).
		Int("rows", artifact.Rows).Str("media_type", artifact.MediaType).Msg("export finished")
	return nil
}

// storageRetryMin and storageRetryMax bound the waits between an export's tries while
// the blob store is unreachable.
const (
	storageRetryMin = time.Second
	storageRetryMax = 15 * time.Second
)

func (r *Runner) buildExport(ctx context.Context, j kv.Job) (kv.ExportResult, error) {
	if r.plugins == nil {
		return kv.ExportResult{}, errors.New("no plugin host configured")
	}
	p := j.Partition()
	spec, err := j.ExportSpec()
	if err != nil {
		return kv.ExportResult{}, err
	}
	if IsAnalysisFormat(spec.Format) {
		return r.buildAnalysisExport(ctx, j, spec)
	}
	st, err := r.db.FindStudyByID(ctx, p, spec.StudyID)
	if err != nil {
		return kv.ExportResult{}, err
	}
	ivs, err := r.db.FindExportInterviews(ctx, p, spec.StudyID)
	if err != nil {
		return kv.ExportResult{}, err
	}
	rows := make([]exportInterview, 0, len(ivs))
	for _, iv := range ivs {
		msgs, err := r.db.FindTranscript(ctx, p, iv.ID)
		if err != nil {
			return kv.ExportResult{}, err
		}
		t := make([]exportMessage, len(msgs))
		for i, m := range msgs {
			t[i] = exportMessage{Speaker: m.Speaker, Text: m.Text}
		}
		rows = append(rows, exportInterview{Interview: iv, Transcript: t})
	}
	brief := kv.Brief{}
	if st.Brief != nil {
		brief = *st.Brief
	}
	if err := r.redactInterviews(ctx, p.Org, brief, rows); err != nil {
		return kv.ExportResult{}, err
	}
	table := buildExportTable(brief, st.ParticipantSettings(), rows)
	formatter, err := r.formatter(ctx, p.Org, spec.Format)
	if err != nil {
		return kv.ExportResult{}, err
	}
	records := make([]json.RawMessage, 0, len(table.Rows)+1)
	for _, row := range append([][]string{table.Header}, table.Rows...) {
		raw, err := json.Marshal(formatRecord{Cells: row})
		if err != nil {
			return kv.ExportResult{}, err
		}
		records = append(records, raw)
	}
	ext := ".csv"
	if spec.Format != plugins.BuiltinCSV {
		ext = "." + spec.Format
	}
	rel, err := r.storeArtifact(ctx, j, ext, func(w io.Writer) error { return r.format(ctx, formatter, records, w) })
	if err != nil {
		return kv.ExportResult{}, err
	}
	held := make([]kv.ID, len(ivs))
	for i, iv := range ivs {
		held[i] = iv.ID
	}
	return kv.ExportResult{
		Blob: rel, MediaType: formatter.Descriptor().MediaType, Rows: len(table.Rows), Interviews: held,
		Filename:  "interviews-" + st.ID.String()[:8] + "-" + r.db.Now().Format("20060102") + ext,
		ExpiresAt: r.db.Now().Add(kv.ExportArtifactTTL),
	}, nil
}

// storeArtifact stores what write writes as the export's artifact, named for the job
// with extension ext, and returns its blob path. The artifact is written to the
// scratch folder, then stored whole: a reader never sees a part of it, in a folder or
// in a bucket.
func (r *Runner) storeArtifact(ctx context.Context, j kv.Job, ext string, write func(io.Writer) error) (string, error) {
	dir := filepath.Join(r.db.BlobDir(), blobs.ScratchDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	rel := "exports/" + j.ID.String() + ext
	tmp, err := os.CreateTemp(dir, "export-*")
	if err != nil {
		return "", err
	}
	err = write(tmp)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = blobs.MoveFile(ctx, r.db.Blobs(), rel, tmp.Name())
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return "", err
	}
	return rel, nil
}

// exportChunk is how many records one plugin run takes: big enough to amortise an
// instance's start, small enough that both cores share a large export.
const exportChunk = 1000

// inChunks runs fn over consecutive chunks of n records, on as many goroutines as the
// machine has cores, and returns the results in order. The first error wins.
func inChunks[T any](ctx context.Context, n int, fn func(ctx context.Context, lo, hi int) (T, error)) ([]T, error) {
	chunks := (n + exportChunk - 1) / exportChunk
	out := make([]T, chunks)
	errs := make([]error, chunks)
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for c := 0; c < chunks; c++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			lo, hi := c*exportChunk, min((c+1)*exportChunk, n)
			out[c], errs[c] = fn(ctx, lo, hi)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// format writes the artifact. The built-in CSV formatter is run on chunks of rows in
// parallel (CSV rows are independent; only the first chunk carries the header); an
// organisation's formatter sees every record in one run, since its format may have a
// document structure.
func (r *Runner) format(ctx context.Context, f *plugins.Plugin, records []json.RawMessage, w io.Writer) error {
	if f.Descriptor().Name != plugins.BuiltinCSV || len(records) <= exportChunk {
		return r.metrics.pluginRun(pluginFormatter, func() error { return f.Format(ctx, nil, records, w) })
	}
	header, rows := records[0], records[1:]
	parts, err := inChunks(ctx, len(rows), func(ctx context.Context, lo, hi int) ([]byte, error) {
		// Every chunk starts with the header (the formatter checks each row's width
		// against it); all but the first chunk drop the header's line from the output.
		var buf bytes.Buffer
		chunk := append([]json.RawMessage{header}, rows[lo:hi]...)
		if err := r.metrics.pluginRun(pluginFormatter, func() error { return f.Format(ctx, nil, chunk, &buf) }); err != nil {
			return nil, err
		}
		if lo > 0 {
			return dropFirstCSVRecord(buf.Bytes()), nil
		}
		return buf.Bytes(), nil
	})
	if err != nil {
		return err
	}
	for _, part := range parts {
		if _, err := w.Write(part); err != nil {
			return err
		}
	}
	return nil
}

// dropFirstCSVRecord removes the first record from RFC 4180 output: up to the first
// line break outside quotes (a quoted cell may hold line breaks).
func dropFirstCSVRecord(b []byte) []byte {
	inQuotes := false
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			inQuotes = !inQuotes
		case '\n':
			if !inQuotes {
				return b[i+1:]
			}
		}
	}
	return nil
}

// formatter returns the built-in formatter or the organisation's formatter named
// format.
func (r *Runner) formatter(ctx context.Context, org kv.ID, format string) (*plugins.Plugin, error) {
	if format == plugins.BuiltinCSV || IsAnalysisFormat(format) {
		return r.plugins.Builtin(ctx, format)
	}
	own, err := r.orgPluginsNamed(ctx, org, kv.PluginFormatter, format)
	if err != nil {
		return nil, err
	}
	return own, nil
}

func (r *Runner) orgPlugins(ctx context.Context, org kv.ID, kind string) ([]*plugins.Plugin, error) {
	list, err := r.db.FindPlugins(ctx, org)
	if err != nil {
		return nil, err
	}
	var out []*plugins.Plugin
	for _, p := range list {
		if p.Kind != kind {
			continue
		}
		pl, err := r.loadOrgPlugin(ctx, p)
		if err != nil {
			return nil, err
		}
		out = append(out, pl)
	}
	return out, nil
}

func (r *Runner) orgPluginsNamed(ctx context.Context, org kv.ID, kind, name string) (*plugins.Plugin, error) {
	list, err := r.db.FindPlugins(ctx, org)
	if err != nil {
		return nil, err
	}
	for _, p := range list {
		if p.Kind == kind && p.Name == name {
			return r.loadOrgPlugin(ctx, p)
		}
	}
	return nil, fmt.Errorf("the organisation has no %s named %q", kind, name)
}

func (r *Runner) loadOrgPlugin(ctx context.Context, p kv.OrgPlugin) (*plugins.Plugin, error) {
	wasm, err := readBlob(ctx, r.db.Blobs(), p.Blob)
	if err != nil {
		return nil, fmt.Errorf("plugin %s %q: %w", p.Kind, p.Name, err)
	}
	return r.plugins.Load(ctx, wasm)
}

// SweepExports deletes export artifacts older than seven days.
func (r *Runner) SweepExports(ctx context.Context) {
	jobs, err := r.db.FindExpiredExports(ctx)
	if err != nil {
		r.log.Error().Err(err).Msg("find expired exports")
		return
	}
	for _, j := range jobs {
		if res, ok := j.ExportResult(); ok && res.Blob != "" {
			if err := r.db.Blobs().Delete(ctx, res.Blob); err != nil {
				// The record still names it: the next sweep tries again.
				r.log.Error().Err(err).Str("job_id", j.ID.String()).Msg("delete expired export")
				continue
			}
		}
		if err := r.db.ExpireExport(ctx, j.Partition(), j.ID); err != nil {
			r.log.Error().Err(err).Msg("expire export")
		}
	}
}

// Maintain runs the runner's housekeeping until ctx ends: deleting export artifacts
// older than seven days, hourly.
func (r *Runner) Maintain(ctx context.Context) {
	tick := time.NewTicker(time.Hour)
	defer tick.Stop()
	for {
		r.SweepExports(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// maxPluginBlob bounds a stored module read back (the upload limit is 32 MB): a blob
// replaced behind our back cannot make a node read gigabytes into memory.
const maxPluginBlob = 64 << 20

// readBlob reads a whole (small) blob: an organisation's plugin module.
func readBlob(ctx context.Context, s blobs.Store, key string) ([]byte, error) {
	body, size, err := s.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	if size > maxPluginBlob {
		return nil, fmt.Errorf("blob %s is %d bytes, more than a plugin may be", key, size)
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(body, b); err != nil {
		return nil, err
	}
	return b, nil
}
