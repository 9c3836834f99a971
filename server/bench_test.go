package server

import (
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"runtime"
	"testing"

	"github.com/rs/zerolog"
	"github.com/valyala/fasthttp"

	"interviewd/kv"
	"interviewd/server/pipeline"
)

// benchServer is a server with seeded studies, driven in-process (no sockets) so the
// benchmark measures the request path itself.
func benchServer(b *testing.B, studies int) (*Server, string, []kv.Study) {
	b.Helper()
	db := mustOpenDB(b)
	off := pipeline.RateLimits{Off: true}
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

// BenchmarkUpload10MBText uploads a 10 MB text file over a real socket with a streamed
// multipart body and reports the bytes the process allocated per byte uploaded (the
// upper bound of memory growth; the goal is under 3).
func BenchmarkUpload10MBText(b *testing.B) {
	db := mustOpenDB(b)
	off := pipeline.RateLimits{Off: true}
	srv := New(Config{DB: db, Log: zerolog.Nop(), BaseURL: testBaseURL, RateLimits: &off})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Shutdown(context.Background())
	ctx := context.Background()
	org, _, _ := db.CreateOrg(ctx, kv.OrgInput{Name: "Up", Email: "u@example.com"})
	_, key, _ := db.CreateKey(ctx, kv.KeyInput{OrgID: org.ID, Name: "k", Environment: kv.EnvLive, Scopes: []string{"studies:write"}})
	const size = 10 << 20
	line := []byte("Participants described the onboarding as slow and confusing at step three.\n")
	b.SetBytes(size)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pr, pw := io.Pipe()
		mw := multipart.NewWriter(pw)
		go func() {
			part, _ := mw.CreateFormFile("file", "notes.txt")
			for written := 0; written < size; {
				n := min(len(line), size-written)
				part.Write(line[:n])
				written += n
			}
			mw.Close()
			pw.Close()
		}()
		req, _ := http.NewRequest("POST", "http://"+ln.Addr().String()+"/v1/api/files", pr)
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/size, "alloc-bytes/file-byte")
}

// BenchmarkGetStudyConcurrent is BenchmarkGetStudy with 32 requests in flight, as a
// loaded node serves them (on PostgreSQL, reads arriving together share a statement).
func BenchmarkGetStudyConcurrent(b *testing.B) {
	srv, key, studies := benchServer(b, 10)
	h := srv.Handler()
	uri := "/v1/api/studies/" + studies[3].ID.String()
	b.ReportAllocs()
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var c fasthttp.RequestCtx
		c.Request.Header.SetMethod("GET")
		c.Request.SetRequestURI(uri)
		c.Request.Header.Set("Authorization", "Bearer "+key)
		for pb.Next() {
			c.Response.Reset()
			h(&c)
			if c.Response.StatusCode() != 200 {
				b.Errorf("status %d %s", c.Response.StatusCode(), c.Response.Body())
				return
			}
		}
	})
}
