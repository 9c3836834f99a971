package server

import (
	"bytes"
	"context"
	"net"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fasthttp/router"
	json "github.com/goccy/go-json"
	"github.com/rs/zerolog"
	"github.com/valyala/fasthttp"

	"interviewd/kv"
	"interviewd/server/pipeline"
)

// syncLog is a log sink safe for the server's goroutines.
type syncLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *syncLog) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// requestLines returns the access log lines so far.
func (l *syncLog) requestLines(t *testing.T) []map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(l.buf.Bytes()), []byte("\n")) {
		var m map[string]any
		if len(line) == 0 {
			continue
		}
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if m["message"] == "request" {
			out = append(out, m)
		}
	}
	return out
}

// mustServeRoutes serves the routes register adds, behind the server's real pipeline,
// on a real socket; it returns the base URL and the log.
func mustServeRoutes(t *testing.T, register func(s *Server, r *router.Router)) (string, *syncLog) {
	t.Helper()
	return mustServeRoutesWith(t, func(*Config) {}, register)
}

// mustServeRoutesWith is mustServeRoutes with the server's configuration changed by
// configure first.
func mustServeRoutesWith(t *testing.T, configure func(*Config), register func(s *Server, r *router.Router)) (string, *syncLog) {
	t.Helper()
	logs := &syncLog{}
	cfg := Config{DB: mustOpenDB(t), Log: zerolog.New(logs), AccessLog: true, BaseURL: testBaseURL}
	configure(&cfg)
	srv := New(cfg)
	r := pipeline.NewRouter()
	r.NotFound = srv.HandleNotFound
	r.MethodNotAllowed = srv.HandleMethodNotAllowed
	register(srv, r)
	hs := &fasthttp.Server{Handler: srv.Pipeline(r.Handler)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		_ = hs.ShutdownWithContext(ctx)
		<-served
	})
	return "http://" + ln.Addr().String(), logs
}

// chainTrace is what the test surface's steps record.
type chainTrace struct {
	who   string
	steps []string
}

func tracing(name string) pipeline.Middleware {
	return func(next pipeline.Handler) pipeline.Handler {
		return func(r *pipeline.Request) error {
			tr := r.Data.(*chainTrace)
			tr.steps = append(tr.steps, name)
			return next(r)
		}
	}
}

// testSurface records its way through the chain: a pre step creates the trace, the
// authenticator wants X-Who, two steps, a group step, a route step; the renderer writes
// the trace, the error's code and its (domain) fields, and counts itself.
func testSurface() *pipeline.Surface {
	return &pipeline.Surface{
		Name: "test",
		Pre: []pipeline.Middleware{func(next pipeline.Handler) pipeline.Handler {
			return func(r *pipeline.Request) error {
				r.Data = &chainTrace{steps: []string{"pre"}}
				return next(r)
			}
		}},
		Authenticate: func(r *pipeline.Request) error {
			tr := r.Data.(*chainTrace)
			tr.steps = append(tr.steps, "authenticate")
			tr.who = string(r.C.Request.Header.Peek("X-Who"))
			if tr.who == "" {
				return &pipeline.APIError{Status: 401, Code: "missing_token", Detail: "Say who you are."}
			}
			return nil
		},
		Steps: []pipeline.Middleware{tracing("step1"), tracing("step2")},
		Render: func(r *pipeline.Request, err error) {
			tr := r.Data.(*chainTrace)
			body := map[string]any{"steps": tr.steps, "route": r.Route}
			r.C.Response.Header.Add("X-Rendered", "1")
			status := 200
			if err != nil {
				ae := pipeline.ToAPIError(err)
				status = ae.Status
				body["code"], body["fields"], body["detail"] = ae.Code, ae.Fields, ae.Detail
				r.Info.Code = ae.Code
				if ae.Status >= 500 {
					r.Info.Err = ae.Error()
				}
			} else {
				body["out"] = r.Out
			}
			raw, _ := json.Marshal(body)
			r.C.SetStatusCode(status)
			r.C.SetContentType("application/json")
			r.C.SetBody(raw)
		},
	}
}

