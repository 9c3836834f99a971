// Package server is the assembly: New builds the shared pipeline (pipeline.Core) and
// mounts every surface of interviewd over it on one fasthttp router: the REST research
// API (rest), MCP (mcp), A2A (a2a), the OAuth endpoints (oauth), account access
// (access), the web app (app) and the participant pages (participant). It owns what
// is the whole server's: the listener, graceful stop, Maintain's sweeps and health.
//
// Every request takes the pipeline (request id → recover → access log → route); each
// route belongs to a surface (pipeline.Surface): an authenticator, steps composed once
// as middleware, a handler that returns an error, and the surface's one renderer.
// Research operations are written once in a table (pipeline.Operation) whose steps
// (scope → rate limit → idempotency → bind → required scope → operation) REST, MCP,
// A2A and the app compose alike. Surfaces never import each other or this package.
// Operations run on the request's context, which ends when the server stops (fasthttp
// cannot tell that a client went away while a handler runs: it does not read the
// connection until the handler returns).
package server

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"github.com/valyala/fasthttp"

	"interviewd/jobs"
	"interviewd/kv"
	"interviewd/mail"
	"interviewd/server/a2a"
	"interviewd/server/access"
	"interviewd/server/app"
	"interviewd/server/authz"
	"interviewd/server/mcp"
	"interviewd/server/oauth"
	"interviewd/server/participant"
	"interviewd/server/pipeline"
	"interviewd/server/ratelimit"
	"interviewd/server/research"
	"interviewd/server/rest"
	"interviewd/sms"
	"interviewd/webui"
)

// Config is what a Server needs. Zero values have working defaults except DB.
type Config struct {
	DB      *kv.DB
	Jobs    *jobs.Runner // background work; required for authoring
	Log     zerolog.Logger
	BaseURL string           // every absolute URL derives from it; default http://localhost:8080
	Now     func() time.Time // the clock; default time.Now
	// DerivedBaseURL says BaseURL was not configured but derived from the listen
	// address: discovery then answers a client that reached the server by another
	// loopback name on the same port for the origin it used (discovery.go).
	DerivedBaseURL bool
	// CORSOrigins are the browser origins allowed to call the MCP endpoint across
	// origins (canonical, from ParseCORSOrigins); none by default.
	CORSOrigins []string
	// AccessLog turns the per-request log line on.
	AccessLog bool
	// AccessLogger, when set, takes the access log's routine lines (answers below 500)
	// instead of Log: a logger whose writer batches them (logbatch). Server failures
	// and every other line go to Log.
	AccessLogger *zerolog.Logger
	// RateLimits configures admission; the zero value means DefaultRateLimits.
	RateLimits *pipeline.RateLimits
	// Metrics is the Prometheus registry the request metrics are registered on and
	// /metrics serves; nil keeps a private one.
	Metrics *prometheus.Registry
	// MetricsElsewhere stops /metrics on this listener (it is served on its own
	// address); otherwise loopback clients may read it here.
	MetricsElsewhere bool
	// LoopbackListener says the main listener is bound to a loopback address only.
	// /metrics is served on it only then: when it listens on a public address, a
	// reverse proxy or TLS terminator on the same host that adds no forwarding header
	// would make every internet client look local.
	LoopbackListener bool
	// HSTS sends Strict-Transport-Security on answers over TLS.
	HSTS bool
	// TrustedProxies are the addresses whose X-Forwarded-For / Forwarded and
	// X-Forwarded-Proto headers are believed (see ParseTrustedProxies); from any other
	// address those headers are ignored.
	TrustedProxies []netip.Prefix
	// Mail sends the web app's messages (sign-in codes, invitations); nil logs them.
	Mail mail.Sender
	// SMS sends two-step codes by text message; nil: text messages are not offered.
	SMS sms.Sender
	// WriteTimeout bounds writing one response (for an event stream, each write);
	// default 60 s.
	WriteTimeout time.Duration
	// BlobsPresign answers a signed export URL with a redirect to a presigned URL of the
	// blob store (S3), so the artifact's bytes go from the bucket to the client; a store
	// without presigned URLs (the fs store) serves the bytes itself.
	BlobsPresign bool

	// NoClientMetadata turns off OAuth client ID metadata documents (https client_id
	// URLs); registration still works.
	NoClientMetadata bool

	// allowLoopbackMetadata lets the metadata fetch reach loopback, and metadataRoots
	// are the CAs it trusts: for the one test that serves a document on 127.0.0.1.
	allowLoopbackMetadata bool
	metadataRoots         *x509.CertPool
	// onResearch sees every research call that reaches its operation (Core.OnResearch):
	// for the tenancy matrix.
	onResearch func(pipeline.ResearchPass)
}

