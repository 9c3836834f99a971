package blobs_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"interviewd/blobs"
	"interviewd/blobs/blobstest"
)

// stores runs one conformance suite over every implementation: the fs store always,
// the S3 store against a real versitygw started here.
func forEachStore(t *testing.T, run func(t *testing.T, s blobs.Store)) {
	t.Run("fs", func(t *testing.T) {
		s, err := blobs.NewFS(filepath.Join(t.TempDir(), "blobs"))
		if err != nil {
			t.Fatal(err)
		}
		run(t, s)
	})
	t.Run("s3", func(t *testing.T) {
		run(t, newS3(t, blobstest.Start(t)))
	})
}

func newS3(t *testing.T, srv *blobstest.S3) blobs.Store {
	t.Helper()
	s, err := blobs.Open(context.Background(), srv.URL(), "", srv.Env)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func put(t *testing.T, s blobs.Store, key string, b []byte) {
	t.Helper()
	if err := s.Put(context.Background(), key, bytes.NewReader(b), int64(len(b))); err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
}

func get(t *testing.T, s blobs.Store, key string) []byte {
	t.Helper()
	r, size, err := s.Get(context.Background(), key)
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(b)) != size {
		t.Fatalf("get %s: size %d, read %d bytes", key, size, len(b))
	}
	return b
}

func keys(list []blobs.Info) []string {
	out := []string{}
	for _, b := range list {
		out = append(out, b.Key)
	}
	return out
}

