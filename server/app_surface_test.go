package server

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"interviewd/kv"
	"interviewd/mail"
	"interviewd/mail/smtptest"
	"interviewd/server/app"
	"interviewd/server/pipeline"
)

// appBrowserless is a signed-out browser as plain HTTP: its pre-session cookie.
type appBrowserless struct {
	e   *testEnv
	pre string
	ip  string // X-Forwarded-For, honoured only from trusted proxies (none here)
}

var preCookie = regexp.MustCompile(app.PreCookie + `=([A-Za-z0-9_-]+)`)

// newSignedOut fetches the sign-in page and keeps the pre-session token it sets.
func newSignedOut(e *testEnv) *appBrowserless {
	e.t.Helper()
	r := e.appDo("GET", "/app/signin", nil, nil, false)
	m := preCookie.FindStringSubmatch(r.header.Get("Set-Cookie"))
	if r.status != 200 || m == nil {
		e.t.Fatalf("sign-in page: %d, Set-Cookie %q", r.status, r.header.Get("Set-Cookie"))
	}
	if !bytes.Contains(r.body, []byte(`name="csrf" value="`+m[1]+`"`)) {
		e.t.Fatal("the sign-in form does not carry the pre-session token")
	}
	return &appBrowserless{e: e, pre: m[1]}
}

// post sends a sign-in form with the pre-session cookie and token.
func (b *appBrowserless) post(path string, form url.Values) response {
	b.e.t.Helper()
	form.Set("csrf", b.pre)
	req, err := http.NewRequest("POST", b.e.url+path, strings.NewReader(form.Encode()))
	if err != nil {
		b.e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(&http.Cookie{Name: app.PreCookie, Value: b.pre})
	if b.ip != "" {
		req.Header.Set("X-Forwarded-For", b.ip)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		b.e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, header: resp.Header, body: raw}
}

func TestAppHeaders(t *testing.T) {
	e := mustServe(t)
	owner := e.mustAppSession("a@example.com", e.orgA.ID, "live")
	for _, c := range []struct {
		name string
		as   *appUser
		path string
	}{{"SignInPage", nil, "/app/signin"}, {"SettingsPage", &owner, "/app/settings/developer"}, {"ErrorPage", &owner, "/app/settings/developer/keys/x/revoke"}} {
		t.Run(c.name, func(t *testing.T) {
			method := "GET"
			if strings.HasSuffix(c.path, "/revoke") {
				method = "POST"
			}
			r := e.appDo(method, c.path, c.as, nil, true)
			if c.name == "ErrorPage" && r.status != 404 {
				t.Fatalf("status %d", r.status)
			}
			h := r.header
			csp := h.Get("Content-Security-Policy")
			for _, want := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:", "frame-ancestors 'none'", "form-action 'self'"} {
				if !strings.Contains(csp, want) {
					t.Fatalf("CSP %q lacks %q", csp, want)
				}
			}
			if strings.Contains(csp, "unsafe-inline") {
				t.Fatalf("CSP allows inline code: %q", csp)
			}
			if h.Get("Cache-Control") != "no-store" || h.Get("X-Frame-Options") != "DENY" || h.Get("X-Content-Type-Options") != "nosniff" {
				t.Fatalf("headers %v", h)
			}
			if !strings.HasPrefix(h.Get("Content-Type"), "text/html") {
				t.Fatalf("Content-Type %q", h.Get("Content-Type"))
			}
			// No inline script or style anywhere in the page.
			for _, bad := range []string{"<script>", "style=", "<style", "onclick="} {
				if bytes.Contains(r.body, []byte(bad)) {
					t.Fatalf("page has inline %q", bad)
				}
			}
		})
	}
	t.Run("PreCookie", func(t *testing.T) {
		r := e.appDo("GET", "/app/signin", nil, nil, false)
		ck := r.header.Get("Set-Cookie")
		if !strings.Contains(ck, "HttpOnly") || !strings.Contains(ck, "SameSite=Lax") || strings.Contains(ck, "Secure") {
			t.Fatalf("pre-session cookie %q (http base URL: HttpOnly, Lax, not Secure)", ck)
		}
	})
}

