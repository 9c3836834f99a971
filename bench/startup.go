package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/valyala/fasthttp"
)

// startupDeadline bounds the wait for a freshly booted server's first answer.
const startupDeadline = 10 * time.Second

// measureStartup boots interviewd on a fresh folder holding only an organisation and a
// key, and returns the time from server.New and listen to the first 200 answer of
// GET /v1/api/me (connect, route, authenticate, encode: everything the first caller
// waits for). It returns an error if the instance cannot be made or no 200 comes in
// time.
func measureStartup(ctx context.Context) (d time.Duration, err error) {
	in, err := newInstance(ctx)
	if err != nil {
		return 0, err
	}
	defer func() { err = errors.Join(err, in.close()) }()
	start := time.Now()
	baseURL, stop, err := in.serve()
	if err != nil {
		return 0, err
	}
	defer func() { err = errors.Join(err, stop()) }()
	t := &target{baseURL: baseURL, addr: baseURL[len("http://"):], key: in.key}
	for {
		resp, err := apiGet(t, "/v1/api/me")
		if err == nil {
			status := resp.StatusCode()
			fasthttp.ReleaseResponse(resp)
			if status == fasthttp.StatusOK {
				return time.Since(start), nil
			}
			err = fmt.Errorf("GET /v1/api/me answered %d", status)
		}
		if ctx.Err() != nil || time.Since(start) > startupDeadline {
			return 0, fmt.Errorf("start-up: no successful answer within %s: %w", startupDeadline, errors.Join(err, ctx.Err()))
		}
	}
}
