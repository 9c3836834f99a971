package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"time"

	"github.com/valyala/fasthttp"
)

// requestTimeout bounds every request the bench sends, so a stalled server ends a run
// with errors rather than hanging it.
const requestTimeout = 10 * time.Second

// newClient returns a client holding at most one connection to addr. Retries are off:
// a failed request is counted, never silently repeated.
func newClient(addr string, tls bool) *fasthttp.HostClient {
	return &fasthttp.HostClient{
		Addr:                      addr,
		IsTLS:                     tls,
		MaxConns:                  1,
		MaxIdemponentCallAttempts: 1,
		ReadTimeout:               requestTimeout,
		WriteTimeout:              requestTimeout,
		Name:                      "interviewd-bench",
	}
}

// apiGet sends one authenticated GET for path to t and returns the response, which
// the caller releases. It returns an error for a transport failure.
func apiGet(t *target, path string) (*fasthttp.Response, error) {
	hc := newClient(t.addr, t.tls)
	defer hc.CloseIdleConnections()
	req := fasthttp.AcquireRequest()
	defer fasthttp.ReleaseRequest(req)
	req.SetRequestURI(t.baseURL + path)
	req.Header.Set(fasthttp.HeaderAuthorization, "Bearer "+t.key)
	resp := fasthttp.AcquireResponse()
	if err := hc.Do(req, resp); err != nil {
		fasthttp.ReleaseResponse(resp)
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	return resp, nil
}

// listStudyIDs pages through GET /v1/api/studies until it holds want ids or the list
// ends. It returns an error for a transport failure, a non-200 answer or a body that is
// not a list of studies.
func listStudyIDs(ctx context.Context, t *target, want int) ([]string, error) {
	var ids []string
	cursor := ""
	for len(ids) < want {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		path := fmt.Sprintf("/v1/api/studies?limit=%d", min(200, want-len(ids)))
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		resp, err := apiGet(t, path)
		if err != nil {
			return nil, err
		}
		status, body := resp.StatusCode(), resp.Body()
		cursor = string(resp.Header.Peek("X-Next-Cursor"))
		var page []struct {
			ID string `json:"id"`
		}
		err = json.Unmarshal(body, &page)
		if status != fasthttp.StatusOK {
			err = fmt.Errorf("status %d: %.200s", status, body)
		}
		fasthttp.ReleaseResponse(resp)
		if err != nil {
			return nil, fmt.Errorf("list studies: %w", err)
		}
		for _, s := range page {
			ids = append(ids, s.ID)
		}
		if cursor == "" {
			break
		}
	}
	return ids, nil
}
