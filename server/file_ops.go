package server

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/valyala/fasthttp"

	"interviewd/extract"
	"interviewd/kv"
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
	return kv.Invalid(kv.FieldError{Loc: []any{"body", "file"}, Type: "file_type",
		Msg: "File type not accepted; upload a .pdf, .docx, .xlsx, .csv, .pptx, .txt or .md file."})
}

func fileTooLarge(ext string) error {
	return &apiError{Status: 413, Code: "payload_too_large",
		Detail: fmt.Sprintf("Files of type %s may be at most %d MB.", ext, extract.MaxSize(ext)>>20)}
}

func cleanFilename(name string) (string, error) {
	name = filepath.Base(strings.ReplaceAll(name, "\\", "/"))
	if !utf8.ValidString(name) || name == "." || name == "/" || utf8.RuneCountInString(name) > maxFilenameChars {
		return "", kv.Invalid(kv.FieldError{Loc: []any{"body", "file"}, Type: "filename_invalid", Msg: "The filename must be valid UTF-8 of at most 255 characters."})
	}
	return name, nil
}

// bindUpload streams the multipart part "file" to a temporary blob, enforcing the
// type's size limit as bytes arrive: an oversized upload is cut off at limit+1 bytes
// and nothing of it is kept.
func (s *Server) bindUpload(c *fasthttp.RequestCtx) (any, error) {
	mediaType, params, err := mime.ParseMediaType(string(c.Request.Header.ContentType()))
	if err != nil || mediaType != "multipart/form-data" || params["boundary"] == "" {
		return nil, kv.Invalid(kv.FieldError{Loc: []any{"body"}, Type: "multipart_expected", Msg: "Send multipart/form-data with a part named file."})
	}
	var body io.Reader
	if c.Request.IsBodyStream() {
		body = c.RequestBodyStream()
	} else {
		body = bytes.NewReader(c.PostBody())
	}
	mr := multipart.NewReader(body, params["boundary"])
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return nil, kv.Invalid(kv.FieldError{Loc: []any{"body", "file"}, Type: "missing", Msg: "Field required: a part named file."})
		}
		if err != nil {
			return nil, kv.Invalid(kv.FieldError{Loc: []any{"body"}, Type: "multipart_invalid", Msg: "The multipart body could not be read."})
		}
		if part.FormName() != "file" {
			if _, err := io.Copy(io.Discard, io.LimitReader(part, 1<<16)); err != nil {
				return nil, err
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
		stored, err := s.writeTempBlob(part, ext)
		if err != nil {
			if ae, ok := err.(*apiError); ok && ae.Status == 413 {
				c.SetConnectionClose()
			}
			return nil, err
		}
		// Read the closing boundary (and any trailing parts, within reason) so the
		// connection is left at the start of the next request.
		if n, _ := io.Copy(io.Discard, io.LimitReader(body, 1<<16)); n == 1<<16 {
			c.SetConnectionClose()
		}
		return &UploadFileInput{Filename: name, stored: stored}, nil
	}
}

// writeTempBlob copies r to a temporary file in the blob folder, at most the type's
// limit; a larger stream is refused and its partial file removed.
func (s *Server) writeTempBlob(r io.Reader, ext string) (*storedUpload, error) {
	dir := filepath.Join(s.db.BlobDir(), "tmp")
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

func (s *Server) uploadFile(ctx context.Context, p *Principal, in *UploadFileInput) (FileHandle, error) {
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
			return FileHandle{}, kv.Invalid(kv.FieldError{Loc: []any{"body", "content_base64"}, Type: "base64_invalid",
				Msg: "Content is not valid base64 (standard alphabet, padded to a multiple of 4 characters)."})
		}
		if stored, err = s.writeTempBlob(bytes.NewReader(raw), ext); err != nil {
			return FileHandle{}, err
		}
	}
	id := kv.NewV4()
	rel := filepath.Join("files", id.String())
	final := filepath.Join(s.db.BlobDir(), rel)
	if err := os.MkdirAll(filepath.Dir(final), 0o700); err != nil {
		_ = os.Remove(stored.path)
		return FileHandle{}, err
	}
	if err := os.Rename(stored.path, final); err != nil {
		_ = os.Remove(stored.path)
		return FileHandle{}, err
	}
	text, ok, err := extract.File(ctx, final, stored.ext, extract.DefaultLimits())
	if err != nil {
		ok = false
	}
	f, err := s.db.CreateFile(ctx, p.Partition, kv.File{ID: id, Filename: in.Filename, ByteSize: stored.size, Extracted: ok, Text: text, Blob: rel})
	if err != nil {
		_ = os.Remove(final)
		return FileHandle{}, err
	}
	return FileHandle{FileID: f.ID, Filename: f.Filename, ByteSize: f.ByteSize, Extracted: f.Extracted}, nil
}
