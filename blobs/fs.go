package blobs

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// FS is the store of a single node: each key is a file under a folder (DATA/blobs by
// default, the layout interviewd has always used). Writes go to a temporary file beside
// the target, are synced, renamed into place and the folder synced, so a crash leaves
// the old blob or the new one, never a torn one.
type FS struct {
	dir string
}

// partPrefix names a blob still being written; List never shows one.
const partPrefix = ".part-"

// ScratchDir is the folder under an fs store's root for uploads on their way in (they
// are renamed into place from there): it is not part of the store, and List skips it.
const ScratchDir = "tmp"

// NewFS returns the store rooted at dir, creating the folder.
func NewFS(dir string) (*FS, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	return &FS{dir: dir}, nil
}

// Dir returns the store's root folder.
func (f *FS) Dir() string { return f.dir }

func (f *FS) String() string { return "fs:" + f.dir }

func (f *FS) path(key string) string { return filepath.Join(f.dir, filepath.FromSlash(key)) }

// Put writes r to a temporary file in key's folder and renames it into place.
func (f *FS) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	if err := checkKey(key); err != nil {
		return err
	}
	p := f.path(key)
	dir := filepath.Dir(p)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fsErr("put", key, err)
	}
	tmp, err := os.CreateTemp(dir, partPrefix+"*")
	if err != nil {
		return fsErr("put", key, err)
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	if size >= 0 {
		r = &sizedReader{r: r, left: size}
	}
	_, err = io.Copy(tmp, ctxReader{ctx, r})
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return &opError{op: "put", key: key, err: err}
	}
	return f.adopt(key, tmp.Name())
}

// adopt renames the finished file at src to key and syncs the folder that now names it.
func (f *FS) adopt(key, src string) error {
	p := f.path(key)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fsErr("put", key, err)
	}
	if err := os.Rename(src, p); err != nil {
		return fsErr("put", key, err)
	}
	if err := syncDir(filepath.Dir(p)); err != nil {
		return fsErr("put", key, err)
	}
	return nil
}

func (f *FS) Get(_ context.Context, key string) (io.ReadCloser, int64, error) {
	if err := checkKey(key); err != nil {
		return nil, 0, err
	}
	file, err := os.Open(f.path(key))
	if err != nil {
		return nil, 0, fsErr("get", key, err)
	}
	st, err := file.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fs.ErrNotExist
	}
	if err != nil {
		file.Close()
		return nil, 0, fsErr("get", key, err)
	}
	return file, st.Size(), nil
}

func (f *FS) Stat(_ context.Context, key string) (Info, error) {
	if err := checkKey(key); err != nil {
		return Info{}, err
	}
	st, err := os.Stat(f.path(key))
	if err == nil && !st.Mode().IsRegular() {
		err = fs.ErrNotExist
	}
	if err != nil {
		return Info{}, fsErr("stat", key, err)
	}
	return Info{Key: key, Size: st.Size(), ModTime: st.ModTime()}, nil
}

func (f *FS) Delete(_ context.Context, key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if err := os.Remove(f.path(key)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fsErr("delete", key, err)
	}
	return nil
}

// List walks the folder the prefix names (up to its last slash) and keeps the files
// whose key starts with prefix; blobs being written and the scratch folder are left out.
func (f *FS) List(ctx context.Context, prefix string) ([]Info, error) {
	base := ""
	if i := strings.LastIndex(prefix, "/"); i >= 0 {
		base = prefix[:i]
	}
	root := f.dir
	if base != "" {
		if err := checkKey(base); err != nil {
			return nil, err
		}
		root = f.path(base)
	}
	var out []Info
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // the folder, or a file deleted while walking
		}
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, err := filepath.Rel(f.dir, p)
		if err != nil {
			return err
		}
		key := filepath.ToSlash(rel)
		if d.IsDir() {
			if key == ScratchDir {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || strings.HasPrefix(d.Name(), partPrefix) || !strings.HasPrefix(key, prefix) {
			return nil
		}
		info, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		out = append(out, Info{Key: key, Size: info.Size(), ModTime: info.ModTime()})
		return nil
	})
	if err != nil {
		return nil, fsErr("list", prefix, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

func (f *FS) Presign(context.Context, string, time.Duration, string, string) (string, error) {
	return "", ErrNoPresign
}

// Ping checks that the root folder is still there and a folder.
func (f *FS) Ping(context.Context) error {
	st, err := os.Stat(f.dir)
	if err == nil && !st.IsDir() {
		err = syscall.ENOTDIR
	}
	if err != nil {
		return unavailable("ping", f.dir, err)
	}
	return nil
}

// fsErr keeps fs.ErrNotExist recognisable; other failures (a full disk, permissions) are
// the machine's, reported as they are.
func fsErr(op, key string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return notExist(op, key)
	}
	return &opError{op: op, key: key, err: err}
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// ctxReader stops a copy when ctx ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// errSizeMismatch is a stream whose length is not the size Put was given.
var errSizeMismatch = errors.New("stream length differs from the size given")

// sizedReader passes exactly left bytes of r and fails when r ends sooner or has more:
// the last byte is held back until r is known to end there, so a reader that stops at
// the promised length (as S3 uploads do) still sees the error.
type sizedReader struct {
	r    io.Reader
	left int64
	done bool
}

func (s *sizedReader) Read(p []byte) (int, error) {
	if s.done {
		return 0, io.EOF
	}
	if s.left == 0 {
		if err := s.end(); err != nil {
			return 0, err
		}
		return 0, io.EOF
	}
	if int64(len(p)) > s.left {
		p = p[:s.left]
	}
	n, err := s.r.Read(p)
	s.left -= int64(n)
	if s.left == 0 {
		if err := s.end(); err != nil {
			return n - 1, err
		}
		return n, nil
	}
	if errors.Is(err, io.EOF) {
		return n, errSizeMismatch
	}
	return n, err
}

// newSizedReader returns a sizedReader of r. When r can seek, so can the result: the S3
// client sends a body again after a dropped connection only if it can rewind it.
func newSizedReader(r io.Reader, size int64) io.Reader {
	z := &sizedReader{r: r, left: size}
	if sk, ok := r.(io.Seeker); ok {
		if start, err := sk.Seek(0, io.SeekCurrent); err == nil {
			return &sizedSeeker{sizedReader: z, s: sk, start: start, size: size}
		}
	}
	return z
}

// sizedSeeker is a sizedReader over a stream that can seek: seeking moves the stream
// and recounts what is left of size from where the stream started.
type sizedSeeker struct {
	*sizedReader
	s     io.Seeker
	start int64
	size  int64
}

func (z *sizedSeeker) Seek(offset int64, whence int) (int64, error) {
	pos, err := z.s.Seek(offset, whence)
	if err != nil {
		return pos, err
	}
	if pos < z.start || pos-z.start > z.size {
		return pos, errors.New("blobs: seek outside the sized stream")
	}
	z.left, z.done = z.size-(pos-z.start), false
	return pos, nil
}

// end checks that r has nothing past the promised length.
func (s *sizedReader) end() error {
	var one [1]byte
	for {
		m, err := s.r.Read(one[:])
		if m > 0 {
			return errSizeMismatch
		}
		if errors.Is(err, io.EOF) {
			s.done = true
			return nil
		}
		if err != nil {
			return err
		}
	}
}