func TestSurfaceChain(t *testing.T) {
	url, logs := mustServeRoutes(t, func(s *Server, r *router.Router) {
		g := s.Group(r, "/t", testSurface(), tracing("group"))
		g.GET("/{id}", func(r *pipeline.Request) error {
			tr := r.Data.(*chainTrace)
			tr.steps = append(tr.steps, "handler")
			switch r.PathParam("id") {
			case "panic":
				panic("the handler broke")
			case "invalid":
				return kv.Invalid(kv.FieldError{Loc: []any{"context", "k"}, Msg: "Too long.", Type: "string_too_long"})
			case "written":
				r.C.SetStatusCode(204)
				r.Written = true
				return nil
			}
			r.Out = "hello " + tr.who
			return nil
		}, tracing("route"))
	})
	type answer struct {
		Steps  []string         `json:"steps"`
		Route  string           `json:"route"`
		Out    string           `json:"out"`
		Code   string           `json:"code"`
		Detail string           `json:"detail"`
		Fields []map[string]any `json:"fields"`
	}
	get := func(t *testing.T, method, path, who string) (int, answer, *fasthttp.Response) {
		t.Helper()
		req, resp := fasthttp.AcquireRequest(), &fasthttp.Response{}
		defer fasthttp.ReleaseRequest(req)
		req.Header.SetMethod(method)
		req.SetRequestURI(url + path)
		if who != "" {
			req.Header.Set("X-Who", who)
		}
		if err := fasthttp.DoTimeout(req, resp, 60*time.Second); err != nil {
			t.Fatal(err)
		}
		var a answer
		if len(resp.Body()) > 0 {
			if err := json.Unmarshal(resp.Body(), &a); err != nil {
				t.Fatalf("%s: %v", resp.Body(), err)
			}
		}
		return resp.StatusCode(), a, resp
	}
	all := []string{"pre", "authenticate", "step1", "step2", "group", "route", "handler"}

	t.Run("OK", func(t *testing.T) {
		status, a, _ := get(t, "GET", "/t/1", "ada")
		if status != 200 || a.Out != "hello ada" || !reflect.DeepEqual(a.Steps, all) || a.Route != "/t/{id}" {
			t.Fatalf("%d %+v, want 200 hello ada through %v on /t/{id}", status, a, all)
		}
	})
	t.Run("OK_HeadIsGet", func(t *testing.T) {
		status, _, resp := get(t, "HEAD", "/t/1", "ada")
		if status != 200 || string(resp.Header.Peek("X-Rendered")) != "1" {
			t.Fatalf("HEAD: %d rendered %q", status, resp.Header.Peek("X-Rendered"))
		}
	})
	t.Run("ErrUnauthenticatedStopsBeforeSteps", func(t *testing.T) {
		status, a, _ := get(t, "GET", "/t/1", "")
		if status != 401 || a.Code != "missing_token" || !reflect.DeepEqual(a.Steps, []string{"pre", "authenticate"}) {
			t.Fatalf("%d %+v", status, a)
		}
	})
	t.Run("ErrPanicRenderedBySurface", func(t *testing.T) {
		status, a, _ := get(t, "GET", "/t/panic", "ada")
		if status != 500 || a.Code != "internal_error" || a.Detail != pipeline.ErrInternal || !reflect.DeepEqual(a.Steps, all) {
			t.Fatalf("%d %+v", status, a)
		}
	})
	t.Run("ErrDomainFieldsReachRendererUnlocated", func(t *testing.T) {
		status, a, _ := get(t, "GET", "/t/invalid", "ada")
		if status != 422 || len(a.Fields) != 1 || !reflect.DeepEqual(a.Fields[0]["loc"], []any{"context", "k"}) {
			t.Fatalf("%d %+v, want 422 at [context k]", status, a)
		}
	})
	t.Run("OK_WrittenSkipsRenderer", func(t *testing.T) {
		status, _, resp := get(t, "GET", "/t/written", "ada")
		if status != 204 || len(resp.Header.Peek("X-Rendered")) != 0 {
			t.Fatalf("%d rendered %q", status, resp.Header.Peek("X-Rendered"))
		}
	})
	t.Run("OK_AccessLogNamesTemplate", func(t *testing.T) {
		lines := logs.requestLines(t)
		byPath := map[string]int{}
		for _, l := range lines {
			if l["route"] != "/t/{id}" {
				t.Fatalf("access line route %v, want /t/{id}: %v", l["route"], l)
			}
			if l["status"] == float64(500) {
				if _, ok := l["error"].(string); !ok {
					t.Fatalf("panic access line without its error: %v", l)
				}
				if !strings.Contains(l["error"].(string), "the handler broke") {
					t.Fatalf("panic cause not logged: %v", l)
				}
			}
			byPath[l["method"].(string)]++
		}
		if byPath["GET"] < 5 || byPath["HEAD"] != 1 {
			t.Fatalf("access lines %v", byPath)
		}
		if !strings.Contains(logs.text(), `"message":"handler panicked"`) || !strings.Contains(logs.text(), `"panic":"the handler broke"`) {
			t.Fatalf("the panic was not logged on its own line:\n%s", logs.text())
		}
	})
}

