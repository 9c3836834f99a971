package s3client

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"interviewd/blobs/blobstest"
)

// TestHTTPS runs the client against a real S3 server (versitygw) on https: objects put
// with an unsigned payload over TLS, read, described, listed, presigned and deleted.
func TestHTTPS(t *testing.T) {
	srv := blobstest.StartTLS(t)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: srv.RootCAs}}
	t.Cleanup(tr.CloseIdleConnections)
	c, err := New(Config{
		Endpoint: srv.Addr, Secure: true, Region: "us-east-1", Bucket: srv.Bucket,
		Credential: Credential{AccessKey: blobstest.Access, SecretKey: blobstest.Secret},
		Transport:  tr,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	body := bytes.Repeat([]byte("0123456789"), 100_000)
	if err := c.PutObject(ctx, "dir/a b.bin", bytes.NewReader(body), int64(len(body)), "application/octet-stream"); err != nil {
		t.Fatal(err)
	}
	r, info, err := c.GetObject(ctx, "dir/a b.bin")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil || !bytes.Equal(got, body) || info.Size != int64(len(body)) {
		t.Fatalf("get: %d bytes, size %d, %v", len(got), info.Size, err)
	}
	if info, err := c.HeadObject(ctx, "dir/a b.bin"); err != nil || info.Size != int64(len(body)) {
		t.Fatalf("head: %+v %v", info, err)
	}
	var listed []string
	if err := c.ListObjects(ctx, "dir/", func(o ObjectInfo) error { listed = append(listed, o.Key); return nil }); err != nil {
		t.Fatal(err)
	}
	if strings.Join(listed, "|") != "dir/a b.bin" {
		t.Fatalf("list: %q", listed)
	}
	u, err := c.PresignGet(ctx, "dir/a b.bin", time.Minute, url.Values{"response-content-type": {"text/plain"}})
	if err != nil || !strings.HasPrefix(u, "https://"+srv.Addr+"/") {
		t.Fatalf("presign: %s %v", u, err)
	}
	resp, err := (&http.Client{Transport: tr}).Get(u)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || n != int64(len(body)) || resp.Header.Get("Content-Type") != "text/plain" {
		t.Fatalf("presigned GET: %d, %d bytes, %v", resp.StatusCode, n, resp.Header)
	}
	if err := c.DeleteObject(ctx, "dir/a b.bin"); err != nil {
		t.Fatal(err)
	}
	var serr *Error
	if _, err := c.HeadObject(ctx, "dir/a b.bin"); !errors.As(err, &serr) || !serr.NotFound() {
		t.Fatalf("after delete: %v", err)
	}
	if err := c.HeadBucket(ctx); err != nil {
		t.Fatal(err)
	}
}
