package research

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"interviewd/blobs"
	"interviewd/jobs"
	"interviewd/kv"
	"interviewd/server/pipeline"
)

// DownloadURLLifetime is how long a signed download URL works (api-spec Limits).
const DownloadURLLifetime = 5 * time.Minute

// StartExportInput is the export request.
type StartExportInput struct {
	StudyID kv.ID `json:"study_id" required:"true" doc:"The study whose completed live participant interviews are exported."`
	// Documents list the built-in formats; an organisation's formatter plugins add
	// their names, checked when the export starts.
	Format string `json:"format" component:"ExportFormat" docEnum:"csv,analysis-md,analysis-html,qdpx" default:"csv" doc:"csv (default): the completed live interviews, one row each. analysis-md (Markdown report), analysis-html (standalone printable HTML report) and qdpx (REFI-QDA project for NVivo, ATLAS.ti, MAXQDA: the transcripts with the findings as codes): the study's completed analysis. Or the name of one of the organisation's formatter plugins."`
	// AnalysisVersion picks the analysis an analysis format exports.
	AnalysisVersion *int `json:"analysis_version" min:"1" doc:"For analysis-md, analysis-html and qdpx: the analysis version to export (1, 2, ...); the latest completed one when omitted. Not allowed with other formats."`
}

// ExportJob is the handle start_export returns.
type ExportJob struct {
	JobID string `json:"job_id"`
}

// ExportStatus is exactly {status, ready}.
type ExportStatus struct {
	Status string `json:"status" enum:"queued,running,completed,failed"`
	Ready  bool   `json:"ready"`
}

// ExportDownload is where a finished export can be fetched without a bearer.
type ExportDownload struct {
	DownloadURL string        `json:"download_url"`
	ExpiresAt   pipeline.Time `json:"expires_at"`
	// Artifact (the blob's key), MediaType and Filename are for inline downloads,
	// never on the wire.
	Artifact  string `json:"-"`
	MediaType string `json:"-"`
	Filename  string `json:"-"`
}

var errTestEnvironment = kv.Errorf(kv.EFORBIDDEN, "test_environment",
	"Test-environment credentials cannot export; Test-mode rehearsals have no exports. Use a jsk_live_ key.")

func (s *Service) startExport(ctx context.Context, p *pipeline.Principal, in *StartExportInput) (ExportJob, error) {
	if p.Partition.Env != kv.EnvLive {
		return ExportJob{}, errTestEnvironment
	}
	if in.Format == "" {
		in.Format = "csv"
	}
	if err := s.Jobs.CheckExportFormat(ctx, p.Partition.Org, in.Format); err != nil {
		return ExportJob{}, err
	}
	analysis := jobs.IsAnalysisFormat(in.Format)
	version := 0
	if in.AnalysisVersion != nil {
		if !analysis {
			return ExportJob{}, kv.Invalid(kv.FieldError{Loc: []any{"analysis_version"}, Type: "not_allowed",
				Msg: "analysis_version applies to the analysis formats (analysis-md, analysis-html, qdpx) only."})
		}
		version = *in.AnalysisVersion
	}
	if err := s.Jobs.Admit(kv.JobExport); err != nil {
		return ExportJob{}, err
	}
	jobID := kv.NewV4()
	out := ExportJob{JobID: jobID.String()}
	job, err := s.DB.CreateExportJob(ctx, kv.ExportInput{Partition: p.Partition, JobID: jobID, StudyID: in.StudyID, Format: in.Format,
		Analysis: analysis, AnalysisVersion: version}, pipeline.IdemWrite(ctx, out))
	if err != nil {
		return ExportJob{}, err
	}
	s.Jobs.Enqueue(job)
	return out, nil
}

func (s *Service) exportJob(ctx context.Context, p *pipeline.Principal, in *JobIDInput) (kv.Job, error) {
	id, err := in.id()
	if err != nil {
		return kv.Job{}, err
	}
	return s.DB.FindJobByID(ctx, p.Partition, kv.JobExport, id)
}