func TestAppRoot(t *testing.T) {
	e := mustServe(t)
	r := e.appDo("GET", "/", nil, nil, false)
	if r.status != 303 || r.header.Get("Location") != "/app/signin" {
		t.Fatalf("signed out: %d %q", r.status, r.header.Get("Location"))
	}
	owner := e.mustAppSession("a@example.com", e.orgA.ID, "live")
	r = e.appDo("GET", "/", &owner, nil, false)
	if r.status != 303 || r.header.Get("Location") != "/app" {
		t.Fatalf("signed in: %d %q", r.status, r.header.Get("Location"))
	}
	r = e.appDo("GET", "/app", &owner, nil, false)
	if r.status != 303 || r.header.Get("Location") != "/app/settings/developer" && r.header.Get("Location") != "/app/studies" {
		t.Fatalf("/app: %d %q", r.status, r.header.Get("Location"))
	}
	// Signed in without a workspace: choose one first, then come back.
	bare := e.mustAppSession("a@example.com", [16]byte{}, "")
	r = e.appDo("GET", "/app/settings/members", &bare, nil, false)
	if r.status != 303 || r.header.Get("Location") != "/app/workspace?next=%2Fapp%2Fsettings%2Fmembers" {
		t.Fatalf("no workspace: %d %q", r.status, r.header.Get("Location"))
	}
}

