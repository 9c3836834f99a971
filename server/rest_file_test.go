package server

import (
	"archive/zip"
	"bufio"
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"interviewd/kv"
	"interviewd/server/research"
)

// multipartBody builds a multipart body with one part "file" of the given content.
func multipartBody(t *testing.T, field, filename string, content []byte) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	part, err := w.CreateFormFile(field, filename)
	if err != nil {
		t.Fatal(err)
	}
	part.Write(content)
	w.Close()
	return w.FormDataContentType(), buf.Bytes()
}

func (e *testEnv) upload(key, field, filename string, content []byte) response {
	e.t.Helper()
	ct, body := multipartBody(e.t, field, filename, content)
	return e.do("POST", "/v1/api/files", key, string(body), "Content-Type", ct)
}

func TestUploadFixtures(t *testing.T) {
	e := mustServe(t)
	for _, name := range []string{"sample.txt", "sample.md", "sample.csv", "sample.docx", "sample.pptx", "sample.xlsx", "sample.pdf"} {
		t.Run("OK_"+name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("..", "extract", "testdata", name))
			if err != nil {
				t.Fatal(err)
			}
			r := e.upload("a_live", "file", strings.ToUpper(name[:1])+name[1:], raw)
			if r.status != 200 {
				t.Fatalf("%d %s", r.status, r.body)
			}
			var h research.FileHandle
			r.json(t, &h)
			if !h.Extracted || h.ByteSize != int64(len(raw)) || h.FileID.IsZero() {
				t.Fatalf("handle %+v", h)
			}
			files, err := e.db.FindFilesByID(t.Context(), kv.Partition{Org: e.orgA.ID, Env: kv.EnvLive}, []kv.ID{h.FileID})
			if err != nil || len(files[0].Text) == 0 {
				t.Fatalf("stored %+v %v", files, err)
			}
			blob, err := os.ReadFile(filepath.Join(e.db.BlobDir(), files[0].Blob))
			if err != nil || !bytes.Equal(blob, raw) {
				t.Fatal("blob bytes differ from the upload")
			}
			// A file is usable only by its own organisation and environment.
			if _, err := e.db.FindFilesByID(t.Context(), kv.Partition{Org: e.orgA.ID, Env: kv.EnvTest}, []kv.ID{h.FileID}); kv.ErrorCode(err) != kv.ENOTFOUND {
				t.Fatalf("file visible in the test environment: %v", err)
			}
		})
	}
}

