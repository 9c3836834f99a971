package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"interviewd/blobs/blobstest"
	"interviewd/kv/pgtest"
)

// TestS3TwoNodes runs two interviewd processes' worth of run() over one PostgreSQL and
// one bucket: an export made on one node is downloaded from the other, inline and by
// the signed URL the first node handed out (the signing key is in the shared store),
// and an organisation's plugin added through one is used by the other.
func TestS3TwoNodes(t *testing.T) {
	pg, err := pgtest.Start()
	if errors.Is(err, pgtest.ErrAbsent) && !pgtest.Required() {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pg.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	storeURL, err := pg.NewDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	srv := blobstest.Start(t)
	s := mustSeedS3(t, srv, "--store", storeURL)

	var added struct {
		Name string `json:"name"`
	}
	runJSON(t, srv.Env, &added, "plugins", "add", "--data", s.data, "--store", storeURL, "--blobs", srv.URL(),
		"--org", s.org.String(), "--file", "plugins/testdata/jsonl/jsonl.wasm")

	noRedirect := &http.Client{Timeout: time.Minute, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	nodeA := mustBootEnv(t, srv.Env, "--data", s.data, "--store", storeURL, "--blobs", srv.URL(), "--rate-limits", "off")
	nodeB := mustBootEnv(t, srv.Env, "--data", filepath.Join(t.TempDir(), "node-b"), "--store", storeURL, "--blobs", srv.URL(), "--blobs-presign", "--rate-limits", "off")
	a := &s3Client{t: t, base: nodeA.url, key: s.key, http: noRedirect}
	b := &s3Client{t: t, base: nodeB.url, key: s.key, http: noRedirect}

	job := a.export(s.study, added.Name) // the plugin from the bucket, on node A
	resp, body := b.do("GET", "/v1/api/exports/"+job+"/download", nil, "Accept", "text/csv")
	if resp.StatusCode != 200 || !strings.Contains(string(body), "participant-one") {
		t.Fatalf("node B inline download of node A's export: %d %s", resp.StatusCode, body)
	}
	resp, body = a.do("GET", "/v1/api/exports/"+job+"/download", nil, "Accept", "application/json")
	var d struct {
		URL string `json:"download_url"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(body, &d) != nil {
		t.Fatalf("download URL from node A: %d %s", resp.StatusCode, body)
	}
	// The same signed URL, sent to node B (as a load balancer may): B checks A's
	// signature and redirects to the bucket.
	onB := strings.Replace(d.URL, nodeA.url, nodeB.url, 1)
	resp, err = noRedirect.Get(onB)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || !strings.HasPrefix(resp.Header.Get("Location"), "http://"+srv.Addr+"/") {
		t.Fatalf("node A's signed URL on node B: %d %v", resp.StatusCode, resp.Header)
	}
	resp, err = http.Get(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(got), "participant-two") {
		t.Fatalf("presigned GET: %d %s", resp.StatusCode, got)
	}
	// And on node A, which streams it itself.
	resp, err = noRedirect.Get(d.URL)
	if err != nil {
		t.Fatal(err)
	}
	got, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(got), "participant-two") {
		t.Fatalf("signed URL on node A: %d %s", resp.StatusCode, got)
	}
	// Node A's data folder holds no blob: they are all in the bucket.
	filepath.WalkDir(s.data, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.Contains(p, string(filepath.Separator)+"blobs"+string(filepath.Separator)) {
			t.Errorf("a blob on node A's disk: %s", p)
		}
		return nil
	})
}