// Server is the HTTP side of interviewd: the shared pipeline (Core) and the surfaces
// composed over it.
type Server struct {
	*pipeline.Core
	handler fasthttp.RequestHandler
	http    *fasthttp.Server
	cancel  context.CancelFunc
	// streams is the context of event streams (A2A), which outlive their handler:
	// cancelled when a shutdown begins, so open streams end and let it finish.
	streams     context.Context
	stopStreams context.CancelFunc
	research    *research.Service  // the research operations
	mcp         *mcp.Side          // the MCP server
	a2a         *a2a.Agent         // the A2A agent
	part        *participant.Pages // the participant pages and their API
	app         *app.App           // the web app
	clients     *authz.Clients     // OAuth clients and authorization requests
	oauth       *oauth.AuthServer  // the authorization server's endpoints
}

// New builds a Server and its routes.
func New(cfg Config) *Server {
	s := &Server{Core: &pipeline.Core{
		DB:        cfg.DB,
		Jobs:      cfg.Jobs,
		Log:       cfg.Log,
		AccessLog: cfg.AccessLog,
		Access:    cfg.Log,
		BaseURL:   strings.TrimRight(cfg.BaseURL, "/"),
		Now:       cfg.Now,

		MetricsReg:    cfg.Metrics,
		MetricsOnMain: !cfg.MetricsElsewhere && cfg.LoopbackListener,
		HSTS:          cfg.HSTS,
		Presign:       cfg.BlobsPresign,
		Mail:          cfg.Mail,
	}}
	if s.MetricsReg == nil {
		s.MetricsReg = prometheus.NewRegistry()
	}
	s.Metrics = pipeline.NewHTTPMetrics(s.MetricsReg)
	s.MetricsServe = pipeline.NewMetricsHandler(s.MetricsReg, &s.Log)
	derived := cfg.DerivedBaseURL
	if s.BaseURL == "" {
		s.BaseURL, derived = "http://localhost:8080", true
	}
	s.Discovery = pipeline.NewDiscoveryBase(s.BaseURL, derived)
	s.CORS = pipeline.NewCORSOrigins(cfg.CORSOrigins)
	if s.Now == nil {
		s.Now = time.Now
	}
	if cfg.AccessLogger != nil {
		s.Access = *cfg.AccessLogger
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	s.ReqPrefix = "req_" + hex.EncodeToString(b[:]) + "_"
	s.Ctx, s.cancel = context.WithCancel(context.Background())
	s.streams, s.stopStreams = context.WithCancel(s.Ctx)
	limits := pipeline.DefaultRateLimits()
	if cfg.RateLimits != nil {
		limits = *cfg.RateLimits
	}
	s.Limiter = ratelimit.New(limits)
	if cfg.DB != nil && cfg.DB.Shared() {
		// Other nodes admit requests of the same credentials: one window for all.
		s.Limiter.ShareIn(cfg.DB)
	}
	s.Proxies = pipeline.TrustedProxies(cfg.TrustedProxies)
	s.AuthFails = ratelimit.NewFailures(limits)
	s.SignIn, s.SignInMail = pipeline.NewSignInLimits(limits)
	if cfg.DB != nil && cfg.DB.Shared() {
		// Sign-in budgets hold across nodes like every other limit.
		s.SignIn.ShareInAs(cfg.DB, "signin:")
		s.SignInMail.ShareInAs(cfg.DB, "signin_mail:")
	}
	s.CreditAlerts = make(chan struct{}, 1)
	if cfg.DB != nil && cfg.DB.Shared() {
		s.AuthFails.ShareIn(cfg.DB) // an address's failures count on every node
	}
	ui, err := webui.New()
	if err != nil {
		panic(err) // the embedded pages are checked by tests: this is a broken build
	}
	s.UI, s.SecureCookies = ui, strings.HasPrefix(s.BaseURL, "https://")
	svc := research.NewService(s.Core)
	s.research = svc
	s.Ops = svc.OperationTable()
	s.OnResearch = cfg.onResearch
	writeTimeout := cmp.Or(cfg.WriteTimeout, 60*time.Second)
	s.clients = &authz.Clients{Core: s.Core}
	if !cfg.NoClientMetadata {
		s.clients.Metadata = authz.NewClientMetadata(cfg.allowLoopbackMetadata, cfg.metadataRoots)
	}
	r := pipeline.NewRouter()
	r.NotFound = s.HandleNotFound
	r.MethodNotAllowed = s.HandleMethodNotAllowed
	r.GlobalOPTIONS = s.HandleOptions
	rest.Route(svc, r)
	s.mcp = mcp.Route(s.Core, r)
	s.a2a = a2a.Route(s.Core, r, s.streams, writeTimeout)
	s.RouteDocs(r)
	s.part = participant.Route(svc, r)
	s.app = app.Route(svc, r, cfg.SMS, s.clients)
	access.Route(s.Core, r, cfg.SMS)
	s.oauth = oauth.Route(s.Core, r, limits, s.clients)
	pipeline.HandlePlain(r, "GET", pipeline.MetricsPath, s.HandleMetrics)
	s.routeHealth(r)
	s.handler = s.Pipeline(r.Handler)
	s.http = &fasthttp.Server{
		Handler:            s.handler,
		Name:               "interviewd",
		ReadTimeout:        60 * time.Second,
		WriteTimeout:       writeTimeout,
		IdleTimeout:        120 * time.Second,
		MaxRequestBodySize: pipeline.MaxJSONBody,
		// Uploads stream to disk under their own limits; JSON bodies are read through
		// readBody, which enforces maxJSONBody on streamed bodies too.
		StreamRequestBody:            true,
		DisablePreParseMultipartForm: true,
		NoDefaultDate:                false,
		ReadBufferSize:               pipeline.MaxHeaderBytes,
		// fasthttp's errors quote the request they failed on (keys, sessions, link
		// tokens); its remaining lines go through a logger that prints none of it.
		SecureErrorLogMessage: true,
		Logger:                pipeline.FasthttpLogger(s.Log),
		ErrorHandler:          s.HandleReadError,
		// Graceful stop: answers written during a shutdown say Connection: close, and
		// connections decide what the shutdown's close means (see conn.go).
		CloseOnShutdown: true,
		ConnState:       pipeline.ConnState,
	}
	return s
}

// Handler returns the whole request pipeline, for tests and benchmarks.
func (s *Server) Handler() fasthttp.RequestHandler { return s.handler }

// Operations returns the operations table.
func (s *Server) Operations() []*pipeline.Operation { return s.Ops }

// Serve answers requests on ln until Shutdown; it returns nil after a clean shutdown.
func (s *Server) Serve(ln net.Listener) error {
	return s.http.Serve(pipeline.TrackedListener{Listener: ln})
}

// Shutdown stops accepting connections and waits for in-flight requests until ctx ends,
// then cancels whatever operations remain. It returns ctx's error if time ran out.
func (s *Server) Shutdown(ctx context.Context) error {
	s.stopStreams()
	err := s.http.ShutdownWithContext(ctx)
	s.cancel()
	return err
}
