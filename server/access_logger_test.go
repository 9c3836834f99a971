package server

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/fasthttp/router"
	"github.com/rs/zerolog"
	"github.com/valyala/fasthttp"

	"interviewd/kv"
	"interviewd/server/pipeline"
)

// TestAccessLoggerTakesRoutineLines: with Config.AccessLogger set, answered and
// refused requests are logged there (where `serve` batches them), while a server
// failure goes to the main log, which is written at once.
func TestAccessLoggerTakesRoutineLines(t *testing.T) {
	access := &syncLog{}
	url, logs := mustServeRoutesWith(t, func(c *Config) {
		l := zerolog.New(access)
		c.AccessLogger = &l
	}, func(s *Server, r *router.Router) {
		g := s.Group(r, "/t", testSurface())
		g.GET("/{id}", func(r *pipeline.Request) error {
			if r.PathParam("id") == "panic" {
				panic("the handler broke")
			}
			r.Out = "hello"
			return nil
		})
	})
	for _, tc := range []struct {
		path, who string
		status    int
	}{{"/t/ok", "ann", 200}, {"/t/ok", "", 401}, {"/t/panic", "ann", 500}} {
		req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		req.SetRequestURI(url + tc.path)
		if tc.who != "" {
			req.Header.Set("X-Who", tc.who)
		}
		if err := fasthttp.Do(req, resp); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode() != tc.status {
			t.Fatalf("%s answered %d, want %d", tc.path, resp.StatusCode(), tc.status)
		}
		fasthttp.ReleaseRequest(req)
		fasthttp.ReleaseResponse(resp)
	}
	statuses := func(l *syncLog) map[float64]bool {
		seen := map[float64]bool{}
		for _, line := range l.requestLines(t) { // written before the answer is sent
			seen[line["status"].(float64)] = true
			// Every request (several on one kept-alive connection) names its client.
			if line["client_ip"] != "127.0.0.1" {
				t.Errorf("client_ip %v in %v", line["client_ip"], line)
			}
		}
		return seen
	}
	if got := statuses(access); !got[200] || !got[401] || got[500] {
		t.Errorf("the access logger should hold the 200 and the 401 only: %v\n%s", got, access.text())
	}
	if got := statuses(logs); got[200] || got[401] || !got[500] {
		t.Errorf("the main log should hold the 500 only: %v\n%s", got, logs.text())
	}
}

// TestAccessLineClientPerRequest runs the real server (its tracked connections): on
// one kept-alive connection each request is logged with its client, the peer's address
// (formatted once per connection) or, behind a trusted proxy, each request's own
// forwarded client.
func TestAccessLineClientPerRequest(t *testing.T) {
	for _, tc := range []struct {
		name    string
		proxies string
		want    []string
	}{
		{"Peer", "", []string{"127.0.0.1", "127.0.0.1"}},
		{"BehindProxy", "127.0.0.1", []string{"203.0.113.7", "198.51.100.9"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs := &syncLog{}
			e := mustServe(t, func(c *Config, _ *kv.Options) {
				c.Log = zerolog.New(logs)
				if tc.proxies != "" {
					p, err := pipeline.ParseTrustedProxies(tc.proxies)
					if err != nil {
						t.Fatal(err)
					}
					c.TrustedProxies = p
				}
			})
			hc := &fasthttp.HostClient{Addr: strings.TrimPrefix(e.url, "http://"), MaxConns: 1} // one connection for both
			defer hc.CloseIdleConnections()
			for _, client := range []string{"203.0.113.7", "198.51.100.9"} {
				req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
				req.SetRequestURI(e.url + "/v1/api/me")
				req.Header.Set("Authorization", "Bearer "+e.keys["a_live"])
				req.Header.Set("X-Forwarded-For", client)
				if err := hc.Do(req, resp); err != nil || resp.StatusCode() != 200 {
					t.Fatalf("answered %d: %v", resp.StatusCode(), err)
				}
				fasthttp.ReleaseRequest(req)
				fasthttp.ReleaseResponse(resp)
			}
			var got []string
			for _, line := range logs.requestLines(t) {
				if line["route"] == "/v1/api/me" {
					got = append(got, fmt.Sprint(line["client_ip"]))
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("client_ip per request: %v, want %v", got, tc.want)
			}
		})
	}
}
