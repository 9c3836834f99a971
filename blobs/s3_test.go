package blobs_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"interviewd/blobs"
	"interviewd/blobs/blobstest"
)

// TestS3Keys stores keys with spaces, '+', '%', reserved punctuation and non-ASCII
// bytes: each is one object of exactly that name (as a plain client of the bucket sees
// it), read, described, listed in byte order and deleted by the store.
func TestS3Keys(t *testing.T) {
	srv := blobstest.Start(t)
	s := newS3(t, srv)
	bucket := srv.Client()
	ctx := context.Background()
	keyList := []string{ // in byte order, as listings are
		"files/(x)!*'~$&=,;:@",
		"files/a b+c%d",
		"files/plain",
		"files/é/ü ß/日本",
	}
	for i, key := range keyList {
		b := []byte(strings.Repeat(key, i+1))
		put(t, s, key, b)
		if got := get(t, s, key); !bytes.Equal(got, b) {
			t.Fatalf("read %s: %q", key, got)
		}
		st, err := s.Stat(ctx, key)
		if err != nil || st.Key != key || st.Size != int64(len(b)) || st.ModTime.IsZero() {
			t.Fatalf("stat %s: %+v %v", key, st, err)
		}
		if _, err := bucket.StatObject(ctx, srv.Bucket, key, minio.StatObjectOptions{}); err != nil {
			t.Fatalf("the bucket has no object %q: %v", key, err)
		}
	}
	list, err := s.List(ctx, "files/")
	if err != nil || strings.Join(keys(list), "|") != strings.Join(keyList, "|") {
		t.Fatalf("list: %q %v", keys(list), err)
	}
	for _, key := range keyList {
		if err := s.Delete(ctx, key); err != nil {
			t.Fatal(err)
		}
		if _, err := bucket.StatObject(ctx, srv.Bucket, key, minio.StatObjectOptions{}); minio.ToErrorResponse(err).Code != "NoSuchKey" {
			t.Fatalf("after the delete of %s: %v", key, err)
		}
	}
}