func TestStoreConformance(t *testing.T) {
	forEachStore(t, func(t *testing.T, s blobs.Store) {
		ctx := context.Background()
		t.Run("PutGetStat", func(t *testing.T) {
			big := make([]byte, 3<<20+17) // several reads and buffers, not a round size
			rand.Read(big)
			put(t, s, "files/big", big)
			if got := get(t, s, "files/big"); !bytes.Equal(got, big) {
				t.Fatal("bytes differ")
			}
			st, err := s.Stat(ctx, "files/big")
			if err != nil || st.Key != "files/big" || st.Size != int64(len(big)) || st.ModTime.IsZero() {
				t.Fatalf("stat: %+v %v", st, err)
			}
			put(t, s, "files/empty", nil)
			if got := get(t, s, "files/empty"); len(got) != 0 {
				t.Fatalf("empty blob read %d bytes", len(got))
			}
		})
		t.Run("PutLarge", func(t *testing.T) {
			// Past one part (PartSize, 16 MiB: a 50 MB document upload is past it): in
			// parts on S3, and a stream that ends short of its promised size must still
			// store nothing.
			large := make([]byte, 17<<20+3)
			rand.Read(large)
			put(t, s, "files/large", large)
			if got := get(t, s, "files/large"); !bytes.Equal(got, large) {
				t.Fatal("bytes differ")
			}
			if err := s.Put(ctx, "files/large-short", bytes.NewReader(large[:17<<20]), int64(len(large))); err == nil {
				t.Fatal("a short large stream was stored")
			}
			if _, err := s.Stat(ctx, "files/large-short"); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("a failed large put left a blob: %v", err)
			}
		})
		t.Run("PutUnknownSize", func(t *testing.T) {
			if err := s.Put(ctx, "exports/stream.csv", strings.NewReader("a,b\n1,2\n"), -1); err != nil {
				t.Fatal(err)
			}
			if got := string(get(t, s, "exports/stream.csv")); got != "a,b\n1,2\n" {
				t.Fatalf("got %q", got)
			}
		})
		t.Run("PutReplaces", func(t *testing.T) {
			put(t, s, "plugins/p.wasm", []byte("first version"))
			put(t, s, "plugins/p.wasm", []byte("second"))
			if got := string(get(t, s, "plugins/p.wasm")); got != "second" {
				t.Fatalf("got %q", got)
			}
		})
		t.Run("ErrSizeMismatch", func(t *testing.T) {
			for name, size := range map[string]int64{"short": 10, "long": 3, "nonempty": 0} {
				err := s.Put(ctx, "files/"+name, strings.NewReader("12345"), size)
				if err == nil {
					t.Fatalf("%s: a stream of 5 bytes stored as %d", name, size)
				}
				if _, err := s.Stat(ctx, "files/"+name); !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("%s: a failed put left a blob: %v", name, err)
				}
			}
		})
		t.Run("ErrFailingReader", func(t *testing.T) {
			put(t, s, "files/kept", []byte("old"))
			boom := errors.New("disk on fire")
			err := s.Put(ctx, "files/kept", io.MultiReader(strings.NewReader("new bytes"), errReader{boom}), -1)
			if err == nil {
				t.Fatal("a failing reader stored a blob")
			}
			if got := string(get(t, s, "files/kept")); got != "old" {
				t.Fatalf("a failed put changed the blob to %q", got)
			}
		})
		t.Run("ErrNotExist", func(t *testing.T) {
			if _, _, err := s.Get(ctx, "files/missing"); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("get: %v", err)
			}
			if _, err := s.Stat(ctx, "files/missing"); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("stat: %v", err)
			}
			if err := s.Delete(ctx, "files/missing"); err != nil {
				t.Fatalf("delete of a missing key: %v", err)
			}
		})
		t.Run("ErrInvalidKey", func(t *testing.T) {
			for _, key := range []string{"", "/abs", "a/../b", "../up", "a//b", "dir/", "./a", "a\\b", "nul\x00"} {
				if err := s.Put(ctx, key, strings.NewReader("x"), 1); !errors.Is(err, blobs.ErrInvalidKey) {
					t.Errorf("put %q: %v", key, err)
				}
				if _, _, err := s.Get(ctx, key); !errors.Is(err, blobs.ErrInvalidKey) {
					t.Errorf("get %q: %v", key, err)
				}
				if err := s.Delete(ctx, key); !errors.Is(err, blobs.ErrInvalidKey) {
					t.Errorf("delete %q: %v", key, err)
				}
			}
		})
		t.Run("DeleteAndList", func(t *testing.T) {
			for _, k := range []string{"list/a", "list/b/c", "list/b/d", "listing", "other/x"} {
				put(t, s, k, []byte(k))
			}
			list, err := s.List(ctx, "list/")
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(keys(list), " "); got != "list/a list/b/c list/b/d" {
				t.Fatalf("list list/: %s", got)
			}
			for _, b := range list {
				if b.Size != int64(len(b.Key)) || b.ModTime.IsZero() {
					t.Fatalf("list entry %+v", b)
				}
			}
			list, _ = s.List(ctx, "list")
			if got := strings.Join(keys(list), " "); got != "list/a list/b/c list/b/d listing" {
				t.Fatalf("list list: %s", got)
			}
			if err := s.Delete(ctx, "list/b/c"); err != nil {
				t.Fatal(err)
			}
			list, _ = s.List(ctx, "list/b/")
			if got := strings.Join(keys(list), " "); got != "list/b/d" {
				t.Fatalf("after delete: %s", got)
			}
			if list, err := s.List(ctx, "nothing-here/"); err != nil || len(list) != 0 {
				t.Fatalf("empty prefix: %v %v", list, err)
			}
		})
		t.Run("ConcurrentPuts", func(t *testing.T) {
			// Writers of one key race; a reader always sees one whole version.
			var wg sync.WaitGroup
			versions := map[string]bool{}
			for i := range 8 {
				v := strings.Repeat(string(rune('a'+i)), 100<<10)
				versions[v] = true
				wg.Add(1)
				go func() {
					defer wg.Done()
					if err := s.Put(ctx, "race/key", strings.NewReader(v), int64(len(v))); err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			if got := string(get(t, s, "race/key")); !versions[got] {
				t.Fatalf("a torn blob of %d bytes", len(got))
			}
		})
		t.Run("Ping", func(t *testing.T) {
			if err := s.Ping(ctx); err != nil {
				t.Fatal(err)
			}
		})
	})
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// TestFSLayout pins the fs store to the folder layout interviewd has always used, so
// an existing data folder is read as it is: keys are paths under the root, and the
// scratch folder and unfinished writes are not blobs.
func TestFSLayout(t *testing.T) {
	dir := t.TempDir()
	s, err := blobs.NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	put(t, s, "exports/j.csv", []byte("x"))
	if b, err := os.ReadFile(filepath.Join(dir, "exports", "j.csv")); err != nil || string(b) != "x" {
		t.Fatalf("file: %q %v", b, err)
	}
	for _, p := range []string{"tmp/upload-1", "exports/.part-123"} {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o700)
		os.WriteFile(filepath.Join(dir, p), []byte("partial"), 0o600)
	}
	list, err := s.List(context.Background(), "")
	if err != nil || strings.Join(keys(list), " ") != "exports/j.csv" {
		t.Fatalf("list: %v %v", keys(list), err)
	}
	if _, err := s.Presign(context.Background(), "exports/j.csv", time.Minute, "j.csv", "text/csv"); !errors.Is(err, blobs.ErrNoPresign) {
		t.Fatalf("presign on fs: %v", err)
	}
	os.RemoveAll(dir)
	if err := s.Ping(context.Background()); !errors.Is(err, blobs.ErrUnavailable) {
		t.Fatalf("ping of a removed folder: %v", err)
	}
}

