package wholebinary

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"interviewd/blobs"
	"interviewd/blobs/blobstest"
	"interviewd/cmd"
	"interviewd/kv"
	"interviewd/kv/pgtest"
	"interviewd/plugins/plugintest"
)

// s3Seed is a data folder whose blobs live in a versitygw bucket: an organisation, a live
// study with two completed interviews, and a live key that may upload and export.
type s3Seed struct {
	data      string
	org       kv.ID
	study     kv.ID
	interview kv.ID
	key       string
}

func mustSeedS3(t *testing.T, srv *blobstest.S3, storeArgs ...string) s3Seed {
	t.Helper()
	var storeURL string
	if len(storeArgs) == 2 { // --store postgres://…
		storeURL = storeArgs[1]
	}
	ctx := context.Background()
	store, err := blobs.Open(ctx, srv.URL(), "", srv.Env)
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(t.TempDir(), "data")
	db, err := kv.Open(data, kv.Options{Blobs: store, Store: storeURL})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	org, _, err := db.CreateOrg(ctx, kv.OrgInput{Name: "Bucket Research", Email: "b@example.com", Credits: 5})
	if err != nil {
		t.Fatal(err)
	}
	p := kv.Partition{Org: org.ID, Env: kv.EnvLive}
	title := "Stored in a bucket"
	st, err := db.CreateStudy(ctx, kv.StudyInput{Partition: p, Brief: kv.Brief{Title: &title, Objectives: []string{"Learn"}, VerbatimQuestions: []string{"Why?"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.SetStudyMode(ctx, p, st.ID, kv.ModeLive); err != nil {
		t.Fatal(err)
	}
	var first kv.ID
	for i, session := range []string{"participant-one", "participant-two"} {
		o, err := db.OpenLink(ctx, st.LinkToken, session)
		if err != nil {
			t.Fatal(err)
		}
		iv, err := db.AppendTurn(ctx, p, o.Interview.ID, kv.Turn{Session: session, Status: kv.InterviewCompleted, Messages: []kv.Message{
			{Speaker: kv.SpeakerInterviewer, Text: "Why?", At: db.Now()},
			{Speaker: kv.SpeakerParticipant, Text: "Because, said " + session, At: db.Now()},
		}})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = iv.ID
		}
	}
	db.Close()
	var key struct {
		Secret string `json:"secret"`
	}
	runJSON(t, srv.Env, &key, append([]string{"keys", "create", "--data", data, "--blobs", srv.URL(), "--org", org.ID.String(), "--name", "s3",
		"--env", "live", "--scopes", "studies:read,studies:write,export:read"}, storeArgs...)...)
	return s3Seed{data: data, org: org.ID, study: st.ID, interview: first, key: key.Secret}
}

// runJSON runs one command with env and decodes what it prints.
func runJSON(t *testing.T, env func(string) (string, bool), v any, args ...string) {
	t.Helper()
	var out bytes.Buffer
	if err := cmd.Run(context.Background(), args, &out, io.Discard, env); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	if err := json.Unmarshal(out.Bytes(), v); err != nil {
		t.Fatalf("%v printed %q: %v", args, out.String(), err)
	}
}

type s3Client struct {
	t    *testing.T
	base string
	key  string
	http *http.Client
	// logs, when set, returns the servers' logs, shown when an export fails.
	logs func() string
}

func (c *s3Client) do(method, path string, body io.Reader, headers ...string) (*http.Response, []byte) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, body)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	for i := 0; i < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func (c *s3Client) upload(name, content string) (*http.Response, []byte) {
	c.t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	part, _ := w.CreateFormFile("file", name)
	part.Write([]byte(content))
	w.Close()
	return c.do("POST", "/v1/api/files", &body, "Content-Type", w.FormDataContentType())
}

// export starts an export in format and waits until it is ready.
func (c *s3Client) export(study kv.ID, format string) string {
	c.t.Helper()
	job := c.startExport(study, format)
	c.waitExport(job)
	return job
}

// startExport asks for an export in format and returns its job id.
func (c *s3Client) startExport(study kv.ID, format string) string {
	c.t.Helper()
	resp, body := c.do("POST", "/v1/api/exports", strings.NewReader(`{"study_id":"`+study.String()+`","format":"`+format+`"}`), "Content-Type", "application/json")
	var job struct {
		JobID string `json:"job_id"`
	}
	if resp.StatusCode != 202 || json.Unmarshal(body, &job) != nil {
		c.t.Fatalf("start %s export: %d %s", format, resp.StatusCode, body)
	}
	return job.JobID
}

// waitExport polls the export until it is ready; failed or a five-minute wait fails
// the test.
func (c *s3Client) waitExport(job string) {
	c.t.Helper()
	for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		resp, body := c.do("GET", "/v1/api/exports/"+job, nil)
		if strings.Contains(string(body), `"ready":true`) {
			return
		}
		if resp.StatusCode != 200 || strings.Contains(string(body), `"failed"`) || time.Now().After(deadline) {
			logs := ""
			if c.logs != nil {
				logs = "\n" + c.logs()
			}
			c.t.Fatalf("export %s: %d %s%s", job, resp.StatusCode, body, logs)
		}
	}
}

func objectBytes(t *testing.T, c *minio.Client, bucket, key string) ([]byte, error) {
	t.Helper()
	obj, err := c.GetObject(context.Background(), bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, err
	}
	defer obj.Close()
	return io.ReadAll(obj)
}

// TestS3EndToEnd runs the real program on a versitygw bucket: an upload, exports
// (the built-in CSV and an organisation's formatter plugin stored in and loaded from the
// bucket) downloaded inline and through a presigned redirect, an erasure that deletes
// the artifacts from the bucket, and the bucket going down (503, /readyz) and back.
// Nothing of it is written to DATA/blobs.
func TestS3EndToEnd(t *testing.T) {
	srv := blobstest.Start(t)
	s := mustSeedS3(t, srv)
	bucket := srv.Client()

	// The plugin is added while no server runs: the command stores it in the bucket.
	var added struct {
		Name string `json:"name"`
		Blob string `json:"blob"`
	}
	runJSON(t, srv.Env, &added, "plugins", "add", "--data", s.data, "--blobs", srv.URL(), "--org", s.org.String(),
		"--file", plugintest.Path(t, plugintest.JSONL))
	wasm := plugintest.Wasm(t, plugintest.JSONL)
	if got, err := objectBytes(t, bucket, srv.Bucket, added.Blob); err != nil || !bytes.Equal(got, wasm) {
		t.Fatalf("plugin %s in the bucket: %d bytes, %v", added.Blob, len(got), err)
	}

	// The export compiles its plugin on first use: under -race on a loaded machine that
	// alone can pass the default two minutes, and speed is not what this test is about.
	b := mustBootEnv(t, srv.Env, "--data", s.data, "--blobs", srv.URL(), "--blobs-presign", "--rate-limits", "off", "--job-timeout", "30m")
	c := &s3Client{t: t, base: b.URL, key: s.key, http: &http.Client{Timeout: time.Minute,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	c.logs = b.Logs.String // a failed export shows what the server logged
	if !strings.Contains(b.Logs.String(), `"blobs":"s3://`+srv.Bucket+`/ at http://`+srv.Addr+`"`) {
		t.Fatalf("the start-up line does not name the bucket:\n%s", b.Logs.String())
	}

	t.Run("OK_Upload", func(t *testing.T) {
		resp, body := c.upload("notes.txt", "Participants plan rotas on paper.")
		var fh struct {
			FileID    string `json:"file_id"`
			Extracted bool   `json:"extracted"`
		}
		if resp.StatusCode != 201 && resp.StatusCode != 200 || json.Unmarshal(body, &fh) != nil || !fh.Extracted {
			t.Fatalf("upload: %d %s", resp.StatusCode, body)
		}
		if got, err := objectBytes(t, bucket, srv.Bucket, "files/"+fh.FileID); err != nil || string(got) != "Participants plan rotas on paper." {
			t.Fatalf("uploaded object: %q %v", got, err)
		}
	})

	csvJob := c.export(s.study, "csv")
	jsonlJob := c.export(s.study, added.Name) // the plugin, loaded from the bucket
	t.Run("OK_InlineDownload", func(t *testing.T) {
		resp, body := c.do("GET", "/v1/api/exports/"+csvJob+"/download", nil, "Accept", "text/csv")
		if resp.StatusCode != 200 || !strings.Contains(string(body), "Because, said participant-one") {
			t.Fatalf("csv: %d %s", resp.StatusCode, body)
		}
		resp, body = c.do("GET", "/v1/api/exports/"+jsonlJob+"/download", nil, "Accept", "*/*")
		if resp.StatusCode != 200 || !strings.Contains(string(body), "participant-two") || !strings.HasPrefix(string(body), "{") {
			t.Fatalf("jsonl: %d %s", resp.StatusCode, body)
		}
	})
	t.Run("OK_PresignedRedirect", func(t *testing.T) {
		resp, body := c.do("GET", "/v1/api/exports/"+csvJob+"/download", nil, "Accept", "application/json")
		var d struct {
			URL string `json:"download_url"`
		}
		if resp.StatusCode != 200 || json.Unmarshal(body, &d) != nil || !strings.HasPrefix(d.URL, b.URL+"/v1/api/exports/") {
			t.Fatalf("download URL: %d %s", resp.StatusCode, body)
		}
		// The node checks its own signature, then sends the client to the bucket.
		resp, err := c.http.Get(d.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		loc := resp.Header.Get("Location")
		if resp.StatusCode != http.StatusFound || !strings.HasPrefix(loc, "http://"+srv.Addr+"/"+srv.Bucket+"/exports/"+csvJob+".csv?") ||
			!strings.Contains(loc, "X-Amz-Signature=") {
			t.Fatalf("signed URL: %d Location %q", resp.StatusCode, loc)
		}
		resp, err = http.Get(loc) // no credential at all
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(got), "Because, said participant-one") ||
			!strings.HasPrefix(resp.Header.Get("Content-Disposition"), "attachment") {
			t.Fatalf("presigned GET: %d %v %s", resp.StatusCode, resp.Header, got)
		}
		// A tampered node URL is still refused by the node.
		resp, err = c.http.Get(strings.Replace(d.URL, "sig=", "sig=x", 1))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 403 {
			t.Fatalf("tampered signed URL: %d", resp.StatusCode)
		}
	})

	t.Run("OK_EraseDeletesObjects", func(t *testing.T) {
		// Through the running server's admin socket: the server's store does the deletes.
		var rc kv.EraseReceipt
		runJSON(t, noEnv, &rc, "interviews", "erase", "--data", s.data, "--id", s.interview.String())
		if len(rc.ExportArtifacts) != 2 || len(rc.FilesNotRemoved) != 0 {
			t.Fatalf("receipt %+v", rc)
		}
		for _, a := range rc.ExportArtifacts {
			_, err := bucket.StatObject(context.Background(), srv.Bucket, a.File, minio.StatObjectOptions{})
			if minio.ToErrorResponse(err).Code != "NoSuchKey" {
				t.Fatalf("%s after erasure: %v", a.File, err)
			}
		}
		resp, body := c.do("GET", "/v1/api/exports/"+csvJob+"/download", nil, "Accept", "text/csv")
		if resp.StatusCode != 404 || !strings.Contains(string(body), "export_expired") {
			t.Fatalf("erased artifact: %d %s", resp.StatusCode, body)
		}
	})

	t.Run("ErrBucketDown", func(t *testing.T) {
		srv.Stop()
		status, body := get(t, b.URL+"/readyz", "")
		if status != 503 || !strings.Contains(body, `"reason":"storage_unavailable"`) {
			t.Fatalf("readyz with the bucket down: %d %s", status, body)
		}
		resp, body2 := c.upload("notes.txt", "lost?")
		if resp.StatusCode != 503 || !strings.Contains(string(body2), `"code":"storage_unavailable"`) || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("upload with the bucket down: %d %v %s", resp.StatusCode, resp.Header, body2)
		}
		if strings.Contains(string(body2), srv.Addr) {
			t.Fatalf("the 503 names the bucket's address: %s", body2)
		}
		// The same refusal as an MCP tool result: the code, the sentence and when to retry.
		resp, body3 := c.do("POST", "/v1/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"upload_file",`+
			`"arguments":{"filename":"notes.txt","content_base64":"aGVsbG8="}}}`),
			"Content-Type", "application/json", "Accept", "application/json, text/event-stream")
		if resp.StatusCode != 200 || !strings.Contains(string(body3), `"isError":true`) || !strings.Contains(string(body3), `storage_unavailable`) ||
			!strings.Contains(string(body3), `retry_after_seconds`) || strings.Contains(string(body3), "Internal error") {
			t.Fatalf("MCP upload with the bucket down: %d %s", resp.StatusCode, body3)
		}
		// An export started meanwhile is accepted, waits for the bucket and then finishes.
		resp, body4 := c.do("POST", "/v1/api/exports", strings.NewReader(`{"study_id":"`+s.study.String()+`"}`), "Content-Type", "application/json")
		var job struct {
			JobID string `json:"job_id"`
		}
		if resp.StatusCode != 202 || json.Unmarshal(body4, &job) != nil {
			t.Fatalf("export with the bucket down: %d %s", resp.StatusCode, body4)
		}
		for deadline := time.Now().Add(2 * time.Minute); !strings.Contains(b.Logs.String(), "the export will retry"); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the export never waited for the bucket:\n%s", b.Logs.String())
			}
		}
		srv.Restart()
		for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
			_, st := c.do("GET", "/v1/api/exports/"+job.JobID, nil)
			if strings.Contains(string(st), `"ready":true`) {
				break
			}
			if strings.Contains(string(st), `"failed"`) || time.Now().After(deadline) {
				t.Fatalf("the export after the bucket came back: %s", st)
			}
		}
		if resp, body := c.do("GET", "/v1/api/exports/"+job.JobID+"/download", nil, "Accept", "text/csv"); resp.StatusCode != 200 ||
			!strings.Contains(string(body), "participant-two") {
			t.Fatalf("download of the export that waited: %d %s", resp.StatusCode, body)
		}
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
			if status, _ := get(t, b.URL+"/readyz", ""); status == 200 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("readyz stayed unready after the bucket came back")
			}
		}
		if resp, body := c.upload("notes.txt", "kept"); resp.StatusCode >= 300 {
			t.Fatalf("upload after the bucket came back: %d %s", resp.StatusCode, body)
		}
	})

	// Everything went to the bucket: DATA/blobs holds only the (empty) scratch folder.
	filepath.WalkDir(filepath.Join(s.data, "blobs"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			t.Errorf("a blob on disk: %s", p)
		}
		return nil
	})
	// A backup carries the database and says where the blobs are instead.
	var rcBackup struct {
		BlobsElsewhere string `json:"blobs_elsewhere"`
	}
	out := filepath.Join(t.TempDir(), "b.tar")
	runJSON(t, noEnv, &rcBackup, "backup", "--data", s.data, "--out", out)
	if _, err := os.Stat(out); errors.Is(err, fs.ErrNotExist) || !strings.HasPrefix(rcBackup.BlobsElsewhere, "s3://"+srv.Bucket+"/") {
		t.Fatalf("backup: %+v %v", rcBackup, err)
	}
}

