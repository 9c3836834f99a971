package server

import (
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"interviewd/kv"
	"interviewd/server/pipeline"
)

// truncatedUploads are multipart bodies cut off before their closing boundary: a file
// part whose bytes never end, and a part with no headers and no end.
var truncatedUploads = []struct{ name, body string }{
	{"FilePartUnterminated", "--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n\r\nhi"},
	{"EmptyPartUnterminated", "--XyZ\r\n\r\n"},
	{"OtherPartUnterminated", "--XyZ\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nhello"},
}

// noErrorLines fails when the log holds a line at error level or above: a client's
// broken body is its own mistake, not the server's.
func noErrorLines(t *testing.T, logs *logBuffer) {
	t.Helper()
	for _, m := range logs.lines(t) {
		if lvl, _ := m["level"].(string); lvl == "error" || lvl == "fatal" || lvl == "panic" {
			t.Fatalf("a truncated upload logged at %s: %v", lvl, m)
		}
	}
}

// TestUploadTruncatedMultipart: a multipart body that ends before its closing boundary
// is the client's mistake on both upload surfaces: REST answers the contract's 422
// validation error, the app its form with the reason beside the file field, and
// neither logs at error level.
func TestUploadTruncatedMultipart(t *testing.T) {
	logs := &logBuffer{}
	e := mustServe(t, withLog(logs, zerolog.DebugLevel))
	owner := e.mustAppClient(t, "a@example.com", e.orgA.ID, kv.EnvLive, "")
	const ct = "multipart/form-data; boundary=XyZ"
	for _, c := range truncatedUploads {
		t.Run("REST_"+c.name, func(t *testing.T) {
			r := e.do("POST", "/v1/api/files", "a_live", c.body, "Content-Type", ct)
			if r.status != 422 {
				t.Fatalf("%d %s", r.status, r.body)
			}
			var got pipeline.ValidationBody
			r.json(t, &got)
			if len(got.Detail) != 1 || got.Detail[0].Type != "multipart_invalid" || got.Detail[0].Msg == "" {
				t.Fatalf("body %s", r.body)
			}
			noErrorLines(t, logs)
		})
		t.Run("App_"+c.name, func(t *testing.T) {
			r := owner.send(t, "POST", "/app/studies/files", ct, strings.NewReader(c.body), "X-CSRF-Token", owner.csrf)
			wantPage(t, r, 422, `id="file-err"`, "could not be read")
			noErrorLines(t, logs)
		})
	}
}
