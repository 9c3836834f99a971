package server

import (
	"context"
	"fmt"
	"testing"

	"github.com/rs/zerolog"
	"github.com/valyala/fasthttp"

	"interviewd/kv"
)

// benchServer is a server with seeded studies, driven in-process (no sockets) so the
// benchmark measures the request path itself.
func benchServer(b *testing.B, studies int) (*Server, string, []kv.Study) {
	b.Helper()
	db := mustOpenDB(b)
	off := RateLimits{Off: true}
	srv := New(Config{DB: db, Log: zerolog.Nop(), BaseURL: testBaseURL, AccessLog: true, RateLimits: &off})
	ctx := context.Background()
	org, _, err := db.CreateOrg(ctx, kv.OrgInput{Name: "Bench", Email: "b@example.com"})
	if err != nil {
		b.Fatal(err)
	}
	_, secret, err := db.CreateKey(ctx, kv.KeyInput{OrgID: org.ID, Name: "k", Environment: kv.EnvLive, Scopes: []string{"studies:read"}})
	if err != nil {
		b.Fatal(err)
	}
	var out []kv.Study
	for i := 0; i < studies; i++ {
		title := fmt.Sprint("Study ", i)
		st, err := db.CreateStudy(ctx, kv.StudyInput{Partition: kv.Partition{Org: org.ID, Env: kv.EnvLive}, Brief: kv.Brief{
			Title: &title, Objectives: []string{"Understand onboarding", "Find friction", "Size the problem"},
			PreInterviewQuestions: []string{"What is your role?", "How long have you used it?"},
			VerbatimQuestions:     []string{"Walk me through the first day.", "What almost made you stop?", "What would you change?", "Who else is involved?", "What did you expect?", "Anything else?"},
		}})
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, st)
	}
	return srv, secret, out
}

func benchRequest(b *testing.B, h fasthttp.RequestHandler, key, uri string) {
	var c fasthttp.RequestCtx
	c.Request.Header.SetMethod("GET")
	c.Request.SetRequestURI(uri)
	c.Request.Header.Set("Authorization", "Bearer "+key)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.Response.Reset()
		h(&c)
		if c.Response.StatusCode() != 200 {
			b.Fatalf("status %d %s", c.Response.StatusCode(), c.Response.Body())
		}
	}
}

func BenchmarkGetStudy(b *testing.B) {
	srv, key, studies := benchServer(b, 10)
	benchRequest(b, srv.Handler(), key, "/v1/api/studies/"+studies[3].ID.String())
}

func BenchmarkListStudies50(b *testing.B) {
	srv, key, _ := benchServer(b, 120)
	benchRequest(b, srv.Handler(), key, "/v1/api/studies?limit=50")
}
