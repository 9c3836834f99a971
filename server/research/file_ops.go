package research

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/valyala/fasthttp"

	"interviewd/blobs"
	"interviewd/extract"
	"interviewd/kv"
	"interviewd/server/pipeline"
)

// UploadFileInput is an upload. Over REST the file arrives as multipart part "file" and
// streams to disk; over MCP it arrives base64-encoded in content_base64.
type UploadFileInput struct {
	Filename      string `json:"filename" required:"true" doc:"Original filename; its extension picks the type (.pdf .docx .xlsx .csv .pptx .txt .md)."`
	ContentBase64 string `json:"content_base64" required:"true" doc:"The file's bytes, base64-encoded."`
	stored        *storedUpload
}

// storedUpload is a file already written to a temporary blob by the REST binder.
type storedUpload struct {
	path string
	size int64
	ext  string
}

// FileHandle is an uploaded file's handle.
type FileHandle struct {
	FileID    kv.ID  `json:"file_id"`
	Filename  string `json:"filename"`
	ByteSize  int64  `json:"byte_size"`
	Extracted bool   `json:"extracted"`
}

const maxFilenameChars = 255

func fileTypeError() error {
	return kv.Invalid(kv.FieldError{Loc: []any{"file"}, Type: "file_type",
		Msg: "File type not accepted; upload a .pdf, .docx, .xlsx, .csv, .pptx, .txt or .md file."})
}

func fileTooLarge(ext string) error {
	return &pipeline.APIError{Status: 413, Code: "payload_too_large",
		Detail: fmt.Sprintf("Files of type %s may be at most %d MB.", ext, extract.MaxSize(ext)>>20)}
}

func cleanFilename(name string) (string, error) {
	name = filepath.Base(strings.ReplaceAll(name, "\\", "/"))
	if pipeline.CheckText(name, nil) != nil || name == "." || name == "/" || utf8.RuneCountInString(name) > maxFilenameChars {
		return "", kv.Invalid(kv.FieldError{Loc: []any{"file"}, Type: "filename_invalid", Msg: "The filename must be valid UTF-8 without NUL, at most 255 characters."})
	}
	return name, nil
}

// MaxFormOverhead bounds everything of an upload body but the file's bytes: the
// preamble, boundaries, part headers, other parts and what follows the file. Each byte
// of it counts against one budget, so no part (and no preamble) is read past it.
const MaxFormOverhead = 64 << 10

var errFormOverhead = &pipeline.APIError{Status: 413, Code: "payload_too_large",
	Detail: "Everything of an upload but the file part (other parts, part headers, preamble) may be at most 64 KiB."}

// budgetReader reads at most left bytes from r, then fails with errFormOverhead.
type budgetReader struct {
	r    io.Reader
	left int64
}

func (b *budgetReader) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, errFormOverhead
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

// errMultipartInvalid is a body that is not a well-formed multipart form: a part cut
// off before its closing boundary, a missing boundary line. The client sent it.
func errMultipartInvalid() error {
	return kv.Invalid(kv.FieldError{Loc: []any{}, Type: "multipart_invalid", Msg: "The multipart body could not be read: it ends before its closing boundary or is not well-formed."})
}

// partReader marks a multipart part's read failures that are the form's own (a part
// that ends before its boundary) as multipartSyntax, so they are told apart from the
// socket's (malformedBody), the budget's (errFormOverhead) and the disk's (a write).
type partReader struct{ r io.Reader }

func (p partReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if err != nil && err != io.EOF && !errors.Is(err, errFormOverhead) && !errors.As(err, new(*pipeline.MalformedBody)) {
		err = &multipartSyntax{err}
	}
	return n, err
}

// multipartSyntax is a read failure of the multipart framing itself.
type multipartSyntax struct{ cause error }

func (e *multipartSyntax) Error() string { return "multipart: " + e.cause.Error() }
func (e *multipartSyntax) Unwrap() error { return e.cause }

