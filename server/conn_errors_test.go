package server

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/rs/zerolog"
	"github.com/valyala/fasthttp"

	"interviewd/kv"
	"interviewd/server/participant"
	"interviewd/server/pipeline"
)

// rawExchange writes raw to a fresh connection to the server and reads one response.
// A response that never comes (the server closed the connection) is a nil response.
// With halfClose the client says it has sent everything (as a client whose body was
// cut short would, by ending the connection).
func (e *testEnv) rawExchange(raw string, halfClose ...bool) *fasthttp.Response {
	e.t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.url, "http://"))
	if err != nil {
		e.t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
	if _, err := io.WriteString(conn, raw); err != nil {
		e.t.Fatal(err)
	}
	if len(halfClose) > 0 && halfClose[0] {
		_ = conn.(*net.TCPConn).CloseWrite()
	}
	resp := &fasthttp.Response{}
	br := bufio.NewReader(conn)
	if err := resp.Read(br); err != nil {
		return nil
	}
	if resp.ConnectionClose() {
		// Wait for the server to close: fasthttp logs a connection's error before.
		_, _ = io.Copy(io.Discard, br)
	}
	return resp
}

// TestMalformedRequestsLeakNoSecret sends, over a raw socket, every shape of request
// fasthttp refuses (and some the handlers refuse), each carrying an API key, a session
// header, a session cookie and a link token, and checks that none of them reaches the
// log at any level, and that every answer is a proper error with a request id: JSON
// {detail, code}, or HTML for a page.
func TestMalformedRequestsLeakNoSecret(t *testing.T) {
	logs := &logBuffer{}
	e := mustServe(t, withLog(logs, zerolog.DebugLevel))
	st := e.mustStudy(e.orgA.ID, kv.EnvLive, "Secrets")
	key := e.keys["a_live"]
	session := participant.NewSessionSecret()
	cookieSecret := participant.NewSessionSecret()
	token := st.LinkToken
	secrets := map[string]string{"api key": key, "session header": session, "session cookie": cookieSecret, "link token": token}
	cookie := participant.SessionCookieName(token) + "=" + cookieSecret
	creds := "Authorization: Bearer " + key + "\r\nX-Interview-Session: " + session + "\r\nCookie: " + cookie + "\r\n"
	api := "POST /i/" + token + "/messages HTTP/1.1\r\nHost: x\r\n"
	page := "GET /i/" + token + " HTTP/1.1\r\nHost: x\r\n"
	rest := "POST /v1/api/studies HTTP/1.1\r\nHost: x\r\n"
	cases := []struct {
		name   string
		raw    string
		status int
		html   bool
	}{
		{"HeaderValueControlChar", rest + creds + "X-Note: a\x01b\r\nContent-Length: 2\r\n\r\n{}", 400, false},
		{"BadContentLength", api + creds + "Content-Length: 12ab\r\n\r\n{}", 400, false},
		{"IdempotencyKeyControlChar", rest + creds + "Idempotency-Key: k\x01ey\r\nContent-Length: 2\r\n\r\n{}", 400, false},
		{"AuthorizationControlChar", rest + "Authorization: Bearer " + key + "\x01\r\nContent-Length: 2\r\n\r\n{}", 400, false},
		{"HeaderWithoutColon", api + creds + "Bearer " + key + "\r\n\r\n", 400, false},
		{"SpaceInHeaderName", api + creds + "X Bad: " + key + "\r\n\r\n", 422, false},
		{"UnsupportedTransferEncoding", api + creds + "Transfer-Encoding: gzip\r\n\r\n", 400, false},
		{"MissingHost", "POST /i/" + token + "/messages HTTP/1.1\r\n" + creds + "\r\n", 400, false},
		{"BadVersion", "GET /v1/api/me?k=" + key + " HTTP/9.9\r\nHost: x\r\n" + creds + "\r\n", 200, false},
		{"BadMethod", "G@T /i/" + token + "?k=" + key + " HTTP/1.1\r\nHost: x\r\n" + creds + "\r\n", 400, false},
		{"ControlCharInURI", "GET /i/" + token + "\x01" + key + " HTTP/1.1\r\nHost: x\r\n" + creds + "\r\n", 400, true},
		{"HeadersTooLarge", api + creds + "X-Pad: " + strings.Repeat(key, 200) + "\r\n\r\n", 431, false},
		{"HeadersTooLargeOnPage", page + creds + "X-Pad: " + strings.Repeat(session, 300) + "\r\n\r\n", 431, true},
		{"PageHeaderControlChar", page + creds + "X-Note: \x01" + key + "\r\n\r\n", 400, true},
		{"BrokenChunks", api + creds + "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nZZZ\r\n" + key + "\r\n0\r\n\r\n", 400, false},
		{"ShortBody", api + creds + "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"text\":\"" + key, 400, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := e.rawExchange(c.raw, c.name == "ShortBody")
			if resp == nil {
				t.Fatal("no response")
			}
			if resp.StatusCode() != c.status {
				t.Fatalf("status %d, want %d; body %s", resp.StatusCode(), c.status, resp.Body())
			}
			if len(resp.Header.Peek("X-Request-Id")) == 0 {
				t.Fatal("no X-Request-Id")
			}
			ct := string(resp.Header.ContentType())
			if c.html {
				if !strings.HasPrefix(ct, "text/html") || !bytes.Contains(resp.Body(), []byte("<h1>")) {
					t.Fatalf("page route answered %s: %s", ct, resp.Body())
				}
				return
			}
			if c.status < 400 {
				return
			}
			var body struct {
				Detail any
				Code   string
			}
			if c.status == 422 {
				body.Code = "validation_error" // {"detail": [items]}
			}
			if ct != "application/json" || json.Unmarshal(resp.Body(), &body) != nil || body.Detail == nil || body.Code == "" {
				t.Fatalf("answer is not {detail, code} JSON: %s %s", ct, resp.Body())
			}
		})
	}
	// Every case above has been answered (or its connection closed) before this point,
	// and fasthttp logs a connection's error before it closes it.
	out := logs.String()
	if !strings.Contains(out, `"route":"unparsed"`) {
		t.Fatalf("the refusals were not logged:\n%s", out)
	}
	for what, secret := range secrets {
		if strings.Contains(out, secret) {
			t.Errorf("the %s appears in the log:\n%s", what, out)
		}
	}
}

