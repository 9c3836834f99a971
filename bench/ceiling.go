package main

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/valyala/fasthttp"
)

// answer is one real response as the ceiling replays it.
type answer struct {
	status      int
	contentType []byte
	body        []byte
}

// capture sends the first n requests of a fresh worker of a scenario to t (n < 1 means
// 1) and keeps the last answer. It doubles as the scenario's smoke check: it returns an
// error for a transport failure or a non-2xx answer, before any load is spent on a
// broken scenario.
func capture(t *target, next requestFunc, n int) (answer, error) {
	hc := newClient(t.addr, t.tls)
	defer hc.CloseIdleConnections()
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	var last *fasthttp.Response
	for range max(n, 1) {
		next(req, last)
		if err := hc.Do(req, resp); err != nil {
			return answer{}, fmt.Errorf("%s %s: %w", req.Header.Method(), req.URI().RequestURI(), err)
		}
		if code := resp.StatusCode(); code < 200 || code > 299 {
			return answer{}, fmt.Errorf("%s %s answered %d: %.300s", req.Header.Method(), req.URI().RequestURI(), code, resp.Body())
		}
		last = resp
	}
	a := answer{
		status:      resp.StatusCode(),
		contentType: append([]byte(nil), resp.Header.ContentType()...),
		body:        append([]byte(nil), resp.Body()...),
	}
	next(req, last) // hand over the last answer; this request is never sent
	return a, nil
}

// startCeiling serves a on a new 127.0.0.1 port from a bare fasthttp server: no
// routing, no authentication, no store, no log. What the real server achieves against
// it is the share of this machine's raw HTTP throughput the real stack keeps. stop
// shuts it down and returns Serve's or Shutdown's error.
func startCeiling(a answer) (addr string, stop func() error, err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &fasthttp.Server{
		Name: "interviewd",
		Handler: func(c *fasthttp.RequestCtx) {
			c.SetStatusCode(a.status)
			c.SetContentTypeBytes(a.contentType)
			c.SetBody(a.body)
		},
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	stop = func() error {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		err := srv.ShutdownWithContext(ctx)
		return errors.Join(err, <-served)
	}
	return ln.Addr().String(), stop, nil
}
