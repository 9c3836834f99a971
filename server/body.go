package server

import (
	"bytes"
	"io"

	"github.com/valyala/fasthttp"
)

// maxJSONBody bounds every JSON request body.
const maxJSONBody = 1 << 20

var errBodyTooLarge = &apiError{Status: 413, Code: "payload_too_large", Detail: "The request body is larger than 1 MiB."}

// readBody returns the request body, at most limit bytes. Bodies the server streams
// (larger than its in-memory threshold) are read through a limit, never whole.
func readBody(c *fasthttp.RequestCtx, limit int) ([]byte, error) {
	if !c.Request.IsBodyStream() {
		b := c.PostBody()
		if len(b) > limit {
			return nil, errBodyTooLarge
		}
		return b, nil
	}
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.LimitReader(c.RequestBodyStream(), int64(limit)+1))
	if err != nil {
		return nil, err
	}
	if n > int64(limit) {
		c.SetConnectionClose() // the rest of the body is not worth reading
		return nil, errBodyTooLarge
	}
	// Keep the bytes on the request so a later step (binding after the idempotency
	// fingerprint) reads the same body instead of an exhausted stream.
	c.Request.SetBody(buf.Bytes())
	return c.PostBody(), nil
}
