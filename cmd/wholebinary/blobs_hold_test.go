package wholebinary

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"strings"
	"sync"
	"testing"

	"interviewd/blobs/blobstest"
)

// s3Hold stands between one node and the real S3 server: it passes every request on
// unchanged (the Host the node signed included) except the upload of an export's
// artifact, which it holds until the node goes away or the test ends. An export of that
// node is then provably in flight, built but not stored, for as long as the test needs.
type s3Hold struct {
	addr   string
	mu     sync.Mutex
	held   map[string]bool // request paths held
	closed chan struct{}
}

func startS3Hold(t *testing.T, srv *blobstest.S3) *s3Hold {
	t.Helper()
	h := &s3Hold{held: map[string]bool{}, closed: make(chan struct{})}
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.Out.URL.Scheme, r.Out.URL.Host = "http", srv.Addr // Out.Host stays the signed one
	}}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if (r.Method == http.MethodPut || r.Method == http.MethodPost) && strings.Contains(r.URL.Path, "/exports/") {
			h.mu.Lock()
			h.held[r.URL.Path] = true
			h.mu.Unlock()
			select {
			case <-r.Context().Done():
			case <-h.closed:
			}
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	h.addr = ts.Listener.Addr().String()
	t.Cleanup(ts.Close)
	t.Cleanup(func() { close(h.closed) }) // runs first: held handlers return
	return h
}

// blobsURL is the --blobs value reaching srv's bucket through the hold.
func (h *s3Hold) blobsURL(srv *blobstest.S3) string {
	return strings.Replace(srv.URL(), "endpoint=http://"+srv.Addr, "endpoint=http://"+h.addr, 1)
}

// holding reports whether the upload of export job's artifact is held.
func (h *s3Hold) holding(job string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for p := range h.held {
		if strings.Contains(p, "/exports/"+job+".") {
			return true
		}
	}
	return false
}