// TestLocatedREST: REST puts the wire location the operation's input gives a field in
// front of kv's domain path; failures found on the wire keep theirs.
func TestLocatedREST(t *testing.T) {
	srv := New(Config{DB: mustOpenDB(t), Log: zerolog.Nop(), BaseURL: testBaseURL})
	plans := map[string]*pipeline.InputPlan{}
	for _, o := range srv.Operations() {
		plans[o.Name] = o.Plan
	}
	tests := []struct {
		name string
		op   string
		err  error
		want []any
	}{
		{"OK_BodyField", "create_participant_link", kv.Invalid(kv.FieldError{Loc: []any{"context", "k"}, Type: "t"}), []any{"body", "context", "k"}},
		{"OK_PathField", "create_participant_link", kv.Invalid(kv.FieldError{Loc: []any{"study_id"}, Type: "t"}), []any{"path", "study_id"}},
		{"OK_QueryField", "list_studies", kv.Invalid(kv.FieldError{Loc: []any{"cursor"}, Type: "t"}), []any{"query", "cursor"}},
		{"OK_WholeInput", "list_studies", kv.Errorf(kv.EINVALID, "", "Bad."), []any{"body"}},
		{"OK_NoOperation", "", kv.Invalid(kv.FieldError{Loc: []any{"file_ids", 2}, Type: "t"}), []any{"body", "file_ids", 2}},
		{"OK_WireErrorKept", "list_studies", pipeline.WireInvalid(kv.FieldError{Loc: []any{"header", "Idempotency-Key"}, Type: "t"}), []any{"header", "Idempotency-Key"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if kv.ErrorCode(tc.err) != kv.EINVALID { // wire failures are coded kv errors too
				t.Fatalf("code %q, want EINVALID", kv.ErrorCode(tc.err))
			}
			ae := pipeline.ToAPIError(tc.err)
			got := ae.LocatedREST(plans[tc.op])
			if got.Status != 422 || len(got.Fields) != 1 || !reflect.DeepEqual(got.Fields[0].Loc, tc.want) {
				t.Fatalf("located %+v, want loc %v", got.Fields, tc.want)
			}
			if ae.Domain && ae.Fields[0].Loc != nil && len(ae.Fields[0].Loc) == len(tc.want) {
				t.Fatalf("locating changed the domain error: %v", ae.Fields[0].Loc)
			}
		})
	}
}
