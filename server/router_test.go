package server

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"interviewd/kv"
)

// rawDo sends one request line exactly as written (no client cleans its path) on a
// fresh connection to the test server, with the key as bearer and a JSON body of {}.
func (e *testEnv) rawDo(requestLine, key string) response {
	e.t.Helper()
	addr := strings.TrimPrefix(e.url, "http://")
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		e.t.Fatal(err)
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(60 * time.Second)); err != nil {
		e.t.Fatal(err)
	}
	auth := ""
	if key != "" {
		auth = "Authorization: Bearer " + e.keys[key] + "\r\n"
	}
	if _, err := fmt.Fprintf(c, "%s HTTP/1.1\r\nHost: %s\r\n%sContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}",
		requestLine, addr, auth); err != nil {
		e.t.Fatal(err)
	}
	method, _, _ := strings.Cut(requestLine, " ")
	resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: method})
	if err != nil {
		e.t.Fatalf("%s: %v", requestLine, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: body}
}

// TestRouterEdges pins how requests the route table does not plainly match are
// answered over a real socket, paths sent exactly as written: no redirect (trailing
// slash, case, doubled slash), 404 and 405 in each surface's shape, a 405's Allow
// header naming the path's methods, OPTIONS answered with Allow, an empty segment
// reaching its route with an empty parameter that the route then refuses, and the
// server-wide path "*". Each line of the access log names the route template it
// matched, or "unmatched".
func TestRouterEdges(t *testing.T) {
	logs := &syncLog{}
	e := mustServe(t, func(c *Config, _ *kv.Options) { c.Log = zerolog.New(logs) })
	for _, c := range []struct {
		name, request, key string
		status             int
		allow              string // the whole Allow header; "" for none
		contentType        string // prefix; "" for an answer without a body
		body               string // substring of the body
		route              string // the access line's route
	}{
		{"ErrNotFound_TrailingSlash", "GET /v1/api/studies/", "a_live", 404, "", "application/json", `"code":"not_found"`, "unmatched"},
		{"ErrNotFound_Case", "GET /V1/API/STUDIES", "a_live", 404, "", "application/json", `"code":"not_found"`, "unmatched"},
		{"ErrNotFound_DoubleSlash", "GET /v1/api//studies", "a_live", 404, "", "application/json", `"code":"not_found"`, "unmatched"},
		{"ErrNotFound_OptionsUnknownPath", "OPTIONS /nope", "", 404, "", "application/json", `"code":"not_found"`, "unmatched"},
		{"ErrNotFound_App", "GET /app/studies/", "", 404, "", "text/html", "Not found", "/app/*"},
		{"ErrMethod_REST", "PUT /v1/api/studies", "a_live", 405, "GET, HEAD, OPTIONS, POST", "application/json", `"code":"method_not_allowed"`, "unmatched"},
		{"ErrMethod_Participant", "GET /i/abc/session", "", 405, "OPTIONS, POST", "application/json", `"code":"method_not_allowed"`, "unmatched"},
		{"ErrMethod_App", "PUT /app/studies", "", 405, "GET, HEAD, OPTIONS, POST", "text/html", "cannot be opened that way", "/app/*"},
		{"OK_Options", "OPTIONS /v1/api/studies", "", 204, "GET, HEAD, OPTIONS, POST", "", "", "unmatched"},
		{"OK_OptionsApp", "OPTIONS /app/studies", "", 204, "GET, HEAD, OPTIONS, POST", "", "", "unmatched"},
		// An empty segment is an empty parameter: the route answers, and refuses it.
		{"ErrEmptySegment_REST", "GET /v1/api/studies//interview-link", "a_live", 422, "", "application/json", `"loc":["path","study_id"]`, "/v1/api/studies/{study_id}/interview-link"},
		{"ErrEmptySegment_Participant", "POST /i//session", "", 404, "", "application/json", `"code":"not_found"`, "/i/{token}/session"},
		// "*" and "/*" are the server as a whole: OPTIONS lists every method it serves
		// somewhere; any other method is refused, as only OPTIONS applies there.
		{"ErrMethod_ServerWide", "GET /*", "", 405, "OPTIONS", "application/json", `"code":"method_not_allowed"`, "unmatched"},
		{"ErrMethod_ServerWideAsterisk", "POST *", "", 405, "OPTIONS", "application/json", `"code":"method_not_allowed"`, "unmatched"},
		{"OK_OptionsServerWide", "OPTIONS *", "", 204, "DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT", "", "", "unmatched"},
		// The MCP endpoint answers every method itself, on both of its paths; without a
		// credential, first with the 401 that starts discovery.
		{"ErrMethod_MCP", "OPTIONS /v1/mcp", "a_live", 405, "POST", "application/json", `"code":"method_not_allowed"`, "/v1/mcp"},
		{"ErrMethod_MCPSlash", "GET /v1/mcp/", "a_live", 405, "POST", "application/json", `"code":"method_not_allowed"`, "/v1/mcp"},
		{"ErrUnauthenticated_MCPGet", "GET /v1/mcp", "", 401, "", "application/json", `"code":"missing_token"`, "/v1/mcp"},
		{"ErrUnauthenticated_MCPSlash", "POST /v1/mcp/", "", 401, "", "application/json", `"code":"`, "/v1/mcp"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.rawDo(c.request, c.key)
			if r.status != c.status {
				t.Fatalf("%s: %d, want %d: %s", c.request, r.status, c.status, r.body)
			}
			if got := r.header.Get("Allow"); got != c.allow {
				t.Errorf("Allow %q, want %q", got, c.allow)
			}
			if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, c.contentType) || (c.contentType == "") != (len(r.body) == 0) {
				t.Errorf("Content-Type %q with %d bytes of body, want %q", ct, len(r.body), c.contentType)
			}
			if !strings.Contains(string(r.body), c.body) {
				t.Errorf("body %.300s does not contain %s", r.body, c.body)
			}
			id := r.header.Get("X-Request-Id")
			if id == "" {
				t.Fatal("no X-Request-Id")
			}
			var route any
			for _, line := range logs.requestLines(t) { // written before the answer
				if line["request_id"] == id {
					route = line["route"]
				}
			}
			if route != c.route {
				t.Errorf("access line route %v, want %q", route, c.route)
			}
		})
	}
}