// mustServeMail is mustServe with mail to a real SMTP server.
func mustServeMail(t *testing.T, opts ...serveOption) (*testEnv, *smtptest.Server) {
	t.Helper()
	srv := smtptest.Start(t)
	sender, err := mail.New(mail.Config{URL: srv.URL, BaseURL: testBaseURL}, nil, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	return mustServe(t, append(opts, withMail(sender))...), srv
}

var appLinkIn = regexp.MustCompile(regexp.QuoteMeta(testBaseURL) + `/app/[^\s)]*`)

var emailEcho = regexp.MustCompile(`[a-z.]+@[a-z.]*example\.com`)

// TestAppSignInDoesNotTell: the pages answer an unknown address exactly as a known
// one, mail goes only to the known one, and a wrong code reads the same for both.
func TestAppSignInDoesNotTell(t *testing.T) {
	e, smtp := mustServeMail(t)
	b := newSignedOut(e)
	known := b.post("/app/signin", url.Values{"email": {"a@example.com"}})
	unknown := b.post("/app/signin", url.Values{"email": {"nobody@example.com"}})
	if known.status != 200 || unknown.status != 200 {
		t.Fatalf("code requests: %d, %d", known.status, unknown.status)
	}
	if k, u := emailEcho.ReplaceAll(known.body, nil), emailEcho.ReplaceAll(unknown.body, nil); !bytes.Equal(k, u) {
		t.Fatal("the code page differs between a known and an unknown address")
	}
	msg := smtp.Next(t, "a@example.com")
	code := msg.Code()
	// The page the message points at is the sign-in page.
	link := appLinkIn.FindString(msg.Text)
	if link == "" {
		t.Fatalf("the code's message names no page of the app: %q", msg.Text)
	}
	if r := e.appDo("GET", strings.TrimPrefix(link, testBaseURL), nil, nil, false); r.status != 200 {
		t.Fatalf("the message's link %s: %d", link, r.status)
	}
	// A later code for the known address proves the unknown one's request was handled
	// before it; nothing was ever sent to the unknown address.
	b.post("/app/signin", url.Values{"email": {"a@example.com"}})
	code = smtp.Next(t, "a@example.com").Code()
	for _, m := range smtp.Messages() {
		if strings.Contains(strings.Join(m.To, ","), "nobody@") {
			t.Fatal("mail was sent to an address with no account")
		}
	}
	wrong := code[:5] + string('0'+(code[5]-'0'+1)%10)
	k := b.post("/app/signin/code", url.Values{"email": {"a@example.com"}, "code": {wrong}})
	u := b.post("/app/signin/code", url.Values{"email": {"nobody@example.com"}, "code": {wrong}})
	if k.status != 401 || u.status != 401 {
		t.Fatalf("wrong codes: %d, %d", k.status, u.status)
	}
	if kb, ub := emailEcho.ReplaceAll(k.body, nil), emailEcho.ReplaceAll(u.body, nil); !bytes.Equal(kb, ub) {
		t.Fatal("a wrong code reads differently for a known and an unknown address")
	}
	// a@example.com has one workspace, so goes straight back to where they were going.
	ok := b.post("/app/signin/code", url.Values{"email": {"a@example.com"}, "code": {code}, "next": {"/app/settings/members"}})
	if ok.status != 303 || ok.header.Get("Location") != "/app/settings/members" {
		t.Fatalf("right code: %d %q", ok.status, ok.header.Get("Location"))
	}
	ck := ok.header.Get("Set-Cookie")
	if !strings.Contains(ck, app.SessionCookie+"=ivs_") || !strings.Contains(ck, "HttpOnly") || !strings.Contains(ck, "SameSite=Lax") || !strings.Contains(strings.ToLower(ck), "max-age=1209600") {
		t.Fatalf("session cookie %q", ck)
	}
}

// TestAppSignInRateLimit: code requests and code attempts are limited per email and
// client address together and per client address, with Retry-After; a refused request
// sends no mail; each 429 is counted under the app surface and the server lives on.
func TestAppSignInRateLimit(t *testing.T) {
	e, smtp := mustServeMail(t, withRateLimits(pipeline.DefaultRateLimits()), withMetrics(prometheus.NewRegistry(), false))
	b := newSignedOut(e)
	for i := range pipeline.SignInRequestsPerClient {
		if r := b.post("/app/signin", url.Values{"email": {"a@example.com"}}); r.status != 200 {
			t.Fatalf("request %d: %d", i+1, r.status)
		}
	}
	for range pipeline.SignInRequestsPerClient {
		smtp.Next(t, "a@example.com")
	}
	r := b.post("/app/signin", url.Values{"email": {"a@example.com"}})
	if r.status != 429 || r.header.Get("Retry-After") == "" || !bytes.Contains(r.body, []byte("Too many sign-in attempts")) {
		t.Fatalf("request %d for one address: %d Retry-After %q", pipeline.SignInRequestsPerClient+1, r.status, r.header.Get("Retry-After"))
	}
	// Code attempts have their own allowance.
	for i := range pipeline.SignInAttemptsPerClient {
		if r := b.post("/app/signin/code", url.Values{"email": {"a@example.com"}, "code": {"000000"}}); r.status != 401 {
			t.Fatalf("code attempt %d: %d", i+1, r.status)
		}
	}
	if r := b.post("/app/signin/code", url.Values{"email": {"a@example.com"}, "code": {"000000"}}); r.status != 429 {
		t.Fatalf("code attempt %d: %d, want 429", pipeline.SignInAttemptsPerClient+1, r.status)
	}
	// Other addresses from the same client, up to the client's own limit.
	n := pipeline.SignInRequestsPerClient // requests this client has made (refused ones count for nothing)
	for i := 0; n < pipeline.SignInPerAddr; i++ {
		email := "someone" + string(rune('a'+i%26)) + string(rune('a'+i/26)) + "@example.com"
		if r := b.post("/app/signin", url.Values{"email": {email}}); r.status != 200 {
			t.Fatalf("client request %d: %d", n+1, r.status)
		}
		n++
	}
	if r := b.post("/app/signin", url.Values{"email": {"fresh@example.com"}}); r.status != 429 {
		t.Fatalf("client request %d: %d, want 429", n+1, r.status)
	}
	if got := len(smtp.Messages()); got != pipeline.SignInRequestsPerClient {
		t.Fatalf("%d messages sent, want %d (refused requests send nothing)", got, pipeline.SignInRequestsPerClient)
	}
	// Every refusal above is counted under the app surface, and the server still answers.
	if got := e.scrape()[`interviewd_rate_limit_refusals_total{surface="app"}`]; got != 3 {
		t.Fatalf("app refusals counted %v, want 3", got)
	}
}

// TestAppSignInStrangerCannotVoidCode: someone elsewhere asking for codes for your
// address and typing wrong ones until they are refused neither replaces nor spends the
// code you hold, and uses up none of your allowance; the mail one address receives has
// its own cap.
func TestAppSignInStrangerCannotVoidCode(t *testing.T) {
	e, smtp := mustServeMail(t, withRateLimits(pipeline.DefaultRateLimits()), withTrustedProxies("127.0.0.0/8"))
	owner := newSignedOut(e)
	owner.ip = "192.0.2.10"
	if r := owner.post("/app/signin", url.Values{"email": {"a@example.com"}}); r.status != 200 {
		t.Fatalf("owner's request: %d", r.status)
	}
	code := smtp.Next(t, "a@example.com").Code()
	stranger := newSignedOut(e)
	stranger.ip = "198.51.100.7"
	for i := 0; ; i++ {
		r := stranger.post("/app/signin", url.Values{"email": {"a@example.com"}})
		if r.status == 429 {
			break
		}
		if r.status != 200 || i > pipeline.SignInRequestsPerClient {
			t.Fatalf("stranger's request %d: %d", i+1, r.status)
		}
		smtp.Next(t, "a@example.com")
	}
	for i := 0; ; i++ {
		r := stranger.post("/app/signin/code", url.Values{"email": {"a@example.com"}, "code": {code[:5] + string('0'+(code[5]-'0'+1)%10)}})
		if r.status == 429 {
			break
		}
		if r.status != 401 || i > pipeline.SignInAttemptsPerClient {
			t.Fatalf("stranger's attempt %d: %d", i+1, r.status)
		}
	}
	// Even the right code fails from the stranger's browser: it was not theirs.
	if r := stranger.post("/app/signin/code", url.Values{"email": {"a@example.com"}, "code": {code}}); r.status != 429 {
		t.Fatalf("the stranger's browser, over its limit: %d", r.status)
	}
	other := newSignedOut(e)
	other.ip = "203.0.113.5"
	if r := other.post("/app/signin/code", url.Values{"email": {"a@example.com"}, "code": {code}}); r.status != 401 {
		t.Fatalf("the owner's code from another browser: %d, want 401", r.status)
	}
	if r := owner.post("/app/signin/code", url.Values{"email": {"a@example.com"}, "code": {code}}); r.status != 303 {
		t.Fatalf("the owner's code after a stranger's tries: %d, want 303", r.status)
	}
	// The mail cap: from enough client addresses, one address gets at most
	// pipeline.SignInMailPerEmail codes in a window.
	sent := len(smtp.Messages())
	for i := 0; sent < pipeline.SignInMailPerEmail; i++ {
		c := newSignedOut(e)
		c.ip = "203.0.113." + strconv.Itoa(10+i)
		for j := 0; j < pipeline.SignInRequestsPerClient && sent < pipeline.SignInMailPerEmail; j++ {
			if r := c.post("/app/signin", url.Values{"email": {"a@example.com"}}); r.status != 200 {
				t.Fatalf("request with %d sent: %d", sent, r.status)
			}
			sent++
		}
	}
	c := newSignedOut(e)
	c.ip = "203.0.113.200"
	if r := c.post("/app/signin", url.Values{"email": {"a@example.com"}}); r.status != 429 {
		t.Fatalf("code %d for one address: %d, want 429", pipeline.SignInMailPerEmail+1, r.status)
	}
}

func TestSafeNext(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"/app/settings/members", "/app/settings/members"},
		{"/app", "/app"},
		{"/app/interviews/0194?x=1", "/app/interviews/0194?x=1"},
		{"", ""},
		{"/application", ""},
		{"https://evil.example/app", ""},
		{"//evil.example/app", ""},
		{"/app\\..\\evil", ""},
		{"/\\evil.example", ""},
		{"/app/\r\nLocation: x", ""},
		{"javascript:alert(1)", ""},
		{"/v1/api/me", ""},
	} {
		if got := app.SafeNext(c.in); got != c.want {
			t.Errorf("safeNext(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// FuzzSafeNext: whatever a link carries, a return path stays inside the app.
func FuzzSafeNext(f *testing.F) {
	for _, s := range []string{"/app/x", "//x", "/app/../x", "/app%2F..", "http://x/app", "/app?next=//x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := app.SafeNext(s)
		if got == "" {
			return
		}
		u, err := url.Parse(got)
		if err != nil || u.Scheme != "" || u.Host != "" || strings.HasPrefix(got, "//") || strings.ContainsAny(got, "\\\r\n") {
			t.Fatalf("safeNext(%q) = %q leaves the app", s, got)
		}
		if u.Path != "/app" && !strings.HasPrefix(u.Path, "/app/") {
			t.Fatalf("safeNext(%q) = %q is outside /app", s, got)
		}
	})
}

// FuzzTOTPSetupOf: the set-up address a confirm form posts back is only ever shown
// again when it is an otpauth address with a secret.
func FuzzTOTPSetupOf(f *testing.F) {
	f.Add("otpauth://totp/interviewd:a%40example.com?secret=JBSWY3DPEHPK3PXP&issuer=interviewd")
	f.Add("javascript:alert(1)")
	f.Add("otpauth://x?secret=")
	f.Fuzz(func(t *testing.T, s string) {
		setup, ok := app.TOTPSetupOf(s)
		if !ok {
			return
		}
		if !strings.HasPrefix(s, "otpauth:") || setup.Secret == "" || !strings.HasPrefix(string(setup.QR), "data:image/png;base64,") {
			t.Fatalf("totpSetupOf(%q) accepted %+v", s, setup)
		}
	})
}

// TestAppNotFound: unknown app paths and wrong methods get the app's HTML pages; the
// API keeps its JSON.
func TestAppNotFound(t *testing.T) {
	e := mustServe(t)
	owner := e.mustAppSession("a@example.com", e.orgA.ID, "live")
	for _, c := range []struct {
		name, method, path string
		as                 *appUser
		status             int
		want               string
	}{
		{"UnknownSignedOut", "GET", "/app/nope", nil, 404, "Not found"},
		{"UnknownSignedIn", "GET", "/app/settings/nope", &owner, 404, "Not found"},
		{"WrongMethod", "GET", "/app/settings/developer/keys", &owner, 405, "cannot be opened that way"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.appDo(c.method, c.path, c.as, nil, false)
			if r.status != c.status || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") || !bytes.Contains(r.body, []byte(c.want)) {
				t.Fatalf("%d %s %.200s", r.status, r.header.Get("Content-Type"), r.body)
			}
			if r.header.Get("Content-Security-Policy") == "" {
				t.Fatal("no CSP on the app's error page")
			}
		})
	}
	if r := e.do("GET", "/v1/api/nope", "", ""); r.status != 404 || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		t.Fatalf("API 404: %d %s", r.status, r.header.Get("Content-Type"))
	}
}

