package server

import (
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"interviewd/kv"
	"interviewd/server/pipeline"
)

func withTrustedProxies(cidrs ...string) serveOption {
	return func(c *Config, _ *kv.Options) {
		for _, s := range cidrs {
			c.TrustedProxies = append(c.TrustedProxies, netip.MustParsePrefix(s))
		}
	}
}

// TestFailedAuthLimitedPerAddress: wrong credentials from one address are answered
// 401 up to the budget, then 429 with Retry-After until the window has room; a valid
// key from that same address is never refused for it, requests without a credential
// are not failures, and another address has its own budget.
func TestFailedAuthLimitedPerAddress(t *testing.T) {
	clock := &testClock{now: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)}
	limits := pipeline.RateLimits{Read: 1000, Write: 1000, OrgRead: 1000, OrgWrite: 1000, IP: 1000, FailedAuth: 3, Window: time.Minute}
	e := mustServe(t, withClock(clock), withRateLimits(limits), withTrustedProxies("127.0.0.1/32"))
	from := func(ip string) []string { return []string{"X-Forwarded-For", ip} }
	wrong := "Bearer jsk_live_" + strings.Repeat("x", 49)
	for i := range 3 {
		if r := e.do("GET", "/v1/api/me", wrong, "", from("192.0.2.1")...); r.status != 401 {
			t.Fatalf("failure %d: %d %s", i+1, r.status, r.body)
		}
	}
	clock.Advance(15 * time.Second)
	r := e.do("GET", "/v1/api/me", wrong, "", from("192.0.2.1")...)
	if r.status != 429 || r.header.Get("Retry-After") != "45" || !strings.Contains(string(r.body), `"code":"rate_limited"`) {
		t.Fatalf("over budget: %d Retry-After %q %s", r.status, r.header.Get("Retry-After"), r.body)
	}
	mcp := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami"}}`
	if r := e.do("POST", "/v1/mcp", wrong, mcp, append(from("192.0.2.1"), "Accept", acceptBoth)...); r.status != 429 {
		t.Fatalf("MCP over budget: %d %s", r.status, r.body)
	}
	t.Run("ValidKeyStillWorks", func(t *testing.T) {
		if r := e.do("GET", "/v1/api/me", "a_live", "", from("192.0.2.1")...); r.status != 200 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		if r := e.do("POST", "/v1/mcp", "a_live", mcp, append(from("192.0.2.1"), "Accept", acceptBoth)...); r.status != 200 {
			t.Fatalf("MCP: %d %s", r.status, r.body)
		}
	})
	t.Run("MissingCredentialIsNotAFailure", func(t *testing.T) {
		if r := e.do("GET", "/v1/api/me", "", "", from("192.0.2.1")...); r.status != 401 || r.header.Get("WWW-Authenticate") == "" {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
	t.Run("OtherAddressHasItsOwnBudget", func(t *testing.T) {
		if r := e.do("GET", "/v1/api/me", wrong, "", from("192.0.2.2")...); r.status != 401 {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
	t.Run("WindowMovesOn", func(t *testing.T) {
		clock.Advance(45 * time.Second)
		if r := e.do("GET", "/v1/api/me", wrong, "", from("192.0.2.1")...); r.status != 401 {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
}

// TestFailedAuthDefault: with the default limits, 30 wrong keys a minute are 401 and
// the 31st is 429.
func TestFailedAuthDefault(t *testing.T) {
	clock := &testClock{now: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)}
	e := mustServe(t, withClock(clock), withRateLimits(pipeline.DefaultRateLimits()))
	wrong := "Bearer jsk_live_" + strings.Repeat("x", 49)
	for i := range 30 {
		if r := e.do("GET", "/v1/api/me", wrong, ""); r.status != 401 {
			t.Fatalf("failure %d: %d %s", i+1, r.status, r.body)
		}
	}
	if r := e.do("GET", "/v1/api/me", wrong, ""); r.status != 429 || r.header.Get("Retry-After") != "60" {
		t.Fatalf("31st: %d Retry-After %q %s", r.status, r.header.Get("Retry-After"), r.body)
	}
	if r := e.do("GET", "/v1/api/me", "a_live", ""); r.status != 200 {
		t.Fatalf("valid key: %d %s", r.status, r.body)
	}
}

// TestForwardedHeadersOnlyFromTrustedProxies: without --trusted-proxies, a client
// cannot pick its own address (and budget) with X-Forwarded-For; behind a trusted
// proxy, each client forwarded has its own participant budget.
func TestForwardedHeadersOnlyFromTrustedProxies(t *testing.T) {
	limits := pipeline.RateLimits{Read: 1000, Write: 1000, OrgRead: 1000, OrgWrite: 1000, IP: 2, FailedAuth: 1000, Window: time.Minute}
	open := func(e *testEnv, token, xff string) int {
		return e.do("POST", "/i/"+token+"/session", "", "", "X-Forwarded-For", xff).status
	}
	t.Run("Untrusted", func(t *testing.T) {
		e := mustServe(t, withRateLimits(limits))
		st := e.mustStudy(e.orgA.ID, kv.EnvTest, "Proxy")
		got := []int{open(e, st.LinkToken, "192.0.2.1"), open(e, st.LinkToken, "192.0.2.2"), open(e, st.LinkToken, "192.0.2.3")}
		if got[0] != 200 || got[1] != 200 || got[2] != 429 {
			t.Fatalf("statuses %v: the forwarded addresses were believed", got)
		}
	})
	t.Run("Trusted", func(t *testing.T) {
		e := mustServe(t, withRateLimits(limits), withTrustedProxies("127.0.0.0/8"))
		st := e.mustStudy(e.orgA.ID, kv.EnvTest, "Proxy")
		for _, xff := range []string{"192.0.2.1", "192.0.2.1", "192.0.2.2", "198.51.100.7, 192.0.2.3", "192.0.2.3"} {
			if s := open(e, st.LinkToken, xff); s != 200 {
				t.Fatalf("X-Forwarded-For %q: %d", xff, s)
			}
		}
		if s := open(e, st.LinkToken, "192.0.2.1"); s != 429 {
			t.Fatalf("third from 192.0.2.1: %d", s)
		}
		// A proxy adds X-Forwarded-For and passes the client's own Forwarded through:
		// X-Forwarded-For wins, so the client cannot escape its spent budget with it.
		if s := e.do("POST", "/i/"+st.LinkToken+"/session", "", "", "Forwarded", `for="[2001:db8::1]:4711";proto=https`, "X-Forwarded-For", "192.0.2.1").status; s != 429 {
			t.Fatalf("client's own Forwarded beside X-Forwarded-For: %d, want 429", s)
		}
		// Forwarded (RFC 7239) alone is read.
		if s := e.do("POST", "/i/"+st.LinkToken+"/session", "", "", "Forwarded", `for="[2001:db8::1]:4711";proto=https`).status; s != 200 {
			t.Fatalf("Forwarded: %d", s)
		}
	})
}

func TestClientIPChain(t *testing.T) {
	proxies, err := pipeline.ParseTrustedProxies("10.0.0.0/8, 192.0.2.7 ,::1")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Core: &pipeline.Core{Proxies: proxies}}
	cases := []struct {
		name, peer, xff, fwd, want string
	}{
		{"UntrustedPeerIgnoresHeaders", "203.0.113.9", "198.51.100.1", "", "203.0.113.9"},
		{"TrustedPeer", "10.1.2.3", "198.51.100.1", "", "198.51.100.1"},
		{"SpoofedLeftmostIgnored", "10.1.2.3", "1.2.3.4, 198.51.100.1, 10.9.9.9", "", "198.51.100.1"},
		{"AllTrustedGivesFarthest", "10.1.2.3", "10.0.0.1, 192.0.2.7", "", "10.0.0.1"},
		{"GarbageStopsWalk", "10.1.2.3", "198.51.100.1, nonsense", "", "10.1.2.3"},
		{"NoHeader", "10.1.2.3", "", "", "10.1.2.3"},
		{"XForwardedForWinsOverForwarded", "::1", "198.51.100.1", `for=198.51.100.2, for="[2001:db8::5]:80"`, "198.51.100.1"},
		{"ForwardedWithoutXForwardedFor", "::1", "", `for=198.51.100.2, for="[2001:db8::5]:80"`, "2001:db8::5"},
		{"PortStripped", "::1", "198.51.100.1:5555", "", "198.51.100.1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := requestFrom(c.peer)
			if c.xff != "" {
				ctx.Request.Header.Set("X-Forwarded-For", c.xff)
			}
			if c.fwd != "" {
				ctx.Request.Header.Set("Forwarded", c.fwd)
			}
			if got := s.ClientIP(ctx).String(); got != c.want {
				t.Fatalf("client %s, want %s", got, c.want)
			}
		})
	}
	for _, bad := range []string{"10.0.0.0/33", "nope", "fe80::1%eth0"} {
		if _, err := pipeline.ParseTrustedProxies(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func requestFrom(peer string) *fasthttp.RequestCtx {
	var ctx fasthttp.RequestCtx
	var req fasthttp.Request
	a := netip.MustParseAddr(peer)
	ctx.Init(&req, &net.TCPAddr{IP: a.AsSlice(), Port: 1}, nil)
	return &ctx
}

func TestClientScheme(t *testing.T) {
	proxies, _ := pipeline.ParseTrustedProxies("10.0.0.0/8")
	s := &Server{Core: &pipeline.Core{Proxies: proxies}}
	trusted, untrusted := requestFrom("10.0.0.1"), requestFrom("203.0.113.1")
	for _, c := range []*fasthttp.RequestCtx{trusted, untrusted} {
		c.Request.Header.Set("X-Forwarded-Proto", "https")
	}
	if s.ClientScheme(trusted) != "https" || s.ClientScheme(untrusted) != "http" {
		t.Fatalf("trusted %s, untrusted %s", s.ClientScheme(trusted), s.ClientScheme(untrusted))
	}
	both := requestFrom("10.0.0.1") // the client's own Forwarded, passed through
	both.Request.Header.Set("Forwarded", "for=192.0.2.1;proto=https")
	both.Request.Header.Set("X-Forwarded-Proto", "http")
	if got := s.ClientScheme(both); got != "http" {
		t.Fatalf("with X-Forwarded-Proto http and Forwarded proto=https: %s", got)
	}
	fwdOnly := requestFrom("10.0.0.1")
	fwdOnly.Request.Header.Set("Forwarded", "for=192.0.2.1;proto=https")
	if got := s.ClientScheme(fwdOnly); got != "https" {
		t.Fatalf("Forwarded alone: %s", got)
	}
}

// TestPerAddressLimitsIPv6By64: both per-address limits count an IPv6 client by its
// /64, which one subscriber holds whole, and an IPv4-mapped address as the IPv4 one.
func TestPerAddressLimitsIPv6By64(t *testing.T) {
	limits := pipeline.RateLimits{Read: 1000, Write: 1000, OrgRead: 1000, OrgWrite: 1000, IP: 2, FailedAuth: 2, Window: time.Hour}
	e := mustServe(t, withRateLimits(limits), withTrustedProxies("127.0.0.0/8"))
	st := e.mustStudy(e.orgA.ID, kv.EnvTest, "Slash64")
	wrong := "Bearer jsk_live_" + strings.Repeat("x", 49)
	for _, c := range []struct{ first, second, over, other string }{
		{"2001:db8:1:2::1", "2001:db8:1:2::2", "2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:3::1"},
		{"::ffff:192.0.2.9", "192.0.2.9", "::ffff:192.0.2.9", "192.0.2.10"},
	} {
		t.Run("Participant/"+c.first, func(t *testing.T) {
			open := func(xff string) int {
				return e.do("POST", "/i/"+st.LinkToken+"/session", "", "", "X-Forwarded-For", xff).status
			}
			if a, b := open(c.first), open(c.second); a != 200 || b != 200 {
				t.Fatalf("first two: %d %d", a, b)
			}
			if s := open(c.over); s != 429 {
				t.Fatalf("third from %s after %s and %s: %d, want 429 (one budget)", c.over, c.first, c.second, s)
			}
			if s := open(c.other); s != 200 {
				t.Fatalf("%s (another network): %d", c.other, s)
			}
		})
		t.Run("FailedAuth/"+c.first, func(t *testing.T) {
			fail := func(xff string) int {
				return e.do("GET", "/v1/api/me", wrong, "", "X-Forwarded-For", xff).status
			}
			if a, b := fail(c.first), fail(c.second); a != 401 || b != 401 {
				t.Fatalf("first two: %d %d", a, b)
			}
			if s := fail(c.over); s != 429 {
				t.Fatalf("third from %s after %s and %s: %d, want 429 (one budget)", c.over, c.first, c.second, s)
			}
			if s := fail(c.other); s != 401 {
				t.Fatalf("%s (another network): %d", c.other, s)
			}
		})
	}
}

// FuzzClientIP: whatever the forwarding headers say, the client address is the peer or
// an address that appears in them, and an untrusted peer is never overridden.
func FuzzClientIP(f *testing.F) {
	f.Add("10.0.0.1", "198.51.100.1, 10.0.0.2", `for=192.0.2.1;proto=https`)
	f.Add("203.0.113.5", "1.2.3.4", "")
	f.Add("10.0.0.1", "", `for="[2001:db8::1]:80", for=unknown`)
	proxies, _ := pipeline.ParseTrustedProxies("10.0.0.0/8")
	s := &Server{Core: &pipeline.Core{Proxies: proxies}}
	f.Fuzz(func(t *testing.T, peer, xff, fwd string) {
		a, err := netip.ParseAddr(peer)
		if err != nil || a.Zone() != "" {
			return
		}
		ctx := requestFrom(a.String())
		ctx.Request.Header.Set("X-Forwarded-For", xff)
		ctx.Request.Header.Set("Forwarded", fwd)
		got := s.ClientIP(ctx)
		if !got.IsValid() {
			t.Fatalf("no client address for peer %s", peer)
		}
		if !pipeline.TrustedProxies(proxies).Trusts(a) && got != a.Unmap() {
			t.Fatalf("untrusted peer %s overridden by %s", a, got)
		}
		if got != a.Unmap() && !strings.Contains(xff+fwd, got.String()) && !strings.Contains(strings.ToLower(xff+fwd), got.String()) {
			// a parsed hop may be spelt differently (leading zeros dropped, IPv4-mapped)
			if _, ok := pipeline.ParseHop(got.String()); !ok {
				t.Fatalf("client %s is neither the peer nor a forwarded hop", got)
			}
		}
		_ = s.ClientScheme(ctx)
	})
}

// FuzzParseTrustedProxies: an accepted list holds only valid, masked prefixes.
func FuzzParseTrustedProxies(f *testing.F) {
	f.Add("10.0.0.0/8,192.0.2.7,::1")
	f.Add(" , 2001:db8::/32 ")
	f.Add("::ffff:10.0.0.1")
	f.Fuzz(func(t *testing.T, s string) {
		got, err := pipeline.ParseTrustedProxies(s)
		if err != nil {
			return
		}
		for _, p := range got {
			if !p.IsValid() || p != p.Masked() {
				t.Fatalf("%q gave %v", s, p)
			}
		}
	})
}
