package server

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"interviewd/kv"
	"interviewd/server/pipeline"
)

// benchEnv is a real server on a loopback socket with one key and one study.
type benchEnv struct {
	url    string
	secret string
	study  kv.Study
	client *http.Client
	db     *kv.DB
}

func mustBenchServe(b *testing.B) benchEnv {
	b.Helper()
	db := mustOpenDB(b)
	off := pipeline.RateLimits{Off: true} // measure the request path, not the limiter
	srv := New(Config{DB: db, Log: zerolog.Nop(), BaseURL: testBaseURL, AccessLog: true, RateLimits: &off})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	ctx := context.Background()
	org, _, err := db.CreateOrg(ctx, kv.OrgInput{Name: "Bench", Email: "bench@example.com"})
	if err != nil {
		b.Fatal(err)
	}
	_, secret, err := db.CreateKey(ctx, kv.KeyInput{OrgID: org.ID, Name: "bench", Environment: kv.EnvLive, Scopes: []string{"studies:read"}})
	if err != nil {
		b.Fatal(err)
	}
	title := "Bench"
	st, err := db.CreateStudy(ctx, kv.StudyInput{Partition: kv.Partition{Org: org.ID, Env: kv.EnvLive},
		Brief: kv.Brief{Title: &title, Objectives: []string{"Learn"}, VerbatimQuestions: []string{"Why?"}}})
	if err != nil {
		b.Fatal(err)
	}
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	b.Cleanup(tr.CloseIdleConnections)
	return benchEnv{url: "http://" + ln.Addr().String(), secret: secret, study: st, client: &http.Client{Transport: tr}, db: db}
}

// roundTrip sends one request and reads the answer; it fails the benchmark on any
// status but 200 and on a tool error result.
func (e benchEnv) roundTrip(b *testing.B, method, path string, body []byte, headers ...string) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, _ := http.NewRequest(method, e.url+path, rd)
	req.Header.Set("Authorization", "Bearer "+e.secret)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := e.client.Do(req)
	if err != nil {
		b.Error(err)
		return
	}
	raw, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != 200 || bytes.Contains(raw, []byte(`"isError":true`)) {
		b.Errorf("status %d: %.200s", resp.StatusCode, raw)
	}
}

// BenchmarkRESTGetStudy is the baseline BenchmarkMCPGetStudy is held to: GET
// /v1/api/studies/{id} over a loopback socket, as many in flight as GOMAXPROCS.
func BenchmarkRESTGetStudy(b *testing.B) {
	e := mustBenchServe(b)
	path := "/v1/api/studies/" + e.study.ID.String()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			e.roundTrip(b, "GET", path, nil)
		}
	})
}

// BenchmarkMCPGetStudy is tools/call get_study, one stateless JSON-RPC POST per call,
// in each protocol era (neither needs a handshake per call).
func BenchmarkMCPGetStudy(b *testing.B) {
	e := mustBenchServe(b)
	args := `"arguments":{"study_id":"` + e.study.ID.String() + `"}`
	for _, c := range []struct {
		era     string
		body    string
		headers []string
	}{
		{eraLegacy, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_study",` + args + `}}`,
			[]string{"Mcp-Protocol-Version", eraLegacy}},
		{eraModern, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_study",` + args + `,` + modernMeta + `}}`,
			[]string{"Mcp-Protocol-Version", eraModern, "Mcp-Method", "tools/call", "Mcp-Name", "get_study"}},
	} {
		b.Run(c.era, func(b *testing.B) {
			body := []byte(c.body)
			headers := append([]string{"Content-Type", "application/json", "Accept", acceptBoth}, c.headers...)
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					e.roundTrip(b, "POST", "/v1/mcp", body, headers...)
				}
			})
		})
	}
}