// TestAppRequireMFA: once an admin requires two-step, a session that has not passed it
// is sent to the check on every page, and keys cannot be created from it.
func TestAppRequireMFA(t *testing.T) {
	e, smtp := mustServeMail(t)
	e.acceptEmailCodes(e.orgA.ID, "a@example.com") // for the member with no authenticator
	e.mustMember(e.orgA.ID, "member@a.example", "member")
	member := e.mustAppSession("member@a.example", e.orgA.ID, "live")
	owner := e.mustAppSession("a@example.com", e.orgA.ID, "live")

	if r := e.appDo("POST", "/app/settings/security/require-mfa", &member, url.Values{"require_mfa": {"on"}}, true); r.status != 403 {
		t.Fatalf("a member setting the policy: %d", r.status)
	}
	r := e.appDo("POST", "/app/settings/security/require-mfa", &owner, url.Values{"require_mfa": {"on"}}, true)
	if r.status != 303 || r.header.Get("Location") != "/app/settings/security?done=policy_saved" {
		t.Fatalf("owner setting the policy: %d %q", r.status, r.header.Get("Location"))
	}
	r = e.appDo("GET", "/app/settings/developer", &member, nil, false)
	if r.status != 303 || r.header.Get("Location") != "/app/twostep?next=%2Fapp%2Fsettings%2Fdeveloper" {
		t.Fatalf("member after the policy: %d %q", r.status, r.header.Get("Location"))
	}
	r = e.appDo("POST", "/app/settings/developer/keys", &member, url.Values{"name": {"k"}, "environment": {"live"}, "scopes": {"studies:read"}}, true)
	if r.status != 303 || !strings.HasPrefix(r.header.Get("Location"), "/app/twostep") {
		t.Fatalf("member creating a key before two-step: %d %q", r.status, r.header.Get("Location"))
	}
	// The member has no authenticator: the check offers the email code.
	r = e.appDo("GET", "/app/twostep", &member, nil, false)
	if r.status != 200 || !bytes.Contains(r.body, []byte(`action="/app/twostep/email"`)) || !bytes.Contains(r.body, []byte("requires a second step")) {
		t.Fatalf("two-step page: %d %.300s", r.status, r.body)
	}
	if r = e.appDo("POST", "/app/twostep/email", &member, nil, true); r.status != 200 {
		t.Fatalf("email code request: %d", r.status)
	}
	code := smtp.Next(t, "member@a.example").Code()
	r = e.appDo("POST", "/app/twostep", &member, url.Values{"method": {"email"}, "code": {code}}, true)
	if r.status != 303 || r.header.Get("Location") != "/app" {
		t.Fatalf("passing two-step: %d %q", r.status, r.header.Get("Location"))
	}
	m := regexp.MustCompile(app.SessionCookie + `=(ivs_[A-Za-z0-9]+)`).FindStringSubmatch(r.header.Get("Set-Cookie"))
	if m == nil || m[1] == member.token {
		t.Fatalf("the session was not rotated: %q", r.header.Get("Set-Cookie"))
	}
	if r := e.appDo("GET", "/app/settings/developer", &member, nil, false); r.status != 303 {
		t.Fatalf("the old token after rotation: %d, want a sign-in redirect", r.status)
	}
	passed := member
	passed.token = m[1]
	// The rotated session has its own CSRF secret, which its pages carry.
	page := e.appDo("GET", "/app/settings/developer", &passed, nil, false)
	tok := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindSubmatch(page.body)
	if page.status != 200 || tok == nil {
		t.Fatalf("developer page after two-step: %d", page.status)
	}
	if string(tok[1]) == member.csrf {
		t.Fatal("the CSRF secret survived the session's rotation")
	}
	passed.csrf = string(tok[1])
	r = e.appDo("POST", "/app/settings/developer/keys", &passed, url.Values{"name": {"k"}, "environment": {"live"}, "scopes": {"studies:read"}}, true)
	if r.status != 201 || !bytes.Contains(r.body, []byte("jsk_live_")) {
		t.Fatalf("creating a key after two-step: %d %s", r.status, regexp.MustCompile(`(?s)<main.*</main>`).Find(r.body))
	}
	// A member's key may not carry export:read, whatever the form says.
	r = e.appDo("POST", "/app/settings/developer/keys", &passed, url.Values{"name": {"k2"}, "environment": {"live"}, "scopes": {"export:read"}}, true)
	if r.status != 403 || !bytes.Contains(r.body, []byte("export:read")) {
		t.Fatalf("a member's key with export:read: %d %.300s", r.status, r.body)
	}
}