// TestS3CredentialFileServe runs the server with --blobs and no keys in its
// configuration: it finds its credential in the shared credentials file, under the
// profile AWS_PROFILE names, is ready, and stores an upload in the bucket.
func TestS3CredentialFileServe(t *testing.T) {
	srv := blobstest.Start(t)
	s := mustSeedS3(t, srv)
	for _, v := range []string{"AWS_ACCESS_KEY_ID", "AWS_ACCESS_KEY", "AWS_SECRET_ACCESS_KEY", "AWS_SECRET_KEY", "AWS_SESSION_TOKEN",
		"MINIO_ROOT_USER", "MINIO_ROOT_PASSWORD", "MINIO_ACCESS_KEY", "MINIO_SECRET_KEY", "AWS_CONFIG_FILE",
		"AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI"} {
		t.Setenv(v, "")
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	file := filepath.Join(home, "s3-credentials")
	ini := "[interviewd]\naws_access_key_id = " + blobstest.Access + "\naws_secret_access_key = " + blobstest.Secret + "\n"
	if err := os.WriteFile(file, []byte(ini), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", file)
	t.Setenv("AWS_PROFILE", "interviewd")
	noKeys := func(string) (string, bool) { return "", false }
	b := mustBootEnv(t, noKeys, "--data", s.data, "--blobs", srv.URL(), "--rate-limits", "off")
	if status, body := get(t, b.URL+"/readyz", ""); status != 200 {
		t.Fatalf("readyz: %d %s", status, body)
	}
	c := &s3Client{t: t, base: b.URL, key: s.key, http: &http.Client{Timeout: time.Minute}}
	resp, body := c.upload("notes.txt", "Kept with the profile's key.")
	var fh struct {
		FileID string `json:"file_id"`
	}
	if resp.StatusCode != 201 && resp.StatusCode != 200 || json.Unmarshal(body, &fh) != nil || fh.FileID == "" {
		t.Fatalf("upload: %d %s", resp.StatusCode, body)
	}
	if got, err := objectBytes(t, srv.Client(), srv.Bucket, "files/"+fh.FileID); err != nil || string(got) != "Kept with the profile's key." {
		t.Fatalf("uploaded object: %q %v", got, err)
	}
}

// migrated is what `interviewd migrate` prints, as far as these checks read it.
type migrated struct {
	Records  int            `json:"records"`
	Buckets  map[string]int `json:"buckets"`
	Verified bool           `json:"verified"`
	Blobs    *struct {
		Files    int  `json:"files"`
		Verified bool `json:"verified"`
	} `json:"blobs"`
}

// TestMigrateWithBlobs moves a data folder to PostgreSQL and a bucket and back with
// `interviewd migrate --blobs`: the files are copied, counted and verified both ways.
func TestMigrateWithBlobs(t *testing.T) {
	url := pgtest.URL(t)
	srv := blobstest.Start(t)
	dir := t.TempDir()
	var org struct {
		OrgID string `json:"org_id"`
	}
	admin(t, &org, "setup", "--data", dir, "--org", "Moving Research", "--email", "m@example.test")
	var added struct {
		Blob string `json:"blob"`
	}
	admin(t, &added, "plugins", "add", "--data", dir, "--org", org.OrgID, "--file", plugintest.Path(t, plugintest.JSONL))
	upload := []byte("an uploaded document")
	if err := os.MkdirAll(filepath.Join(dir, "blobs", "files"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "blobs", "files", "f1"), upload, 0o600); err != nil {
		t.Fatal(err)
	}

	var there migrated
	runJSON(t, srv.Env, &there, "migrate", "--data", dir, "--to", url, "--blobs", srv.URL())
	if there.Blobs == nil || there.Blobs.Files != 2 || !there.Blobs.Verified || !there.Verified || there.Buckets["orgs"] != 1 {
		t.Fatalf("migrate --to --blobs: %+v %+v", there, there.Blobs)
	}
	wasm := plugintest.Wasm(t, plugintest.JSONL)
	bucket := srv.Client()
	if got, err := objectBytes(t, bucket, srv.Bucket, added.Blob); err != nil || !bytes.Equal(got, wasm) {
		t.Fatalf("plugin in the bucket: %d bytes, %v", len(got), err)
	}
	if got, err := objectBytes(t, bucket, srv.Bucket, "files/f1"); err != nil || !bytes.Equal(got, upload) {
		t.Fatalf("upload in the bucket: %q, %v", got, err)
	}

	dir2 := t.TempDir()
	var back migrated
	runJSON(t, srv.Env, &back, "migrate", "--data", dir2, "--from", url, "--blobs", srv.URL())
	if back.Blobs == nil || back.Blobs.Files != 2 || back.Records != there.Records {
		t.Fatalf("migrate --from --blobs: %+v %+v", back, back.Blobs)
	}
	if got, err := os.ReadFile(filepath.Join(dir2, "blobs", filepath.FromSlash(added.Blob))); err != nil || !bytes.Equal(got, wasm) {
		t.Fatalf("plugin back in the folder: %d bytes, %v", len(got), err)
	}

	for args, want := range map[string]string{
		"gs://x":                    "want an s3:// bucket",
		"s3://x?endpoint=ftp://bad": "want host:port",
	} {
		err := cmd.Run(context.Background(), []string{"migrate", "--data", t.TempDir(), "--from", url, "--blobs", args}, io.Discard, io.Discard, srv.Env)
		if err == nil || !strings.HasPrefix(err.Error(), "migrate: ") || !strings.Contains(err.Error(), want) {
			t.Errorf("--blobs %s: %v, want %q", args, err, want)
		}
	}
}
