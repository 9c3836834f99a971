package server

import (
	"bytes"
	"mime"
	"mime/multipart"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"interviewd/kv"
	"interviewd/plugins/plugintest"
	"interviewd/server/pipeline"
	"interviewd/server/research"
)

// TestAppExportStartProgressDownload: an export started from the page, followed to
// completion, downloads the redacted CSV; the test environment is refused plainly.
func TestAppExportStartProgressDownload(t *testing.T) {
	e := mustServe(t)
	owner := e.mustAppClient(t, "a@example.com", e.orgA.ID, kv.EnvLive, "")
	st := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeLive, plainBrief("Exported", "How do you plan?"))
	e.completeInterview(e.linkFor(st, "", nil, ""), []string{"Mail me at jane@example.com please"})

	wantPage(t, owner.get(t, "/app/exports?study="+st.ID.String()), 200, `<option value="`+st.ID.String()+`" selected>Exported</option>`, `value="csv" selected`)
	wantPage(t, owner.post(t, "/app/exports", url.Values{"study_id": {"nope"}}), 422, "Choose a study to export.")
	wantPage(t, owner.post(t, "/app/exports", url.Values{"study_id": {st.ID.String()}, "format": {"parquet"}}), 422, "Unknown export format")
	loc := wantRedirect(t, owner.post(t, "/app/exports", url.Values{"study_id": {st.ID.String()}, "format": {"csv"}}), "/app/exports/")
	wantPage(t, owner.get(t, loc), 200, "<h1>Export</h1>")
	got := pollJSON(t, owner, loc+"/status", func(s research.ExportStatus) bool {
		return s.Status == kv.ExportCompleted || s.Status == kv.ExportFailed
	})
	if !got.Ready {
		t.Fatalf("export ended %+v", got)
	}
	wantPage(t, owner.get(t, loc), 200, `href="`+loc+`/download"`, "Ready to download")
	d := owner.get(t, loc+"/download")
	if d.status != 200 || !strings.HasPrefix(d.header.Get("Content-Type"), "text/csv") || !strings.HasPrefix(d.header.Get("Content-Disposition"), "attachment") ||
		!strings.Contains(string(d.body), "[EMAIL]") || strings.Contains(string(d.body), "jane@example.com") || d.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("download: %d %v\n%s", d.status, d.header, d.body)
	}
	// The one RFC 6266 header every download carries: an ASCII name and a UTF-8 one.
	if cd := d.header.Get("Content-Disposition"); !strings.Contains(cd, "filename*=UTF-8''interviews-") {
		t.Fatalf("download's Content-Disposition %q", cd)
	} else if _, params, err := mime.ParseMediaType(cd); err != nil || cd != pipeline.AttachmentDisposition(params["filename"]) {
		t.Fatalf("download's Content-Disposition %q: %v", cd, err)
	}

	// Another organisation's export is not found.
	b := e.mustAppClient(t, "b@example.com", e.orgB.ID, kv.EnvLive, "")
	wantPage(t, b.get(t, loc), 404)
	wantPage(t, b.get(t, loc+"/download"), 404)

	test := e.mustAppClient(t, "a@example.com", e.orgA.ID, kv.EnvTest, "")
	wantPage(t, test.get(t, "/app/exports"), 200, "test data cannot be exported")
	wantPage(t, test.post(t, "/app/exports", url.Values{"study_id": {st.ID.String()}}), 403, "Test-environment")
}

// multipartFile builds a multipart body with one part "file".
func multipartFile(t *testing.T, name string, content []byte) (string, *bytes.Buffer) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	fw, err := w.CreateFormFile("file", name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fw.Write(content); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return w.FormDataContentType(), &buf
}