func (s *Service) getExportStatus(ctx context.Context, p *pipeline.Principal, in *JobIDInput) (ExportStatus, error) {
	j, err := s.exportJob(ctx, p, in)
	if err != nil {
		return ExportStatus{}, err
	}
	return ExportStatus{Status: j.Status, Ready: j.Status == kv.ExportCompleted}, nil
}

func (s *Service) getExportDownload(ctx context.Context, p *pipeline.Principal, in *JobIDInput) (ExportDownload, error) {
	j, err := s.exportJob(ctx, p, in)
	if err != nil {
		return ExportDownload{}, err
	}
	r, ok := j.ExportResult()
	if !ok {
		return ExportDownload{}, kv.Errorf(kv.ECONFLICT, "export_not_ready", "The export is not ready; poll its status until ready is true.")
	}
	if r.Blob == "" {
		return ExportDownload{}, kv.Errorf(kv.ENOTFOUND, "export_expired", "The export's file was deleted after seven days; start a new export.")
	}
	expires := s.Now().Add(DownloadURLLifetime)
	return ExportDownload{
		DownloadURL: s.signedDownloadURL(p.Partition, j.ID, expires),
		ExpiresAt:   pipeline.WireTime(expires),
		Artifact:    BlobKey(r.Blob),
		MediaType:   r.MediaType,
		Filename:    r.Filename,
	}, nil
}

// respondDownload serves the download over REST: the artifact inline when Accept names
// text/csv, */* or nothing, the signed URL as JSON when it asks for application/json
// (and not text/csv). Never a redirect.
func (s *Service) respondDownload(c *fasthttp.RequestCtx, out any) (bool, error) {
	d := out.(ExportDownload)
	accept := strings.ToLower(string(c.Request.Header.Peek("Accept")))
	if strings.Contains(accept, "application/json") && !strings.Contains(accept, "text/csv") {
		return false, nil // the JSON body
	}
	return true, s.StreamArtifact(s.Ctx, c, d.Artifact, d.MediaType, d.Filename)
}

// errExportExpired is an export whose file is gone (swept, or never written).
var errExportExpired = kv.Errorf(kv.ENOTFOUND, "export_expired", "The export's file is no longer available; start a new export.")

// BlobKey is a record's blob path as a store key (records written on any system name
// it with slashes; an old record may carry the OS separator).
func BlobKey(rel string) string { return filepath.ToSlash(filepath.Clean(rel)) }

// StreamArtifact answers with the blob at key, or returns why it cannot (nothing is
// written then): export_expired when it is gone, storage_unavailable when the store
// cannot be reached.
func (s *Service) StreamArtifact(ctx context.Context, c *fasthttp.RequestCtx, key, mediaType, filename string) error {
	// fasthttp reads the body after the handler has returned, perhaps while the server
	// is stopping (which ends ctx): a download under way is finished, not cut short.
	body, size, err := s.DB.Blobs().Get(context.WithoutCancel(ctx), key)
	if errors.Is(err, fs.ErrNotExist) {
		return errExportExpired
	}
	if err != nil {
		return err
	}
	c.SetStatusCode(200)
	c.SetContentType(mediaType)
	c.Response.Header.Set("Content-Disposition", pipeline.AttachmentDisposition(filename))
	c.Response.Header.Set("Cache-Control", "no-store")
	c.SetBodyStream(body, int(size)) // fasthttp closes body when it is sent
	return nil
}