// BindUpload streams the multipart part "file" to a temporary blob, enforcing the
// type's size limit as bytes arrive: an oversized upload is cut off at limit+1 bytes
// and nothing of it is kept. Everything else in the body shares maxFormOverhead, and
// reading stops at the first violation, so a huge part of another name, or a huge
// preamble, costs at most that much.
func (s *Service) BindUpload(c *fasthttp.RequestCtx) (_ any, err error) {
	defer func() {
		if err != nil { // the body is left unread: the connection cannot carry another request
			c.SetConnectionClose()
		}
	}()
	mediaType, params, err := mime.ParseMediaType(string(c.Request.Header.ContentType()))
	if err != nil || mediaType != "multipart/form-data" || params["boundary"] == "" {
		return nil, kv.Invalid(kv.FieldError{Loc: []any{}, Type: "multipart_expected", Msg: "Send multipart/form-data with a part named file."})
	}
	body := &budgetReader{r: pipeline.BodyStream(c), left: MaxFormOverhead}
	fail := func(err error) (any, error) {
		var mb *pipeline.MalformedBody
		switch {
		case errors.Is(err, errFormOverhead):
			c.SetConnectionClose() // the rest of the body is not worth reading
			return nil, errFormOverhead
		case errors.As(err, &mb):
			return nil, pipeline.ErrMalformedBody
		case errors.As(err, new(*multipartSyntax)):
			return nil, errMultipartInvalid()
		}
		return nil, err
	}
	mr := multipart.NewReader(body, params["boundary"])
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return nil, kv.Invalid(kv.FieldError{Loc: []any{"file"}, Type: "missing", Msg: "Field required: a part named file."})
		}
		if err != nil {
			if errors.Is(err, errFormOverhead) || errors.As(err, new(*pipeline.MalformedBody)) {
				return fail(err)
			}
			return nil, errMultipartInvalid()
		}
		if part.FormName() != "file" {
			if _, err := io.Copy(io.Discard, partReader{part}); err != nil {
				return fail(err)
			}
			continue
		}
		name, err := cleanFilename(part.FileName())
		if err != nil {
			return nil, err
		}
		ext, ok := extract.Allowed(name)
		if !ok {
			return nil, fileTypeError()
		}
		body.left += extract.MaxSize(ext) + 1 // the file's own limit is checked as it is written
		stored, err := s.writeTempBlob(partReader{part}, ext)
		if err != nil {
			if ae, ok := err.(*pipeline.APIError); ok && ae.Status == 413 {
				c.SetConnectionClose()
			}
			return fail(err)
		}
		// Read the closing boundary (and any trailing parts, within the budget) so the
		// connection is left at the start of the next request.
		body.left = min(body.left, MaxFormOverhead)
		if _, err := io.Copy(io.Discard, body); err != nil {
			_ = os.Remove(stored.path)
			return fail(err)
		}
		return &UploadFileInput{Filename: name, stored: stored}, nil
	}
}

// writeTempBlob copies r to a temporary file in the scratch folder (DATA/blobs/tmp), at
// most the type's limit; a larger stream is refused and its partial file removed.
func (s *Service) writeTempBlob(r io.Reader, ext string) (*storedUpload, error) {
	dir := filepath.Join(s.DB.BlobDir(), blobs.ScratchDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(dir, "upload-*")
	if err != nil {
		return nil, err
	}
	limit := extract.MaxSize(ext)
	n, err := io.Copy(f, io.LimitReader(r, limit+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > limit {
		err = fileTooLarge(ext)
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return nil, err
	}
	return &storedUpload{path: f.Name(), size: n, ext: ext}, nil
}

func (s *Service) uploadFile(ctx context.Context, p *pipeline.Principal, in *UploadFileInput) (FileHandle, error) {
	stored := in.stored
	if stored == nil { // MCP: the bytes came base64-encoded
		name, err := cleanFilename(in.Filename)
		if err != nil {
			return FileHandle{}, err
		}
		in.Filename = name
		ext, ok := extract.Allowed(name)
		if !ok {
			return FileHandle{}, fileTypeError()
		}
		// Decoded whole, before anything touches the disk: a truncated quantum
		// ("aGVsbG8") is io.ErrUnexpectedEOF from a streaming decoder, not a
		// CorruptInputError, and any refusal of the argument is the caller's mistake.
		// The MCP body is capped at 1 MiB, so this holds at most that much.
		raw, err := base64.StdEncoding.DecodeString(in.ContentBase64)
		if err != nil {
			return FileHandle{}, kv.Invalid(kv.FieldError{Loc: []any{"content_base64"}, Type: "base64_invalid",
				Msg: "Content is not valid base64 (standard alphabet, padded to a multiple of 4 characters)."})
		}
		if stored, err = s.writeTempBlob(bytes.NewReader(raw), ext); err != nil {
			return FileHandle{}, err
		}
	}
	id := kv.NewV4()
	key := "files/" + id.String()
	// Text is taken from the local copy, before it goes to the store (which may be a
	// bucket on another machine).
	text, ok, err := extract.File(ctx, stored.path, stored.ext, extract.DefaultLimits())
	if err != nil {
		ok = false
	}
	if err := blobs.MoveFile(ctx, s.DB.Blobs(), key, stored.path); err != nil {
		_ = os.Remove(stored.path)
		return FileHandle{}, err
	}
	f, err := s.DB.CreateFile(ctx, p.Partition, kv.File{ID: id, Filename: in.Filename, ByteSize: stored.size, Extracted: ok, Text: text, Blob: key})
	if err != nil {
		_ = s.DB.Blobs().Delete(context.WithoutCancel(ctx), key)
		return FileHandle{}, err
	}
	return FileHandle{FileID: f.ID, Filename: f.Filename, ByteSize: f.ByteSize, Extracted: f.Extracted}, nil
}
