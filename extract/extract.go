package extract

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

const (
	smallMaxSize = 10 * 1024 * 1024 // .txt .md .csv
	largeMaxSize = 50 * 1024 * 1024 // .pdf .docx .xlsx .pptx
)

// Allowed reports whether name's extension is an accepted upload type, and returns the
// lower-cased extension (".pdf", ".docx", ...). It returns ("", false) for any other
// name, including one without an extension.
func Allowed(name string) (ext string, ok bool) {
	ext = strings.ToLower(filepath.Ext(name))
	if MaxSize(ext) == 0 {
		return "", false
	}
	return ext, true
}

// MaxSize returns the upload size limit in bytes for an extension (with its dot, any
// case): 10 MiB for .txt .md .csv and 50 MiB for .pdf .docx .xlsx .pptx. It returns 0
// for an extension that is not accepted.
func MaxSize(ext string) int64 {
	switch strings.ToLower(ext) {
	case ".txt", ".md", ".csv":
		return smallMaxSize
	case ".pdf", ".docx", ".xlsx", ".pptx":
		return largeMaxSize
	}
	return 0
}

// Limits caps the work one extraction may do. A zero or negative field takes its
// value from DefaultLimits.
type Limits struct {
	// MaxEntries is the most entries an office archive may hold; more is refused.
	MaxEntries int
	// MaxDecompressed is the most bytes one extraction may inflate, over all archive
	// entries or PDF streams together; more is refused as a decompression bomb.
	MaxDecompressed int64
	// MaxText is the most bytes of text returned; extraction stops once it is full.
	MaxText int
	// Timeout bounds the wall time of one extraction.
	Timeout time.Duration
}

// DefaultLimits returns the limits used for uploads: 2000 archive entries, 200 MiB
// decompressed, 1 MiB of text and 5 seconds.
func DefaultLimits() Limits {
	return Limits{
		MaxEntries:      2000,
		MaxDecompressed: 200 * 1024 * 1024,
		MaxText:         1024 * 1024,
		Timeout:         5 * time.Second,
	}
}

// orDefault fills the unset fields of lim from DefaultLimits.
func (lim Limits) orDefault() Limits {
	d := DefaultLimits()
	if lim.MaxEntries <= 0 {
		lim.MaxEntries = d.MaxEntries
	}
	if lim.MaxDecompressed <= 0 {
		lim.MaxDecompressed = d.MaxDecompressed
	}
	if lim.MaxText <= 0 {
		lim.MaxText = d.MaxText
	}
	if lim.Timeout <= 0 {
		lim.Timeout = d.Timeout
	}
	return lim
}

// errRejected ends an extraction whose input is hostile or too costly: a bomb, too
// many entries, a deadline passed. Nothing read before it is kept.
var errRejected = errors.New("extract: input rejected")

// errFull ends an extraction early because MaxText bytes of text have been collected.
var errFull = errors.New("extract: text limit reached")

// File extracts text from the file at path of the given extension (".pdf", ...; any
// case). It never panics; ok is false when nothing could be read: an empty, binary,
// malformed, encrypted or hostile file, an unaccepted extension, or an extraction that
// did not finish within lim.Timeout or before ctx ended. err is non-nil only for an I/O
// failure opening the file.
func File(ctx context.Context, path, ext string, lim Limits) (text string, ok bool, err error) {
	ext = strings.ToLower(ext)
	if ext != "" && ext[0] != '.' {
		ext = "." + ext
	}
	run := extractor(ext)
	if run == nil {
		return "", false, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return "", false, err
	}
	// Closing the file also stops an abandoned extraction: its next read fails.
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return "", false, err
	}
	lim = lim.orDefault()
	text, ok = isolate(ctx, lim.Timeout, func(ctx context.Context) (string, bool) {
		return run(ctx, f, info.Size(), lim)
	})
	return text, ok, nil
}

// extractFunc reads the text of one file of a known type from r, size bytes long.
type extractFunc func(ctx context.Context, r readerAtReader, size int64, lim Limits) (string, bool)

// readerAtReader is what an *os.File offers the extractors: sequential reads for text
// files and random access for zip archives.
type readerAtReader interface {
	io.Reader
	io.ReaderAt
}

// extractor returns the extraction function for a lower-cased extension, or nil.
func extractor(ext string) extractFunc {
	switch ext {
	case ".txt", ".md", ".csv":
		return func(ctx context.Context, r readerAtReader, size int64, lim Limits) (string, bool) {
			return plainText(ctx, r, size, lim)
		}
	case ".docx", ".pptx", ".xlsx":
		return func(ctx context.Context, r readerAtReader, size int64, lim Limits) (string, bool) {
			return officeText(ctx, r, size, ext, lim)
		}
	case ".pdf":
		return func(ctx context.Context, r readerAtReader, size int64, lim Limits) (string, bool) {
			if size > largeMaxSize {
				return "", false
			}
			data := make([]byte, size)
			if _, err := io.ReadFull(r, data); err != nil {
				return "", false
			}
			return pdfText(ctx, data, lim)
		}
	}
	return nil
}

// isolate runs fn in its own goroutine with a deadline and returns its result, or
// ("", false) when fn panics or the deadline or ctx ends first. An abandoned fn keeps
// running until its own bounded work notices the cancelled context; its result is
// dropped into a buffered channel so it never blocks.
func isolate(ctx context.Context, timeout time.Duration, fn func(context.Context) (string, bool)) (string, bool) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type result struct {
		text string
		ok   bool
	}
	done := make(chan result, 1)
	go func() {
		var r result
		defer func() {
			if recover() != nil {
				r = result{}
			}
			done <- r
		}()
		r.text, r.ok = fn(ctx)
	}()
	select {
	case r := <-done:
		return r.text, r.ok
	case <-ctx.Done():
		return "", false
	}
}
