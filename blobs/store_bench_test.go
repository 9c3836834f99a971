package blobs_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"path/filepath"
	"testing"

	"interviewd/blobs"
	"interviewd/blobs/blobstest"
)

// BenchmarkStore puts and gets blobs of an upload's and an export's typical sizes on
// the fs store and on versitygw over loopback (the bucket's own disk work included).
func BenchmarkStore(b *testing.B) {
	stores := map[string]func(b *testing.B) blobs.Store{
		"fs": func(b *testing.B) blobs.Store {
			s, err := blobs.NewFS(filepath.Join(b.TempDir(), "blobs"))
			if err != nil {
				b.Fatal(err)
			}
			return s
		},
		"s3": func(b *testing.B) blobs.Store {
			srv := blobstest.Start(b)
			s, err := blobs.Open(context.Background(), srv.URL(), "", srv.Env)
			if err != nil {
				b.Fatal(err)
			}
			return s
		},
	}
	for _, name := range []string{"fs", "s3"} {
		for _, size := range []int{4 << 10, 1 << 20} {
			data := make([]byte, size)
			rand.Read(data)
			b.Run(fmt.Sprintf("%s/Put/%dKiB", name, size>>10), func(b *testing.B) {
				s := stores[name](b)
				ctx := context.Background()
				b.SetBytes(int64(size))
				for i := 0; b.Loop(); i++ {
					if err := s.Put(ctx, fmt.Sprintf("bench/%d", i%64), bytes.NewReader(data), int64(size)); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(fmt.Sprintf("%s/Get/%dKiB", name, size>>10), func(b *testing.B) {
				s := stores[name](b)
				ctx := context.Background()
				if err := s.Put(ctx, "bench/get", bytes.NewReader(data), int64(size)); err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(size))
				for b.Loop() {
					r, _, err := s.Get(ctx, "bench/get")
					if err != nil {
						b.Fatal(err)
					}
					if _, err := io.Copy(io.Discard, r); err != nil {
						b.Fatal(err)
					}
					r.Close()
				}
			})
		}
	}
}

// BenchmarkCopy copies 200 blobs of 64 KiB from a folder into versitygw, each read back
// and compared, as `interviewd migrate --blobs` does.
func BenchmarkCopy(b *testing.B) {
	srv := blobstest.Start(b)
	bucket, err := blobs.Open(context.Background(), srv.URL(), "", srv.Env)
	if err != nil {
		b.Fatal(err)
	}
	src, err := blobs.NewFS(filepath.Join(b.TempDir(), "blobs"))
	if err != nil {
		b.Fatal(err)
	}
	data := make([]byte, 64<<10)
	rand.Read(data)
	const files = 200
	for i := range files {
		if err := src.Put(context.Background(), fmt.Sprintf("files/%03d", i), bytes.NewReader(data), int64(len(data))); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(files * int64(len(data)))
	for b.Loop() {
		if n, err := blobs.Copy(context.Background(), bucket, src); err != nil || n != files {
			b.Fatalf("copied %d: %v", n, err)
		}
	}
	b.ReportMetric(float64(files*b.N)/b.Elapsed().Seconds(), "files/s")
}