// TestAppSecureCookie: under an https base URL the session cookie is Secure.
func TestAppSecureCookie(t *testing.T) {
	e, smtp := mustServeMail(t, func(c *Config, _ *kv.Options) { c.BaseURL = "https://interviewd.test" })
	b := newSignedOut(e)
	b.post("/app/signin", url.Values{"email": {"a@example.com"}})
	r := b.post("/app/signin/code", url.Values{"email": {"a@example.com"}, "code": {smtp.Next(t, "a@example.com").Code()}})
	if ck := r.header.Get("Set-Cookie"); r.status != 303 || !strings.Contains(ck, "secure") && !strings.Contains(ck, "Secure") {
		t.Fatalf("session cookie under https: %d %q", r.status, ck)
	}
}

// TestAppPrincipal: a session's principal holds the research scopes of the role in the
// chosen organisation and environment (a member never goes live; agent:run is for API
// keys only) and carries the role itself.
func TestAppPrincipal(t *testing.T) {
	all := []string{"export:read", "links:read", "links:write", "studies:golive", "studies:read", "studies:write"}
	for _, c := range []struct {
		role kv.Role
		want []string
	}{
		{kv.RoleOwner, all},
		{kv.RoleAdmin, all},
		// A researcher and a viewer read transcripts and findings in the app
		// (export:read); exports stay with owners and admins (roleAllows).
		{kv.RoleMember, []string{"export:read", "links:read", "links:write", "studies:read", "studies:write"}},
		{kv.RoleViewer, []string{"export:read", "links:read", "studies:read"}},
	} {
		org, sess := kv.NewV4(), kv.NewV4()
		p := pipeline.AppPrincipal(kv.SessionAuth{Session: kv.Session{ID: sess, Environment: kv.EnvTest}, Org: kv.Org{ID: org, Name: "O"}, Role: c.role})
		if strings.Join(p.Scopes, " ") != strings.Join(c.want, " ") {
			t.Errorf("%s: scopes %v, want %v", c.role, p.Scopes, c.want)
		}
		if p.Has(kv.ScopeAgentRun) || p.Partition != (kv.Partition{Org: org, Env: kv.EnvTest}) || p.CredentialType != "session" {
			t.Errorf("%s: principal %+v", c.role, p)
		}
		if c.role == kv.RoleMember && (p.Require(kv.ScopeStudiesGoLive) == nil || p.MayExport() || p.MayChangeMode()) {
			t.Errorf("a member's principal passes golive, exports or mode changes")
		}
		if p.Role != c.role {
			t.Errorf("%s: principal carries role %q", c.role, p.Role)
		}
	}
}

