package pipeline

import (
	"bytes"
	"context"
	"interviewd/jobs"
	"interviewd/kv"
	"interviewd/mail"
	"interviewd/server/ratelimit"
	"interviewd/webui"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"github.com/valyala/fasthttp"
)

// Core is the shared pipeline every surface is composed over: the store, the jobs,
// the clock, the operations table, admission, the client address, the request
// pipeline's ids and logs, and the mail sender.
type Core struct {
	DB        *kv.DB
	Jobs      *jobs.Runner
	Log       zerolog.Logger
	AccessLog bool
	Access    zerolog.Logger // the access log's routine lines (Config.AccessLogger or log)
	BaseURL   string
	Discovery discoveryBase // which loopback origins discovery follows
	CORS      CORSOrigins   // browser origins allowed on the MCP endpoint
	Now       func() time.Time
	Ops       []*Operation
	Limiter   *ratelimit.Limiter
	Ctx       context.Context // cancelled at shutdown; every request's context derives from it
	ReqPrefix string
	reqSeq    atomic.Uint64
	Proxies   TrustedProxies
	AuthFails *ratelimit.Failures // failed credentials per client address
	// CreditAlerts asks Maintain to mail pending low-credit alerts now (app/credits_alert.go).
	CreditAlerts chan struct{}
	// Mail sends the app's and the links' messages; nil logs them.
	Mail mail.Sender
	// SignIn limits sign-in code requests (its write classes) and code attempts (its
	// read classes) per email address and client address together, and per client
	// address; SignInMail caps the codes mailed to one address (its per-IP class, keyed
	// by the email address). Shared by the app and the access API (signin.go).
	SignIn, SignInMail *ratelimit.Limiter
	// UI renders the participant pages and the web app; SecureCookies says the base URL
	// is https, so session cookies are Secure.
	UI            *webui.UI
	SecureCookies bool
	// AppNotFound and AppNotAllowed answer unknown /app paths and wrong methods with
	// the app's own HTML page instead of the API's JSON (see handleNotFound).
	AppNotFound, AppNotAllowed fasthttp.RequestHandler

	// OnResearch, when set, sees every research call that reaches its operation: the
	// tenancy matrix checks that no surface skipped a step.
	OnResearch func(ResearchPass)

	MetricsReg    *prometheus.Registry
	Metrics       *HTTPMetrics
	MetricsServe  fasthttp.RequestHandler
	MetricsOnMain bool
	HSTS          bool
	Presign       bool
}

// SendMail sends a message off the request path, so a page answers as fast whether or
// not it sent mail (the sign-in page must not tell whether an address has an account).
// Failures are logged: the person can ask for another code.
func (s *Core) SendMail(m mail.Message) {
	if s.Mail == nil {
		s.Log.Warn().Str("subject", m.Subject).Msg("no mail sender configured; message not sent")
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(s.Ctx, time.Minute)
		defer cancel()
		if err := s.Mail.Send(ctx, m); err != nil {
			s.Log.Error().Err(err).Msg("send mail")
		}
	}()
}

// MailWhere says where the app's mail goes: mailSent, mailOutbox or mailLogged.
func (s *Core) MailWhere() string {
	switch {
	case s.Mail == nil:
		return MailLogged
	case mail.KeepsInOutbox(s.Mail):
		return mailOutbox
	}
	return MailSent
}

// Where the app's mail goes, for the pages that would otherwise say it was sent.
const (
	MailSent   = ""       // a mail server takes it
	mailOutbox = "outbox" // no --smtp-url: kept in the outbox (`interviewd mail outbox`) and logged
	MailLogged = "log"    // no sender at all (an embedded server): only logged
)

// isAppPath reports whether path belongs to the app.
func isAppPath(path []byte) bool {
	return bytes.Equal(path, []byte("/app")) || bytes.HasPrefix(path, []byte("/app/"))
}

// kickCreditAlerts asks Maintain to send pending alerts now rather than at the next
// minute; it never blocks the participant's request that spent the credit.
func (s *Core) kickCreditAlerts() {
	select {
	case s.CreditAlerts <- struct{}{}:
	default: // a send is already due
	}
}
