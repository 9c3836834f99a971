package server

import (
	"fmt"
	"interviewd/server/participant"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

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
		if postParticipant(h, &c, token, path, session, body) != 200 {
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

// BenchmarkParticipantTurnParallel is BenchmarkParticipantTurn with 100 participants per
// core answering at once, as in the bench's participants scenario: turns share group
// commits, so the figure that matters is cpu-ns/op, the process's CPU time (user and
// system) per turn, which does not depend on how busy the machine is.
func BenchmarkParticipantTurnParallel(b *testing.B) {
	srv, _, studies := benchServer(b, 4)
	h := srv.Handler()
	b.SetParallelism(100)
	b.ReportAllocs()
	b.ResetTimer()
	before := processCPU(b)
	b.RunParallel(func(pb *testing.PB) {
		var c fasthttp.RequestCtx
		token := studies[rand.IntN(len(studies))].LinkToken
		post := func(path, session, body string) bool {
			if postParticipant(h, &c, token, path, session, body) != 200 {
				b.Errorf("POST %s: %d %s", path, c.Response.StatusCode(), c.Response.Body())
				return false
			}
			return true
		}
		var ans struct {
			Session *string `json:"session"`
			Status  string  `json:"status"`
		}
		session, turns := "", 0
		for pb.Next() {
			if session == "" {
				if !post("/session", "", "{}") {
					return
				}
				if err := json.Unmarshal(c.Response.Body(), &ans); err != nil || ans.Session == nil {
					b.Errorf("open: %v %s", err, c.Response.Body())
					return
				}
				session = *ans.Session
			}
			turns++
			if !post("/messages", session, fmt.Sprintf(`{"text":"Answer %d: we keep the rota on paper and it changes every week."}`, turns)) {
				return
			}
			ans.Status = ""
			if err := json.Unmarshal(c.Response.Body(), &ans); err != nil {
				b.Error(err)
				return
			}
			if ans.Status != "in_progress" {
				session = ""
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(processCPU(b)-before)/float64(b.N), "cpu-ns/op")
}

// processCPU returns the CPU time (user and system) the process has used so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// postParticipant sends one participant API request (POST /i/TOKEN+path as session)
// through h on c and returns the answer's status.
func postParticipant(h fasthttp.RequestHandler, c *fasthttp.RequestCtx, token, path, session, body string) int {
	c.Request.Reset()
	c.Response.Reset()
	c.Request.Header.SetMethod("POST")
	c.Request.SetRequestURI("/i/" + token + path)
	c.Request.Header.SetContentType("application/json")
	if session != "" {
		c.Request.Header.Set(participant.HeaderSession, session)
	}
	c.Request.SetBodyString(body)
	h(c)
	return c.Response.StatusCode()
}