// TestAppRedactionAndPlugins: the redaction form saves what `org redaction` saves and
// refuses a bad pattern beside its row; a plugin uploads, lists, exports and goes.
func TestAppRedactionAndPlugins(t *testing.T) {
	e := mustServe(t)
	owner := e.mustAppClient(t, "a@example.com", e.orgA.ID, kv.EnvLive, "")
	e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeLive, plainBrief("Formats", "Why?"))
	wantPage(t, owner.get(t, "/app/settings/redaction"), 200, `name="email" value="on" checked`, "No plugins", `action="/app/settings/plugins"`)

	wantPage(t, owner.post(t, "/app/settings/redaction", url.Values{"email": {"on"}, "pattern_name": {"bad name", ""}, "pattern_regex": {"(", ""}}), 422,
		`id="pat-err-0"`, `value="bad name"`)
	if r, _ := e.db.FindRedaction(t.Context(), e.orgA.ID); len(r.Patterns) != 0 || !r.Phone {
		t.Fatalf("a refused form changed the settings: %+v", r)
	}
	wantPage(t, owner.post(t, "/app/settings/redaction", url.Values{"email": {"on"}, "card": {"on"}, "pattern_name": {"TICKET", ""}, "pattern_regex": {`TCK-[0-9]{4}`, ""}}), 200,
		"Redaction settings saved", `value="TICKET"`)
	r, err := e.db.FindRedaction(t.Context(), e.orgA.ID)
	if err != nil || !r.Email || r.Phone || !r.Card || r.IP || len(r.Patterns) != 1 || r.Patterns[0] != (kv.RedactionPattern{Name: "TICKET", Regex: `TCK-[0-9]{4}`}) {
		t.Fatalf("saved %+v %v", r, err)
	}

	// Plugins: the CSRF token travels in a header for multipart posts.
	wasm := plugintest.Wasm(t, plugintest.JSONL)
	// Without its token: refused before the body is read (a small body, so the client
	// has sent it all before the refusal closes the connection).
	ct, body := multipartFile(t, "jsonl.wasm", []byte("\x00asm"))
	wantPage(t, owner.send(t, "POST", "/app/settings/plugins", ct, body), 403)
	ct, body = multipartFile(t, "junk.wasm", []byte("not a module"))
	wantPage(t, owner.send(t, "POST", "/app/settings/plugins", ct, body, "X-CSRF-Token", owner.csrf), 422, `id="plugin-err"`, "Not a usable plugin")
	ct, body = multipartFile(t, "jsonl.wasm", wasm)
	wantRedirect(t, owner.send(t, "POST", "/app/settings/plugins", ct, body, "X-CSRF-Token", owner.csrf), "/app/settings/redaction?done=plugin_added")
	wantPage(t, owner.get(t, "/app/settings/redaction?done=plugin_added"), 200, "Plugin added", "jsonl", "formatter")
	wantPage(t, owner.get(t, "/app/exports"), 200, `value="jsonl"`)
	list, err := e.db.FindPlugins(t.Context(), e.orgA.ID)
	if err != nil || len(list) != 1 {
		t.Fatalf("plugins %+v %v", list, err)
	}
	blob := filepath.Join(e.db.BlobDir(), list[0].Blob)
	if _, err := os.Stat(blob); err != nil {
		t.Fatal(err)
	}

	// Members read the settings but change nothing.
	member := e.mustAppClient(t, "m@example.com", e.orgA.ID, kv.EnvLive, kv.RoleMember)
	wantPage(t, member.get(t, "/app/settings/redaction"), 200, "Only owners and admins change these settings", "jsonl")
	wantPage(t, member.post(t, "/app/settings/redaction", url.Values{"email": {"on"}}), 403)
	wantPage(t, member.post(t, "/app/settings/plugins/remove", url.Values{"kind": {"formatter"}, "name": {"jsonl"}}), 403)

	wantRedirect(t, owner.post(t, "/app/settings/plugins/remove", url.Values{"kind": {"formatter"}, "name": {"jsonl"}}), "/app/settings/redaction?done=plugin_removed")
	if list, _ := e.db.FindPlugins(t.Context(), e.orgA.ID); len(list) != 0 {
		t.Fatalf("still listed: %+v", list)
	}
	if _, err := os.Stat(blob); !os.IsNotExist(err) {
		t.Fatalf("module left behind: %v", err)
	}
	wantPage(t, owner.post(t, "/app/settings/plugins/remove", url.Values{"kind": {"formatter"}, "name": {"jsonl"}}), 404)
}