// TestAppEmailFallback: a user with an authenticator may refuse codes by email; the
// two-step check then offers none.
func TestAppEmailFallback(t *testing.T) {
	e := mustServe(t)
	owner := e.mustAppSession("a@example.com", e.orgA.ID, "live")
	ctx := context.Background()
	setup, err := e.db.BeginTOTP(ctx, owner.token)
	if err != nil {
		t.Fatal(err)
	}
	secret, _ := url.Parse(setup.URL)
	code, err := totp.GenerateCode(secret.Query().Get("secret"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.ConfirmTOTP(ctx, owner.token, code); err != nil {
		t.Fatal(err)
	}
	r := e.appDo("GET", "/app/settings/security", &owner, nil, false)
	if !bytes.Contains(r.body, []byte(`name="email_fallback" value="on" checked`)) {
		t.Fatalf("the fallback is not shown as on: %d", r.status)
	}
	r = e.appDo("POST", "/app/settings/security/email-fallback", &owner, url.Values{}, true)
	if r.status != 303 || r.header.Get("Location") != "/app/settings/security?done=fallback_off" {
		t.Fatalf("turning the fallback off: %d %q", r.status, r.header.Get("Location"))
	}
	again := e.mustAppSessionDue("a@example.com")
	if r := e.appDo("POST", "/app/twostep/email", &again, nil, true); r.status != 403 || !bytes.Contains(r.body, []byte("form-errors")) {
		t.Fatalf("an email code with the fallback off: %d", r.status)
	}
}

// mustAppSessionDue signs email in through the store and stops before two-step.
func (e *testEnv) mustAppSessionDue(email string) appUser {
	e.t.Helper()
	ctx := context.Background()
	code, err := e.db.RequestSignInCode(ctx, email, "")
	if err != nil {
		e.t.Fatal(err)
	}
	start, err := e.db.SignIn(ctx, kv.SignInInput{Email: email, Code: code.Code})
	if err != nil {
		e.t.Fatal(err)
	}
	return appUser{email: email, token: start.Token, csrf: start.Session.CSRF, user: start.User.ID}
}