// TestRouterAllowEveryOperation asks every REST operation's path, parameters filled,
// with OPTIONS and with a method no route there serves: 204 and 405, each with an
// Allow header that names the operation's own method (HEAD beside GET) and OPTIONS,
// and only methods (no "*", never the refused one).
func TestRouterAllowEveryOperation(t *testing.T) {
	e := mustServe(t)
	param := regexp.MustCompile(`\{[a-z_]+\}`)
	method := regexp.MustCompile(`^[A-Z]+$`)
	paths := map[string][]string{} // path → its operations' methods
	for _, o := range e.srv.Operations() {
		tmpl, _ := o.RESTPathAction()
		p := param.ReplaceAllString(tmpl, "x")
		paths[p] = append(paths[p], o.Method)
		if o.Method == "GET" {
			paths[p] = append(paths[p], "HEAD")
		}
	}
	if len(paths) < 10 {
		t.Fatalf("only %d REST paths", len(paths))
	}
	for p, want := range paths {
		refused := "TRACE"
		r := e.do("OPTIONS", p, "", "")
		if r.status != 204 || len(r.body) != 0 {
			t.Errorf("OPTIONS %s: %d %s", p, r.status, r.body)
		}
		r405 := e.do(refused, p, "", "")
		if r405.status != 405 || !strings.Contains(string(r405.body), `"code":"method_not_allowed"`) {
			t.Errorf("%s %s: %d %s", refused, p, r405.status, r405.body)
		}
		for _, got := range []response{r, r405} {
			allow := strings.Split(got.header.Get("Allow"), ", ")
			for _, m := range append(want, "OPTIONS") {
				if !slices.Contains(allow, m) {
					t.Errorf("%s: Allow %q lacks %s", p, allow, m)
				}
			}
			for _, m := range allow {
				if !method.MatchString(m) || m == refused {
					t.Errorf("%s: Allow %q lists %q", p, allow, m)
				}
			}
		}
	}
}
