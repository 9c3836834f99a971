package server

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"

	"interviewd/blobs"
	"interviewd/blobs/blobstest"
	"interviewd/kv"
	"interviewd/plugins/plugintest"
)

// withBlobs keeps the server's files in store.
func withBlobs(store blobs.Store) serveOption {
	return func(_ *Config, o *kv.Options) { o.Blobs = store }
}

// TestAppPluginsInBucket adds a plugin from the web app into a versitygw bucket, then
// stops the bucket: the next upload is a page saying the files are out of reach, with
// Retry-After, and the cause only in the log.
func TestAppPluginsInBucket(t *testing.T) {
	srv := blobstest.Start(t)
	store, err := blobs.Open(context.Background(), srv.URL(), "", srv.Env)
	if err != nil {
		t.Fatal(err)
	}
	e := mustServe(t, withBlobs(store))
	owner := e.mustAppClient(t, "a@example.com", e.orgA.ID, kv.EnvLive, "")
	wasm := plugintest.Wasm(t, plugintest.JSONL)
	ct, body := multipartFile(t, "jsonl.wasm", wasm)
	wantRedirect(t, owner.send(t, "POST", "/app/settings/plugins", ct, body, "X-CSRF-Token", owner.csrf), "/app/settings/redaction?done=plugin_added")
	list, err := e.db.FindPlugins(t.Context(), e.orgA.ID)
	if err != nil || len(list) != 1 {
		t.Fatalf("plugins %+v %v", list, err)
	}
	if _, err := srv.Client().StatObject(t.Context(), srv.Bucket, list[0].Blob, minio.StatObjectOptions{}); err != nil {
		t.Fatalf("the plugin is not in the bucket: %v", err)
	}
	if _, err := os.Stat(filepath.Join(e.db.BlobDir(), list[0].Blob)); !os.IsNotExist(err) {
		t.Fatalf("the plugin is on disk too: %v", err)
	}

	srv.Stop()
	ct, body = multipartFile(t, "jsonl.wasm", wasm)
	r := owner.send(t, "POST", "/app/settings/plugins", ct, body, "X-CSRF-Token", owner.csrf)
	wantPage(t, r, 503, "Files are out of reach", "File storage is unreachable right now")
	if r.header.Get("Retry-After") == "" || strings.Contains(string(r.body), srv.Addr) {
		t.Fatalf("503 page: Retry-After %q, body:\n%s", r.header.Get("Retry-After"), r.body)
	}
}
