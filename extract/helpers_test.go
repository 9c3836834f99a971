package extract

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// generousDeadline is the deadline hostile inputs must beat: a minute, so a loaded
// machine under the race detector never fails it; a runaway extraction still does.
const generousDeadline = time.Minute

// mustWriteFile writes data to name in a fresh temporary folder and returns its path.
func mustWriteFile(tb testing.TB, name string, data []byte) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}

// mustExtract runs File on data saved as a file of extension ext, with lim.Timeout set
// beyond generousDeadline, and fails the test unless File returned before a context
// with generousDeadline ended. So ok=false here always means "refused", never "timed
// out".
func mustExtract(tb testing.TB, data []byte, ext string, lim Limits) (string, bool) {
	tb.Helper()
	path := mustWriteFile(tb, "upload"+ext, data)
	ctx, cancel := context.WithTimeout(context.Background(), generousDeadline)
	defer cancel()
	lim.Timeout = time.Hour
	text, ok, err := File(ctx, path, ext, lim)
	if err != nil {
		tb.Fatalf("File: %v", err)
	}
	if ctx.Err() != nil {
		tb.Fatalf("File did not finish within %v", generousDeadline)
	}
	return text, ok
}

// zipPart is one entry of a test archive. When raw is set it is written as the
// already-deflated content, with the declared size and CRC given.
type zipPart struct {
	name     string
	data     string
	raw      []byte
	declared uint64
	crc      uint32
}

// mustZip builds a zip archive of parts.
func mustZip(tb testing.TB, parts ...zipPart) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, p := range parts {
		if p.raw != nil {
			w, err := zw.CreateRaw(&zip.FileHeader{
				Name:               p.name,
				Method:             zip.Deflate,
				CompressedSize64:   uint64(len(p.raw)),
				UncompressedSize64: p.declared,
				CRC32:              p.crc,
			})
			if err != nil {
				tb.Fatal(err)
			}
			w.Write(p.raw)
			continue
		}
		// Empty entries are stored: a deflate writer each would make large test
		// archives slow to build.
		method := zip.Deflate
		if p.data == "" {
			method = zip.Store
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: p.name, Method: method})
		if err != nil {
			tb.Fatal(err)
		}
		w.Write([]byte(p.data))
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// bomb is deflate data that inflates to far more than its size.
type bomb struct {
	raw  []byte
	size int64 // inflated size
	crc  uint32
}

// mustBomb returns deflate data inflating to head, then unit repeated about
// chunks MiB worth, then tail, built without ever holding or compressing the
// inflated data: the compressed form of one chunk is repeated, which is valid because
// a chunk is a whole number of units, so every chunk sees the same window before it.
func mustBomb(tb testing.TB, head, unit string, chunks int, tail string) bomb {
	tb.Helper()
	chunk := strings.Repeat(unit, (1<<20)/len(unit))
	var buf bytes.Buffer
	w, err := flate.NewWriter(&buf, flate.BestCompression)
	if err != nil {
		tb.Fatal(err)
	}
	w.Write([]byte(head))
	w.Write([]byte(chunk))
	w.Flush()
	first := bytes.Clone(buf.Bytes())
	buf.Reset()
	w.Write([]byte(chunk))
	w.Flush()
	seg := bytes.Clone(buf.Bytes())
	buf.Reset()
	w.Write([]byte(tail))
	w.Close()
	last := buf.Bytes()

	b := bomb{raw: first, size: int64(len(head) + chunks*len(chunk) + len(tail))}
	for range chunks - 1 {
		b.raw = append(b.raw, seg...)
	}
	b.raw = append(b.raw, last...)
	b.crc = crc32.Update(0, crc32.IEEETable, []byte(head))
	for range chunks {
		b.crc = crc32.Update(b.crc, crc32.IEEETable, []byte(chunk))
	}
	b.crc = crc32.Update(b.crc, crc32.IEEETable, []byte(tail))
	return b
}
