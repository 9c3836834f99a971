package blobs_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"interviewd/blobs"
	"interviewd/blobs/blobstest"
)

// TestCopy copies a data folder's blobs into a bucket and back, as `interviewd migrate`
// does, and checks the counts and every byte.
func TestCopy(t *testing.T) {
	ctx := context.Background()
	src, err := blobs.NewFS(filepath.Join(t.TempDir(), "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for i := range 25 {
		k := fmt.Sprintf("files/%02d", i)
		want[k] = strings.Repeat(k, i*100)
		put(t, src, k, []byte(want[k]))
	}
	want["exports/j.csv"], want["plugins/p.wasm"] = "a,b\n", "\x00asm"
	put(t, src, "exports/j.csv", []byte(want["exports/j.csv"]))
	put(t, src, "plugins/p.wasm", []byte(want["plugins/p.wasm"]))

	bucket := newS3(t, blobstest.Start(t))
	n, err := blobs.Copy(ctx, bucket, src)
	if err != nil || n != len(want) {
		t.Fatalf("copy to S3: %d %v, want %d", n, err, len(want))
	}
	back, _ := blobs.NewFS(filepath.Join(t.TempDir(), "back"))
	if n, err := blobs.Copy(ctx, back, bucket); err != nil || n != len(want) {
		t.Fatalf("copy back: %d %v", n, err)
	}
	for k, v := range want {
		if got := string(get(t, back, k)); got != v {
			t.Fatalf("%s: %d bytes back, want %d", k, len(got), len(v))
		}
	}
	// Again: copying is idempotent, blobs of the same key are replaced.
	if n, err := blobs.Copy(ctx, bucket, src); err != nil || n != len(want) {
		t.Fatalf("second copy: %d %v", n, err)
	}
}

// TestCopyErrUnavailable stops the destination mid-way: the error says so and n counts
// what was copied and verified.
func TestCopyErrUnavailable(t *testing.T) {
	srv := blobstest.Start(t)
	bucket := newS3(t, srv)
	src, _ := blobs.NewFS(t.TempDir())
	put(t, src, "files/a", []byte("a"))
	srv.Stop()
	n, err := blobs.Copy(context.Background(), bucket, src)
	if err == nil || n != 0 || !strings.Contains(err.Error(), "files/a") {
		t.Fatalf("copy into a stopped bucket: %d %v", n, err)
	}
}

func TestParseS3URL(t *testing.T) {
	env := func(name string) (string, bool) {
		return map[string]string{"AWS_ACCESS_KEY_ID": "AK", "AWS_SECRET_ACCESS_KEY": "SK", "AWS_SESSION_TOKEN": "TOK"}[name], true
	}
	cfg, err := blobs.ParseS3URL("s3://media/interviewd?endpoint=https://acct.r2.cloudflarestorage.com&region=auto", env)
	if err != nil || cfg.Bucket != "media" || cfg.Prefix != "interviewd/" || cfg.Endpoint != "acct.r2.cloudflarestorage.com" ||
		!cfg.Secure || cfg.Region != "auto" || cfg.AccessKey != "AK" || cfg.SecretKey != "SK" || cfg.SessionToken != "TOK" {
		t.Fatalf("R2: %+v %v", cfg, err)
	}
	cfg, err = blobs.ParseS3URL("s3://b?endpoint=http://127.0.0.1:3900&region=garage", env)
	if err != nil || cfg.Endpoint != "127.0.0.1:3900" || cfg.Secure || cfg.Prefix != "" {
		t.Fatalf("Garage: %+v %v", cfg, err)
	}
	cfg, err = blobs.ParseS3URL("s3://b?region=eu-west-1", env)
	if err != nil || cfg.Endpoint != "s3.eu-west-1.amazonaws.com" || !cfg.Secure {
		t.Fatalf("AWS: %+v %v", cfg, err)
	}
	noCreds := func(string) (string, bool) { return "", false }
	for raw, why := range map[string]string{
		"s3://?endpoint=x:1":              "bucket is missing",
		"s3://b?endpoint=ftp://x":         "want host:port",
		"s3://b?endpoint=x:1&bucket=y":    `unknown parameter "bucket"`,
		"s3://user:pw@b?endpoint=x:1":     "AWS_ACCESS_KEY_ID",
		"s3://b/../x?endpoint=x:1":        "not a clean path",
		"s3://b?endpoint=http://x:1/path": "want host:port",
	} {
		if _, err := blobs.ParseS3URL(raw, env); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("%s: %v, want %q", raw, err, why)
		}
	}
	// No keys in the configuration: the store looks through the credential chain.
	cfg, err = blobs.ParseS3URL("s3://b?endpoint=x:1", noCreds)
	if err != nil || cfg.AccessKey != "" || cfg.SecretKey != "" || cfg.SessionToken != "" {
		t.Errorf("no keys: %+v %v", cfg, err)
	}
	cfg, err = blobs.ParseS3URL("s3://b?endpoint=x:1&sse=kms&kms_key=alias/interviewd", env)
	if err != nil || cfg.SSE != blobs.SSEKMS || cfg.KMSKeyID != "alias/interviewd" {
		t.Errorf("SSE-KMS: %+v %v", cfg, err)
	}
	if _, err := blobs.Open(context.Background(), "gs://b", t.TempDir(), env); err == nil || !strings.Contains(err.Error(), "unknown scheme gs") {
		t.Errorf("gs://: %v", err)
	}
	shared := filepath.Join(t.TempDir(), "shared")
	if s, err := blobs.Open(context.Background(), shared, "unused", env); err != nil || s.(*blobs.FS).Dir() != shared {
		t.Errorf("a folder: %v %v", s, err)
	}
}