// TestLongBearerIs401: a bearer far too long to be any credential, in headers that
// still fit, is an invalid credential (401 with WWW-Authenticate), not a 431.
func TestLongBearerIs401(t *testing.T) {
	e := mustServe(t)
	r := e.do("GET", "/v1/api/me", "Bearer jsk_live_"+strings.Repeat("A", 6000), "")
	if r.status != 401 || !strings.Contains(r.header.Get("WWW-Authenticate"), `error="invalid_token"`) {
		t.Fatalf("status %d, WWW-Authenticate %q: %s", r.status, r.header.Get("WWW-Authenticate"), r.body)
	}
	r = e.do("POST", "/v1/mcp", "Bearer "+strings.Repeat("x", 6000), `{}`)
	if r.status != 401 || !strings.Contains(r.header.Get("WWW-Authenticate"), "/v1/mcp") {
		t.Fatalf("MCP: status %d, WWW-Authenticate %q", r.status, r.header.Get("WWW-Authenticate"))
	}
}

func TestFasthttpLoggerPrintsNoRequest(t *testing.T) {
	var buf bytes.Buffer
	l := pipeline.FasthttpLogger(zerolog.New(&buf).Level(zerolog.DebugLevel))
	secret := "jsk_live_secretsecret"
	addr := &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 1234}
	l.Printf(pipeline.ConnErrorFormat, addr, addr, io.ErrUnexpectedEOF)
	l.Printf("some other line %s %q %v %d", secret, []byte(secret), struct{ S string }{secret}, 7)
	out := buf.String()
	if strings.Contains(out, "secret") || !strings.Contains(out, "192.0.2.1") || !strings.Contains(out, " 7") {
		t.Fatalf("log: %s", out)
	}
}
