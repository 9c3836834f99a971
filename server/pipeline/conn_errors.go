package pipeline

import (
	"bytes"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"strconv"
	"strings"

	json "github.com/goccy/go-json"
	"github.com/rs/zerolog"
	"github.com/valyala/fasthttp"
)

// Requests fasthttp refuses before any handler runs: headers that do not parse or do
// not fit, bodies whose framing is broken or too long, reads that time out. They are
// answered like every other error, with a request id, in the route's shape (JSON, or
// HTML for a page), and logged once, by category: the raw request never reaches the
// log, since it carries API keys, session secrets and link tokens.

// MaxHeaderBytes is the request line plus headers fasthttp reads (its read buffer). It
// is that of nginx and Apache: a bearer too long to be any credential still fits, and
// is answered 401 with WWW-Authenticate like any other unknown one.
const MaxHeaderBytes = 8 << 10

// readRefusal is how a request fasthttp could not read is answered and logged.
type readRefusal struct {
	status int
	code   string
	detail string
}

func classifyReadError(err error) readRefusal {
	var small *fasthttp.ErrSmallBuffer
	var chunk fasthttp.ErrBrokenChunk
	var netErr net.Error
	switch {
	case errors.As(err, &small):
		return readRefusal{431, "header_too_large", fmt.Sprintf("The request line and headers are larger than %d KiB.", MaxHeaderBytes>>10)}
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		return readRefusal{413, "payload_too_large", "The request body is too large."}
	case errors.As(err, &netErr) && netErr.Timeout():
		return readRefusal{408, "request_timeout", "The request was not received in time."}
	case errors.As(err, &chunk) || errors.Is(err, io.ErrUnexpectedEOF):
		return readRefusal{400, "malformed_body", ErrMalformedBody.Detail}
	}
	return readRefusal{400, "malformed_request", "The request could not be parsed: its request line or a header is malformed."}
}

// HandleReadError is the server's ErrorHandler. fasthttp closes the connection after it.
func (s *Core) HandleReadError(c *fasthttp.RequestCtx, err error) {
	r := classifyReadError(err)
	id := s.newRequestID()
	method, path := parseHead(requestHead(c.Conn()))
	c.Response.Reset()
	c.Response.Header.Set("X-Request-Id", id)
	c.SetStatusCode(r.status)
	if isPageRequest(method, path) {
		c.Response.Header.Set("Cache-Control", "no-store")
		c.Response.Header.Set("X-Content-Type-Options", "nosniff")
		c.SetContentType("text/html; charset=utf-8")
		c.SetBodyString(refusalPage(r))
	} else {
		body, _ := json.MarshalNoEscape(ErrorBody{Detail: r.detail, Code: r.code})
		c.SetContentType("application/json")
		c.SetBody(body)
	}
	if s.AccessLog {
		s.Access.Info().Str("route", "unparsed").Int("status", r.status).Str("request_id", id).Str("error", r.code).
			Str("client_ip", s.clientIPText(c)).Msg("request")
	}
}

// newRequestID returns a fresh request id, as the pipeline gives every request.
func (s *Core) newRequestID() string {
	return s.ReqPrefix + strconv.FormatUint(s.reqSeq.Add(1), 36)
}

// parseHead splits the captured start of a request line into its method and path
// (without the query); either may be cut short.
func parseHead(head []byte) (method, path string) {
	m, rest, ok := bytes.Cut(head, []byte(" "))
	if !ok {
		return "", ""
	}
	if i := bytes.IndexAny(rest, " ?\r\n"); i >= 0 {
		rest = rest[:i]
	}
	return string(m), string(rest)
}

// isPageRequest reports whether a request is for a page a person reads in a browser:
// a participant's interview page (GET /i/{token}), the web app or the root.
func isPageRequest(method, path string) bool {
	if method != "GET" && method != "HEAD" {
		return false
	}
	if rest, ok := strings.CutPrefix(path, "/i/"); ok {
		return !strings.Contains(rest, "/")
	}
	return path == "/" || path == "/app" || strings.HasPrefix(path, "/app/")
}

func refusalPage(r readRefusal) string {
	title := html.EscapeString(strconv.Itoa(r.status) + " " + fasthttp.StatusMessage(r.status))
	return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>` + title +
		`</title></head><body><h1>` + title + `</h1><p>` + html.EscapeString(r.detail) +
		` Please reload the page; if this keeps happening, clear this site's cookies.</p></body></html>`
}

// fasthttpLogger takes fasthttp's own log lines into zerolog. fasthttp formats the
// failed request into some of its errors (a header buffer snippet, the request URI),
// so no argument is ever printed as text: errors are logged by category, addresses as
// the remote IP, numbers as they are.
type fasthttpLogger struct{ log zerolog.Logger }

// FasthttpLogger is the fasthttp.Logger for any other fasthttp server interviewd runs
// (the --metrics-addr listener), so that it logs as redacted as the main one.
func FasthttpLogger(log zerolog.Logger) fasthttp.Logger { return fasthttpLogger{log} }

const ConnErrorFormat = "error when serving connection %q<->%q: %v"

func (l fasthttpLogger) Printf(format string, args ...any) {
	if format == ConnErrorFormat && len(args) == 3 {
		// The same failure was answered, and logged, by handleReadError when a request
		// was being read; what remains is connection trouble worth a debug line.
		ev := l.log.Debug().Str("source", "fasthttp")
		if a, ok := args[1].(net.Addr); ok {
			ev = ev.Str("remote_ip", addrIP(a))
		}
		if err, ok := args[2].(error); ok {
			ev = ev.Str("error", classifyReadError(err).code)
		}
		ev.Msg("connection ended with an error")
		return
	}
	safe := make([]any, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case int, int64, uint64, uint, float64:
			safe[i] = v
		case net.Addr:
			safe[i] = addrIP(v)
		case *net.OpError: // accept errors: about the listener, not a request
			safe[i] = v.Error()
		default:
			safe[i] = "[redacted]"
		}
	}
	l.log.Warn().Str("source", "fasthttp").Msg(fmt.Sprintf(format, safe...))
}

func addrIP(a net.Addr) string {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.IP.String()
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return "unknown"
	}
	return host
}
