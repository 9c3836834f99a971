package pipeline

import (
	"bytes"
	"io"
	"strconv"

	"github.com/valyala/fasthttp"
)

// MaxJSONBody bounds every JSON request body.
const MaxJSONBody = 1 << 20

// bodyTooLarge answers a body over limit bytes, naming the limit of the endpoint that
// refused it (1 MiB for JSON, 64 KiB for app forms, 32 KiB and 16 KiB for OAuth).
func bodyTooLarge(limit int) *APIError {
	return &APIError{Status: 413, Code: "payload_too_large", Detail: "The request body is larger than " + limitSize(limit) + "."}
}

// limitSize writes a limit of n bytes in the largest binary unit that divides it.
func limitSize(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.Itoa(n>>20) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.Itoa(n>>10) + " KiB"
	}
	return strconv.Itoa(n) + " bytes"
}

// ErrMalformedBody answers a body that cannot be read to its end: broken chunked
// framing, or a connection that ends before Content-Length bytes. It is the client's
// mistake, never a 500, and the connection is closed after it (its framing is lost).
var ErrMalformedBody = &APIError{Status: 400, Code: "malformed_body",
	Detail: "The request body could not be read: its chunked encoding or Content-Length is broken."}

// BodyStream returns the request body as a reader whose read failures are
// errMalformedBody (the cause kept for errors.Is); c's connection is closed after one.
func BodyStream(c *fasthttp.RequestCtx) io.Reader {
	if !c.Request.IsBodyStream() {
		return bytes.NewReader(c.PostBody())
	}
	return &framedReader{r: c.RequestBodyStream(), c: c}
}

type framedReader struct {
	r io.Reader
	c *fasthttp.RequestCtx
}

func (f *framedReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err != nil && err != io.EOF {
		f.c.SetConnectionClose()
		err = &MalformedBody{err}
	}
	return n, err
}

// MalformedBody is a body read failure; it maps to errMalformedBody.
type MalformedBody struct{ cause error }

func (e *MalformedBody) Error() string { return "read request body: " + e.cause.Error() }
func (e *MalformedBody) Unwrap() error { return e.cause }

// ReadBody returns the request body, at most limit bytes. Bodies the server streams
// (larger than its in-memory threshold) are read through a limit, never whole.
func ReadBody(c *fasthttp.RequestCtx, limit int) ([]byte, error) {
	if !c.Request.IsBodyStream() {
		b := c.PostBody()
		if len(b) > limit {
			return nil, bodyTooLarge(limit)
		}
		return b, nil
	}
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.LimitReader(BodyStream(c), int64(limit)+1))
	if err != nil {
		return nil, ErrMalformedBody
	}
	if n > int64(limit) {
		c.SetConnectionClose() // the rest of the body is not worth reading
		return nil, bodyTooLarge(limit)
	}
	// Keep the bytes on the request so a later step (binding after the idempotency
	// fingerprint) reads the same body instead of an exhausted stream.
	c.Request.SetBody(buf.Bytes())
	return c.PostBody(), nil
}

func IsJSONNull(raw []byte) bool {
	return len(raw) == 4 && string(raw) == "null"
}
