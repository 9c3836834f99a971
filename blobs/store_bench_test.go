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