func TestUploadRefusals(t *testing.T) {
	e := mustServe(t)
	var bomb bytes.Buffer
	zw := zip.NewWriter(&bomb)
	fw, _ := zw.Create("word/document.xml")
	zeros := make([]byte, 1<<20)
	for i := 0; i < 300; i++ { // 300 MB of zeros compress to a few hundred KB
		fw.Write(zeros)
	}
	zw.Close()
	cases := []struct {
		name, field, filename string
		content               []byte
		wantStatus            int
		want                  string
	}{
		{"ErrUnknownExtension", "file", "run.exe", []byte("MZ"), 422, `"type":"file_type"`},
		{"ErrNoExtension", "file", "README", []byte("hi"), 422, `"type":"file_type"`},
		{"ErrMissingPart", "document", "notes.txt", []byte("hi"), 422, `{"loc":["body","file"],"msg":"Field required: a part named file.","type":"missing"}`},
		{"OK_EmptyTextNotExtracted", "file", "empty.txt", nil, 200, `"extracted":false`},
		{"OK_BinaryTextNotExtracted", "file", "bin.txt", []byte{0, 1, 2, 3, 0, 0, 255}, 200, `"extracted":false`},
		{"OK_MalformedPDF", "file", "broken.pdf", []byte("%PDF-1.7\n1 0 obj << /Length 99999999 >> stream\n\x00\x01garbage"), 200, `"extracted":false`},
		{"OK_ZipBomb", "file", "bomb.docx", bomb.Bytes(), 200, `"extracted":false`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.upload("a_live", c.field, c.filename, c.content)
			if r.status != c.wantStatus || !strings.Contains(string(r.body), c.want) {
				t.Fatalf("%d %s", r.status, r.body)
			}
		})
	}
	t.Run("ErrNotMultipart", func(t *testing.T) {
		r := e.do("POST", "/v1/api/files", "a_live", `{"filename":"a.txt"}`)
		if r.status != 422 || !strings.Contains(string(r.body), "multipart_expected") {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
	t.Run("ErrScope", func(t *testing.T) {
		if r := e.upload("a_studies_only", "file", "a.txt", []byte("hello")); r.status != 403 {
			t.Fatalf("%d", r.status)
		}
	})
}

// rawUpload sends a multipart upload of size bytes of filler over a raw connection,
// tolerating the server closing the connection before the body is fully sent, and
// returns the status the server answered.
func rawUpload(t *testing.T, e *testEnv, filename string, size int64) int {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	boundary := "xBOUNDARYx"
	head := fmt.Sprintf("--%s\r\nContent-Disposition: form-data; name=\"file\"; filename=%q\r\nContent-Type: application/octet-stream\r\n\r\n", boundary, filename)
	tail := fmt.Sprintf("\r\n--%s--\r\n", boundary)
	total := int64(len(head)) + size + int64(len(tail))
	fmt.Fprintf(conn, "POST /v1/api/files HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: multipart/form-data; boundary=%s\r\nContent-Length: %d\r\n\r\n%s",
		e.keys["a_live"], boundary, total, head)
	go func() {
		chunk := bytes.Repeat([]byte("a"), 1<<16)
		for sent := int64(0); sent < size; {
			n := min(int64(len(chunk)), size-sent)
			if _, err := conn.Write(chunk[:n]); err != nil {
				return // the server answered and closed: expected for oversized bodies
			}
			sent += n
		}
		conn.Write([]byte(tail))
	}()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func TestUploadSizeBoundaries(t *testing.T) {
	if testing.Short() {
		t.Skip("uploads over 110 MB in total")
	}
	e := mustServe(t)
	const mb = 1 << 20
	cases := []struct {
		name     string
		filename string
		size     int64
		want     int
	}{
		{"OK_Text10MB", "big.txt", 10 * mb, 200},
		{"ErrText10MBPlus1", "big.md", 10*mb + 1, 413},
		{"OK_Other50MB", "big.pdf", 50 * mb, 200},
		{"ErrOther50MBPlus1", "big.xlsx", 50*mb + 1, 413},
		{"ErrOneGigabyte", "huge.pptx", 1 << 30, 413},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := rawUpload(t, e, c.filename, c.size); got != c.want {
				t.Fatalf("status %d, want %d", got, c.want)
			}
			left, _ := os.ReadDir(filepath.Join(e.db.BlobDir(), "tmp"))
			if len(left) != 0 {
				t.Fatalf("%d temporary files left behind", len(left))
			}
		})
	}
}

// TestUploadCapsEveryPart: parts other than file (and a preamble) share a 64 KiB budget
// and reading stops at the first byte past it, so a 1 GB part of another name ahead of
// the file costs the server next to nothing. The client streams the body and counts
// what it managed to send before the server answered and closed: the kernel's socket
// buffers hold a few MB at most, nowhere near the gigabyte.
func TestUploadCapsEveryPart(t *testing.T) {
	e := mustServe(t)
	const gigabyte = 1 << 30
	cases := []struct {
		name, head string
		want       int
	}{
		{"HugeFieldBeforeFile", "--B\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\n", 413},
		{"HugeFileOfAnotherName", "--B\r\nContent-Disposition: form-data; name=\"document\"; filename=\"a.txt\"\r\n\r\n", 413},
		{"HugePreamble", "", 422}, // one endless line: the multipart reader gives up on it
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", strings.TrimPrefix(e.url, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			fmt.Fprintf(conn, "POST /v1/api/files HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: multipart/form-data; boundary=B\r\nContent-Length: %d\r\n\r\n%s",
				e.keys["a_live"], int64(len(c.head))+gigabyte, c.head)
			sent := make(chan int64, 1)
			go func() {
				chunk := bytes.Repeat([]byte("a"), 1<<16)
				var n int64
				for n < gigabyte {
					w, err := conn.Write(chunk)
					n += int64(w)
					if err != nil {
						break
					}
				}
				sent <- n
			}()
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("read response: %v", err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			conn.Close() // ends the writer if the server has not already
			n := <-sent
			if resp.StatusCode != c.want {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			if n >= 64<<20 {
				t.Fatalf("the client sent %d MB before the server stopped reading", n>>20)
			}
			t.Logf("sent %d KB before the answer", n>>10)
		})
	}
	t.Run("OK_SmallFieldsAroundFile", func(t *testing.T) {
		var buf bytes.Buffer
		w := multipart.NewWriter(&buf)
		_ = w.WriteField("note", strings.Repeat("n", 30<<10))
		part, _ := w.CreateFormFile("file", "a.txt")
		part.Write([]byte("hello"))
		_ = w.WriteField("after", "x")
		w.Close()
		r := e.do("POST", "/v1/api/files", "a_live", buf.String(), "Content-Type", w.FormDataContentType())
		if r.status != 200 || !strings.Contains(string(r.body), `"byte_size":5`) {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
}
