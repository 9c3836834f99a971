package server

import (
	"fmt"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"
)

// BenchmarkParticipantTurn is one participant answer through the whole request path
// (in-process, no sockets): the session lookup, the conversation read, the built-in
// interviewer and the durable append. Interviews run to completion and new ones open,
// as in the bench's participants scenario.
func BenchmarkParticipantTurn(b *testing.B) {
	srv, _, studies := benchServer(b, 1)
	h := srv.Handler()
	token := studies[0].LinkToken
	var c fasthttp.RequestCtx
	post := func(path, session, body string) {
		c.Request.Reset()
		c.Response.Reset()
		c.Request.Header.SetMethod("POST")
		c.Request.SetRequestURI("/i/" + token + path)
		c.Request.Header.SetContentType("application/json")
		if session != "" {
			c.Request.Header.Set(headerSession, session)
		}
		c.Request.SetBodyString(body)
		h(&c)
		if c.Response.StatusCode() != 200 {
			b.Fatalf("POST %s: %d %s", path, c.Response.StatusCode(), c.Response.Body())
		}
	}
	var ans struct {
		Session *string `json:"session"`
		Status  string  `json:"status"`
	}
	session, turns := "", 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if session == "" {
			b.StopTimer()
			post("/session", "", "{}")
			if err := json.Unmarshal(c.Response.Body(), &ans); err != nil || ans.Session == nil {
				b.Fatalf("open: %v %s", err, c.Response.Body())
			}
			session = *ans.Session
			b.StartTimer()
		}
		turns++
		post("/messages", session, fmt.Sprintf(`{"text":"Answer %d: we keep the rota on paper and it changes every week."}`, turns))
		ans.Status = ""
		if err := json.Unmarshal(c.Response.Body(), &ans); err != nil {
			b.Fatal(err)
		}
		if ans.Status != "in_progress" {
			session = ""
		}
	}
}