// TestS3ListPages lists more objects than one ListObjectsV2 page holds (1,000), so the
// continuation token is followed.
func TestS3ListPages(t *testing.T) {
	srv := blobstest.Start(t)
	s := newS3(t, srv)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const n = 1203
	sem := make(chan struct{}, 16)
	errs := make(chan error, n)
	for i := range n {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			k := fmt.Sprintf("many/%04d", i)
			errs <- s.Put(ctx, k, strings.NewReader(k), int64(len(k)))
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	list, err := s.List(ctx, "many/")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != n {
		t.Fatalf("listed %d of %d", len(list), n)
	}
	for i, b := range list {
		if want := fmt.Sprintf("many/%04d", i); b.Key != want || b.Size != int64(len(want)) {
			t.Fatalf("entry %d: %+v, want %s", i, b, want)
		}
	}
}

// parts is how many parts the bucket says key was uploaded in: the N of a multipart
// object's ETag "MD5-N", 1 for an object of one PUT.
func parts(t *testing.T, srv *blobstest.S3, key string) int {
	t.Helper()
	st, err := srv.Client().StatObject(context.Background(), srv.Bucket, key, minio.StatObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, n, ok := strings.Cut(strings.Trim(st.ETag, `"`), "-")
	if !ok {
		return 1
	}
	var count int
	if _, err := fmt.Sscan(n, &count); err != nil {
		t.Fatalf("ETag %q", st.ETag)
	}
	return count
}

// compositeCRC32C is S3's checksum of an object uploaded in parts of partSize: the
// CRC32C (Castagnoli) of the concatenated big-endian CRC32Cs of the parts, in base64,
// then "-" and the number of parts.
func compositeCRC32C(b []byte, partSize int) string {
	table := crc32.MakeTable(crc32.Castagnoli)
	var sums []byte
	n := 0
	for ; len(b) > 0; n++ {
		part := b[:min(partSize, len(b))]
		b = b[len(part):]
		sums = binary.BigEndian.AppendUint32(sums, crc32.Checksum(part, table))
	}
	whole := binary.BigEndian.AppendUint32(nil, crc32.Checksum(sums, table))
	return base64.StdEncoding.EncodeToString(whole) + "-" + strconv.Itoa(n)
}

// TestS3Multipart stores blobs larger than a part: of a known size (a file moved into
// the store) and of unknown size (a stream). Each reads back byte for byte and was
// uploaded in ceil(size/PartSize) parts, each with its checksum; a blob of one part's size or less is one PUT.
// A multipart upload cut short stores nothing and leaves no upload behind.
func TestS3Multipart(t *testing.T) {
	srv := blobstest.Start(t)
	s := newS3(t, srv)
	ctx := context.Background()
	big := make([]byte, 2*blobs.PartSize+blobs.PartSize/2+7) // three parts, the last short
	rand.Read(big)

	put(t, s, "files/known", big)
	if got := get(t, s, "files/known"); !bytes.Equal(got, big) {
		t.Fatal("the multipart blob of known size reads differently")
	}
	if n := parts(t, srv, "files/known"); n != 3 {
		t.Fatalf("known size: %d parts, want 3", n)
	}
	// Each part was sent with its CRC32C, and the bucket keeps their composite: the
	// CRC32C of the parts' CRC32Cs, "-3".
	st, err := srv.Client().StatObject(ctx, srv.Bucket, "files/known", minio.StatObjectOptions{Checksum: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := compositeCRC32C(big, blobs.PartSize); st.ChecksumCRC32C != want {
		t.Fatalf("the bucket's checksum is %q, want %q", st.ChecksumCRC32C, want)
	}

	if err := s.Put(ctx, "exports/stream", io.MultiReader(bytes.NewReader(big)), -1); err != nil {
		t.Fatal(err)
	}
	if got := get(t, s, "exports/stream"); !bytes.Equal(got, big) {
		t.Fatal("the multipart blob of unknown size reads differently")
	}
	if n := parts(t, srv, "exports/stream"); n != 3 {
		t.Fatalf("unknown size: %d parts, want 3", n)
	}

	small := big[:blobs.PartSize]
	put(t, s, "files/one-part", small)
	if err := s.Put(ctx, "exports/one-part", io.MultiReader(bytes.NewReader(small)), -1); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"files/one-part", "exports/one-part"} {
		if n := parts(t, srv, k); n != 1 {
			t.Fatalf("%s: %d parts, want one PUT", k, n)
		}
		if got := get(t, s, k); !bytes.Equal(got, small) {
			t.Fatalf("%s reads differently", k)
		}
	}

	// Cut short in the second part, of either kind: nothing stored, the upload aborted.
	boom := errors.New("disk on fire")
	failing := map[string]func() error{
		"files/short": func() error {
			return s.Put(ctx, "files/short", bytes.NewReader(big[:blobs.PartSize+1]), int64(len(big)))
		},
		"exports/failing": func() error {
			return s.Put(ctx, "exports/failing", io.MultiReader(bytes.NewReader(big[:blobs.PartSize+1]), errReader{boom}), -1)
		},
	}
	for key, putIt := range failing {
		if err := putIt(); err == nil {
			t.Fatalf("%s: a stream cut short was stored", key)
		}
		if _, err := s.Stat(ctx, key); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%s: a failed multipart upload left a blob: %v", key, err)
		}
	}
	for u := range srv.Client().ListIncompleteUploads(ctx, srv.Bucket, "", true) {
		t.Errorf("an unfinished upload is left in the bucket: %+v", u)
	}
}

// TestS3HTTPS runs the store against versitygw on https (its certificate trusted through
// S3Config.RootCAs): one-PUT and multipart uploads, whose payload is not signed there
// but carries a CRC32C checksum, read back; a presigned URL answers on https.
func TestS3HTTPS(t *testing.T) {
	srv := blobstest.StartTLS(t)
	cfg, err := blobs.ParseS3URL(srv.URL(), srv.Env)
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Secure {
		t.Fatalf("%s parsed as plain http", srv.URL())
	}
	cfg.RootCAs = srv.RootCAs
	s, err := blobs.NewS3(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	small := bytes.Repeat([]byte("0123456789"), 100_000)
	big := make([]byte, blobs.PartSize+blobs.PartSize/4)
	rand.Read(big)
	put(t, s, "dir/a b.bin", small)
	put(t, s, "dir/big.bin", big)
	if got := get(t, s, "dir/a b.bin"); !bytes.Equal(got, small) {
		t.Fatal("the small blob reads differently")
	}
	if got := get(t, s, "dir/big.bin"); !bytes.Equal(got, big) {
		t.Fatal("the multipart blob reads differently")
	}
	if n := parts(t, srv, "dir/big.bin"); n != 2 {
		t.Fatalf("%d parts, want 2", n)
	}
	u, err := s.Presign(context.Background(), "dir/a b.bin", time.Minute, "a.bin", "application/octet-stream")
	if err != nil || !strings.HasPrefix(u, "https://"+srv.Addr+"/") {
		t.Fatalf("presign: %s %v", u, err)
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: srv.RootCAs}}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get(u)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Equal(body, small) {
		t.Fatalf("presigned GET: %d, %d bytes", resp.StatusCode, len(body))
	}
	if err := s.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// recorder passes every request on to the real S3 server and keeps the
// server-side-encryption headers of each write.
type recorder struct {
	addr string
	mu   sync.Mutex
	sse  map[string]string // "METHOD path?query" → header values
}

func startRecorder(t *testing.T, srv *blobstest.S3) *recorder {
	t.Helper()
	rec := &recorder{sse: map[string]string{}}
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.Out.URL.Scheme, r.Out.URL.Host = "http", srv.Addr // Out.Host stays the signed one
	}}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut || r.Method == http.MethodPost {
			rec.mu.Lock()
			rec.sse[r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery] = r.Header.Get("X-Amz-Server-Side-Encryption") + " " +
				r.Header.Get("X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id")
			rec.mu.Unlock()
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	rec.addr = ts.Listener.Addr().String()
	return rec
}

// TestS3ServerSideEncryption asks for SSE-S3 and SSE-KMS with sse=s3 and
// sse=kms&kms_key=…: every object written, in one PUT or in parts, is sent with the
// header asking the service to encrypt it (the PUT, or the request that starts a
// multipart upload), and reads back. versitygw does not encrypt (it stores the bytes
// as they come and answers without an encryption header), so what the service does
// with the header is not checked here.
func TestS3ServerSideEncryption(t *testing.T) {
	srv := blobstest.Start(t)
	rec := startRecorder(t, srv)
	viaRecorder := strings.Replace(srv.URL(), "endpoint=http://"+srv.Addr, "endpoint=http://"+rec.addr, 1)
	big := make([]byte, blobs.PartSize+1)
	rand.Read(big)
	for _, c := range []struct{ param, want string }{
		{"&sse=s3", "AES256 "},
		{"&sse=kms", "aws:kms "},
		{"&sse=kms&kms_key=arn:aws:kms:us-east-1:111122223333:key/1234abcd", "aws:kms arn:aws:kms:us-east-1:111122223333:key/1234abcd"},
		{"", " "},
	} {
		s, err := blobs.Open(context.Background(), viaRecorder+c.param, "", srv.Env)
		if err != nil {
			t.Fatal(err)
		}
		put(t, s, "enc/small", []byte("secret"))
		put(t, s, "enc/big", big)
		if got := get(t, s, "enc/big"); !bytes.Equal(got, big) {
			t.Fatalf("%s: the multipart blob reads differently", c.param)
		}
		rec.mu.Lock()
		small, start := rec.sse["PUT /"+srv.Bucket+"/enc/small?"], "(none)"
		for req, h := range rec.sse {
			if strings.HasPrefix(req, "POST /"+srv.Bucket+"/enc/big?uploads") {
				start = h
			}
		}
		clear(rec.sse)
		rec.mu.Unlock()
		if small != c.want || start != c.want {
			t.Fatalf("%q: the PUT asked for %q, the multipart upload for %q; want %q", c.param, small, start, c.want)
		}
	}
	for param, want := range map[string]string{
		"&sse=aes":          `want sse=s3 (SSE-S3) or sse=kms`,
		"&kms_key=k":        "kms_key is the key of sse=kms",
		"&sse=s3&kms_key=k": "kms_key is the key of sse=kms",
	} {
		if _, err := blobs.ParseS3URL(srv.URL()+param, srv.Env); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", param, err, want)
		}
	}
}