// RedirectArtifact answers with a redirect to a presigned URL of the store, valid until
// expires, when the server is configured for them and the store has them; it returns
// false (having written nothing) otherwise, and the caller streams the bytes itself.
func (s *Service) RedirectArtifact(ctx context.Context, c *fasthttp.RequestCtx, key, mediaType, filename string, expires time.Time) (bool, error) {
	ttl := time.Until(expires)
	if !s.Presign || ttl < time.Second {
		return false, nil
	}
	store := s.DB.Blobs()
	// A presigned URL is signed locally: ask the store first, so a deleted artifact is
	// our 404 and an unreachable bucket our 503, not the bucket's XML.
	if _, err := store.Stat(ctx, key); errors.Is(err, fs.ErrNotExist) {
		return false, errExportExpired
	} else if err != nil {
		return false, err
	}
	u, err := store.Presign(ctx, key, ttl, filename, mediaType)
	if errors.Is(err, blobs.ErrNoPresign) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	c.Response.Header.Set("Cache-Control", "no-store")
	c.Response.Header.Set("Location", u)
	c.SetStatusCode(fasthttp.StatusFound)
	return true, nil
}

// signedDownloadURL is an address to the artifact that needs no bearer: the job and
// its partition, an expiry, and an HMAC over them with the instance's secret.
func (s *Service) signedDownloadURL(p kv.Partition, job kv.ID, expires time.Time) string {
	exp := strconv.FormatInt(expires.Unix(), 10)
	return s.BaseURL + "/v1/api/exports/" + job.String() + "/artifact?org=" + p.Org.String() + "&env=" + string(p.Env) +
		"&expires=" + exp + "&sig=" + s.downloadSignature(p, job, exp)
}

func (s *Service) downloadSignature(p kv.Partition, job kv.ID, expires string) string {
	m := hmac.New(sha256.New, s.DB.Secret())
	m.Write([]byte("export-download\x00" + job.String() + "\x00" + p.Org.String() + "\x00" + string(p.Env) + "\x00" + expires))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// signedDownload is the export artifact behind a signed URL: a REST route group whose
// credential is the URL's signature and expiry, not a bearer (so the research table's
// steps do not apply), answered in the REST shapes.
func (s *Service) SignedDownloadSurface() *pipeline.Surface {
	return &pipeline.Surface{Name: "rest_signed", Authenticate: s.downloadSigned, Render: s.RenderREST}
}

// signedJob is what a valid signed URL names.
type signedJob struct {
	p       kv.Partition
	job     kv.ID
	expires time.Time
}

// downloadSigned checks the URL's signature and expiry: any changed character or a
// stale URL is 403.
func (s *Service) downloadSigned(r *pipeline.Request) error {
	args := r.C.QueryArgs()
	job, okJob := kv.ParseID(r.PathParam("job_id"))
	org, okOrg := kv.ParseID(string(args.Peek("org")))
	env := kv.Environment(args.Peek("env"))
	expires := string(args.Peek("expires"))
	sig := string(args.Peek("sig"))
	exp, err := strconv.ParseInt(expires, 10, 64)
	p := kv.Partition{Org: org, Env: env}
	if !okJob || !okOrg || !env.Valid() || err != nil ||
		!hmac.Equal([]byte(sig), []byte(s.downloadSignature(p, job, expires))) || !s.Now().Before(time.Unix(exp, 0)) {
		return &pipeline.APIError{Status: 403, Code: "download_url_invalid", Detail: "This download URL is invalid or has expired; request a new one."}
	}
	r.Data = signedJob{p: p, job: job, expires: time.Unix(exp, 0)}
	return nil
}

// HandleSignedDownload serves GET /v1/api/exports/{job_id}/artifact to a signed URL.
func (s *Service) HandleSignedDownload(r *pipeline.Request) error {
	sj := r.Data.(signedJob)
	j, err := s.DB.FindJobByID(r.Ctx, sj.p, kv.JobExport, sj.job)
	res, ok := j.ExportResult()
	if err != nil || !ok || res.Blob == "" {
		return errExportExpired
	}
	sent, err := s.RedirectArtifact(r.Ctx, r.C, BlobKey(res.Blob), res.MediaType, res.Filename, sj.expires)
	if err != nil {
		return err
	}
	if !sent {
		if err := s.StreamArtifact(r.Ctx, r.C, BlobKey(res.Blob), res.MediaType, res.Filename); err != nil {
			return err
		}
	}
	r.Written = true
	return nil
}
