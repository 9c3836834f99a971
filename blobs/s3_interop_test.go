package blobs_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"

	"interviewd/blobs/blobstest"
)

// interopKeys are keys whose encoding the two clients must agree on: spaces, '+', '%',
// reserved punctuation and non-ASCII bytes in the path and in listings.
// They are in byte order, as listings are.
var interopKeys = []string{
	"files/(x)!*'~$&=,;:@",
	"files/a b+c%d",
	"files/plain",
	"files/é/ü ß/日本",
}

// TestS3InteropMinio checks our S3 client against minio-go, the SDK it replaced, on one
// real bucket: what one writes the other reads, lists and deletes, byte for byte,
// including an object minio-go uploads in parts.
func TestS3InteropMinio(t *testing.T) {
	srv := blobstest.Start(t)
	ours := newS3(t, srv)
	theirs := srv.Client()
	ctx := context.Background()

	t.Run("OursToMinio", func(t *testing.T) {
		for i, key := range interopKeys {
			b := []byte(strings.Repeat(key, i+1))
			put(t, ours, "ours/"+key, b)
			obj, err := theirs.GetObject(ctx, srv.Bucket, "ours/"+key, minio.GetObjectOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(obj)
			obj.Close()
			if err != nil || !bytes.Equal(got, b) {
				t.Fatalf("minio-go read %s: %q %v", key, got, err)
			}
		}
		var listed []string
		for o := range theirs.ListObjects(ctx, srv.Bucket, minio.ListObjectsOptions{Prefix: "ours/", Recursive: true}) {
			if o.Err != nil {
				t.Fatal(o.Err)
			}
			listed = append(listed, strings.TrimPrefix(o.Key, "ours/"))
		}
		if strings.Join(listed, "|") != strings.Join(interopKeys, "|") {
			t.Fatalf("minio-go lists %q", listed)
		}
	})

	t.Run("MinioToOurs", func(t *testing.T) {
		for i, key := range interopKeys {
			b := []byte(strings.Repeat(key, i+2))
			if _, err := theirs.PutObject(ctx, srv.Bucket, "theirs/"+key, bytes.NewReader(b), int64(len(b)), minio.PutObjectOptions{}); err != nil {
				t.Fatal(err)
			}
			if got := get(t, ours, "theirs/"+key); !bytes.Equal(got, b) {
				t.Fatalf("read %s: %q", key, got)
			}
			st, err := ours.Stat(ctx, "theirs/"+key)
			if err != nil || st.Size != int64(len(b)) || st.ModTime.IsZero() {
				t.Fatalf("stat %s: %+v %v", key, st, err)
			}
		}
		list, err := ours.List(ctx, "theirs/")
		if err != nil {
			t.Fatal(err)
		}
		want := []string{}
		for _, k := range interopKeys {
			want = append(want, "theirs/"+k)
		}
		if strings.Join(keys(list), "|") != strings.Join(want, "|") {
			t.Fatalf("we list %q", keys(list))
		}
		// A multipart object (three 5 MiB parts and a tail) reads as one.
		big := make([]byte, 15<<20+11)
		rand.Read(big)
		if _, err := theirs.PutObject(ctx, srv.Bucket, "theirs/multipart", bytes.NewReader(big), int64(len(big)),
			minio.PutObjectOptions{PartSize: 5 << 20}); err != nil {
			t.Fatal(err)
		}
		if got := get(t, ours, "theirs/multipart"); !bytes.Equal(got, big) {
			t.Fatal("the multipart object reads differently")
		}
		for _, k := range want {
			if err := ours.Delete(ctx, k); err != nil {
				t.Fatal(err)
			}
			if _, err := theirs.StatObject(ctx, srv.Bucket, k, minio.StatObjectOptions{}); minio.ToErrorResponse(err).Code != "NoSuchKey" {
				t.Fatalf("after our delete of %s, minio-go: %v", k, err)
			}
		}
	})
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