// TestMoveFile checks that a local file lands under its key and is gone afterwards, on
// either store.
func TestMoveFile(t *testing.T) {
	forEachStore(t, func(t *testing.T, s blobs.Store) {
		scratch := t.TempDir()
		if f, ok := s.(*blobs.FS); ok {
			scratch = filepath.Join(f.Dir(), blobs.ScratchDir) // where uploads wait
			os.MkdirAll(scratch, 0o700)
		}
		p := filepath.Join(scratch, "upload-1")
		if err := os.WriteFile(p, []byte("uploaded bytes"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := blobs.MoveFile(context.Background(), s, "files/u1", p); err != nil {
			t.Fatal(err)
		}
		if got := string(get(t, s, "files/u1")); got != "uploaded bytes" {
			t.Fatalf("got %q", got)
		}
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("the local file is still there: %v", err)
		}
	})
}

// TestS3Presign fetches a presigned URL with a plain HTTP client, no credential.
func TestS3Presign(t *testing.T) {
	srv := blobstest.Start(t)
	s := newS3(t, srv)
	put(t, s, "exports/j.csv", []byte("a,b\n"))
	u, err := s.Presign(context.Background(), "exports/j.csv", time.Minute, "interviews.csv", "text/csv; charset=utf-8")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "a,b\n" ||
		resp.Header.Get("Content-Type") != "text/csv; charset=utf-8" ||
		!strings.Contains(resp.Header.Get("Content-Disposition"), `filename=interviews.csv`) {
		t.Fatalf("presigned GET: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	// A changed signature is refused.
	resp, err = http.Get(strings.Replace(u, "X-Amz-Signature=", "X-Amz-Signature=0", 1))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("tampered URL: %d", resp.StatusCode)
	}
}

// TestS3Unavailable stops the server: every operation is ErrUnavailable, and the same
// store works again once the server is back.
func TestS3Unavailable(t *testing.T) {
	srv := blobstest.Start(t)
	s := newS3(t, srv)
	ctx := context.Background()
	put(t, s, "files/a", []byte("a"))
	srv.Stop()
	if err := s.Ping(ctx); !errors.Is(err, blobs.ErrUnavailable) {
		t.Fatalf("ping: %v", err)
	}
	if _, _, err := s.Get(ctx, "files/a"); !errors.Is(err, blobs.ErrUnavailable) {
		t.Fatalf("get: %v", err)
	}
	if err := s.Put(ctx, "files/b", strings.NewReader("b"), 1); !errors.Is(err, blobs.ErrUnavailable) {
		t.Fatalf("put: %v", err)
	}
	if err := s.Delete(ctx, "files/a"); !errors.Is(err, blobs.ErrUnavailable) {
		t.Fatalf("delete: %v", err)
	}
	if _, err := s.List(ctx, ""); !errors.Is(err, blobs.ErrUnavailable) {
		t.Fatalf("list: %v", err)
	}
	srv.Restart()
	if got := string(get(t, s, "files/a")); got != "a" {
		t.Fatalf("after restart: %q", got)
	}
}

// TestS3WrongCredential is a bucket refusing the credential: unavailable, not missing.
func TestS3WrongCredential(t *testing.T) {
	srv := blobstest.Start(t)
	env := func(name string) (string, bool) {
		if name == "AWS_SECRET_ACCESS_KEY" {
			return "not-the-secret", true
		}
		return srv.Env(name)
	}
	s, err := blobs.Open(context.Background(), srv.URL(), "", env)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Get(context.Background(), "files/a"); !errors.Is(err, blobs.ErrUnavailable) {
		t.Fatalf("get with a wrong secret: %v", err)
	}
	if err := s.Ping(context.Background()); !errors.Is(err, blobs.ErrUnavailable) {
		t.Fatalf("ping with a wrong secret: %v", err)
	}
}

// TestS3Prefix keeps two stores in one bucket apart by their prefixes.
func TestS3Prefix(t *testing.T) {
	srv := blobstest.Start(t)
	one, err := blobs.Open(context.Background(), strings.Replace(srv.URL(), "?", "/site-one?", 1), "", srv.Env)
	if err != nil {
		t.Fatal(err)
	}
	two := newS3(t, srv)
	put(t, one, "files/a", []byte("one"))
	if _, err := two.Stat(context.Background(), "files/a"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the unprefixed store sees the prefixed blob: %v", err)
	}
	list, err := one.List(context.Background(), "")
	if err != nil || strings.Join(keys(list), " ") != "files/a" {
		t.Fatalf("prefixed list: %v %v", keys(list), err)
	}
	list, _ = two.List(context.Background(), "")
	if strings.Join(keys(list), " ") != "site-one/files/a" {
		t.Fatalf("bucket list: %v", keys(list))
	}
}

// TestSweepScratch deletes stale scratch files and unfinished writes, and nothing else.
func TestSweepScratch(t *testing.T) {
	root := t.TempDir()
	s, _ := blobs.NewFS(root)
	put(t, s, "exports/kept.csv", []byte("x"))
	old := time.Now().Add(-2 * time.Hour)
	for _, p := range []string{"tmp/upload-1", "tmp/export-2", "exports/.part-3", "tmp/upload-fresh"} {
		os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o700)
		os.WriteFile(filepath.Join(root, p), []byte("partial"), 0o600)
		if !strings.HasSuffix(p, "fresh") {
			os.Chtimes(filepath.Join(root, p), old, old)
		}
	}
	os.Chtimes(filepath.Join(root, "exports", "kept.csv"), old, old)
	n, err := blobs.SweepScratch(root, time.Now().Add(-time.Hour))
	if err != nil || n != 3 {
		t.Fatalf("swept %d, %v", n, err)
	}
	left := []string{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			left = append(left, filepath.ToSlash(rel))
		}
		return nil
	})
	if strings.Join(left, " ") != "exports/kept.csv tmp/upload-fresh" {
		t.Fatalf("left %v", left)
	}
	if n, err := blobs.SweepScratch(filepath.Join(root, "missing"), time.Now()); n != 0 || err != nil {
		t.Fatalf("missing root: %d %v", n, err)
	}
}
