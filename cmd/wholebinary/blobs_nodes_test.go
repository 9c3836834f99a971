package wholebinary

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"interviewd/blobs/blobstest"
	"interviewd/kv"
	"interviewd/kv/pgtest"
	"interviewd/plugins/plugintest"
)

// TestS3TwoNodes runs two interviewd processes' worth of Run over one PostgreSQL and
// one bucket: an export made on one node is downloaded from the other, inline and by
// the signed URL the first node handed out (the signing key is in the shared store),
// and an organisation's plugin added through one is used by the other.
func TestS3TwoNodes(t *testing.T) {
	storeURL := pgtest.URL(t) // the package's PostgreSQL (TestMain stops it)
	srv := blobstest.Start(t)
	s := mustSeedS3(t, srv, "--store", storeURL)

	var added struct {
		Name string `json:"name"`
	}
	runJSON(t, srv.Env, &added, "plugins", "add", "--data", s.data, "--store", storeURL, "--blobs", srv.URL(),
		"--org", s.org.String(), "--file", plugintest.Path(t, plugintest.JSONL))

	noRedirect := &http.Client{Timeout: time.Minute, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	// Exports compile their plugin on first use, which under -race on a loaded machine can
	// pass the default two minutes: speed is not what this test is about.
	nodeA := mustBootEnv(t, srv.Env, "--data", s.data, "--store", storeURL, "--blobs", srv.URL(), "--rate-limits", "off", "--job-timeout", "30m")
	nodeB := mustBootEnv(t, srv.Env, "--data", filepath.Join(t.TempDir(), "node-b"), "--store", storeURL, "--blobs", srv.URL(), "--blobs-presign", "--rate-limits", "off", "--job-timeout", "30m")
	a := &s3Client{t: t, base: nodeA.URL, key: s.key, http: noRedirect}
	b := &s3Client{t: t, base: nodeB.URL, key: s.key, http: noRedirect}

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
	onB := strings.Replace(d.URL, nodeA.URL, nodeB.URL, 1)
	resp, err := noRedirect.Get(onB)
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

// TestS3ThreeNodesKill runs three interviewd processes over one PostgreSQL and one
// bucket, asks each for exports, and kills one with SIGKILL while an export is provably
// in flight on it (built, its upload held on the way to the bucket, its lease node 1's):
// every acknowledged export is finished (the dead node's by the others), stored once in
// the bucket, and downloadable from every surviving node.
func TestS3ThreeNodesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("several-node suite skipped in -short mode (it builds and kills the real binary)")
	}
	storeURL := pgtest.URL(t)
	srv := blobstest.Start(t)
	// The nodes are other processes: they read the credential from the environment.
	t.Setenv("AWS_ACCESS_KEY_ID", blobstest.Access)
	t.Setenv("AWS_SECRET_ACCESS_KEY", blobstest.Secret)
	s := mustSeedS3(t, srv, "--store", storeURL)
	bin := buildCrashBinary(t)
	hold := startS3Hold(t, srv)
	var clients []*s3Client
	var nodes []*crashProcess
	for i := range 3 {
		bucket := srv.URL()
		if i == 1 {
			bucket = hold.blobsURL(srv) // node 1 stores nothing: its uploads are held
		}
		n := startCrashBinary(t, bin, t.TempDir(), "--store", storeURL, "--blobs", bucket, "--job-lease", "2s")
		nodes = append(nodes, n)
		clients = append(clients, &s3Client{t: t, base: n.url, key: s.key, http: &http.Client{Timeout: time.Minute}})
	}
	// A failed export shows what each node logged about its jobs.
	jobLogs := func() string {
		var b strings.Builder
		for i, n := range nodes {
			for _, l := range strings.Split(n.logs.String(), "\n") {
				if strings.Contains(l, "job") || strings.Contains(l, `"level":"error"`) || strings.Contains(l, `"level":"warn"`) {
					fmt.Fprintf(&b, "node %d: %s\n", i, l)
				}
			}
		}
		return b.String()
	}
	for _, c := range clients {
		c.logs = jobLogs
	}
	var jobs, onNode1 []string
	for range 3 {
		for i, c := range clients {
			job := c.startExport(s.study, "csv")
			jobs = append(jobs, job)
			if i == 1 {
				onNode1 = append(onNode1, job)
			}
		}
	}
	// One of node 1's exports provably in flight there: built, its upload held on the way
	// to the bucket, its lease node 1's. Another node may claim a job node 1 was slow to
	// (the load of the machine): then the next is tried, and more are asked of node 1.
	store := storeReader(t, storeURL)
	var held, owner string
	for n := 0; owner == ""; n++ {
		switch {
		case n < len(onNode1):
			held = onNode1[n]
		case n < len(onNode1)+5:
			held = clients[1].startExport(s.study, "csv")
			jobs = append(jobs, held)
		default:
			t.Fatalf("none of %d exports asked of node 1 was run by it", n)
		}
		owner = waitHeldOn(t, store, nodes[1], s.org.String(), kv.JobExport, held, func() bool { return hold.holding(held) })
	}
	nodes[1].kill(t)
	survivors := []*s3Client{clients[0], clients[2]}
	for i, job := range jobs {
		c := survivors[i%2]
		c.waitExport(job)
		for _, d := range survivors {
			resp, body := d.do("GET", "/v1/api/exports/"+job+"/download", nil, "Accept", "text/csv")
			if resp.StatusCode != 200 || !strings.Contains(string(body), "participant-one") {
				t.Fatalf("export %s from %s: %d %s", job, d.base, resp.StatusCode, body)
			}
		}
	}
	checkTakenOver(t, store, s.org.String(), kv.JobExport, held, owner, kv.ExportCompleted)
	stored := map[string]bool{}
	for o := range srv.Client().ListObjects(context.Background(), srv.Bucket, minio.ListObjectsOptions{Prefix: "exports/", Recursive: true}) {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		stored[o.Key] = true
	}
	for _, job := range jobs {
		if !stored["exports/"+job+".csv"] {
			t.Fatalf("export %s is not in the bucket (it holds %v)", job, stored)
		}
	}
	t.Logf("%d exports over 3 nodes, one killed with export %s in flight: all finished and stored, the dead node's by the others; %d objects under exports/",
		len(jobs), held, len(stored))
}
