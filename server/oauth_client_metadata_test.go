package server

import (
	"context"
	"errors"
	"interviewd/server/authz"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// metadataServer serves client metadata documents over TLS on loopback; handle
// answers each request. It counts the requests it got.
type metadataServer struct {
	*httptest.Server
	hits atomic.Int64
}

func newMetadataServer(t *testing.T, handle func(w http.ResponseWriter, r *http.Request, self string)) *metadataServer {
	t.Helper()
	m := &metadataServer{}
	m.Server = httptest.NewUnstartedServer(nil)
	m.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.hits.Add(1)
		handle(w, r, m.URL+r.URL.Path)
	})
	m.StartTLS()
	t.Cleanup(m.Close)
	return m
}

func metadataJSON(id string) string {
	return `{"client_id":"` + id + `","client_name":"Doc client","redirect_uris":["http://127.0.0.1:7777/cb"],` +
		`"grant_types":["authorization_code","refresh_token"],"token_endpoint_auth_method":"none","logo_uri":"https://x.example/l.png"}`
}

// TestClientMetadataSSRF is the fetch's guard table: every address that is not public,
// however it is reached, and every document that breaks the rules, is refused with a
// reason; only the good document on loopback (allowed in this test alone) is accepted.
func TestClientMetadataSSRF(t *testing.T) {
	release := make(chan struct{})
	srv := newMetadataServer(t, func(w http.ResponseWriter, r *http.Request, self string) {
		switch r.URL.Path {
		case "/good", "/cached":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(metadataJSON(self)))
		case "/redirect":
			http.Redirect(w, r, "/good", http.StatusFound)
		case "/big":
			_, _ = w.Write([]byte(`{"client_id":"` + self + `","client_name":"` + strings.Repeat("x", 6000) + `"}`))
		case "/slow":
			w.WriteHeader(200)
			w.(http.Flusher).Flush()
			<-release // never finishes within the fetch's 3 seconds
		case "/other-id":
			_, _ = w.Write([]byte(metadataJSON("https://elsewhere.example/client")))
		case "/secret":
			_, _ = w.Write([]byte(strings.Replace(metadataJSON(self), `"none"`, `"client_secret_basic"`, 1)))
		case "/bidi-name":
			_, _ = w.Write([]byte(strings.Replace(metadataJSON(self), `"Doc client"`, `"Doc \u202Etneilc"`, 1)))
		case "/invalid-utf8-name":
			_, _ = w.Write([]byte(strings.Replace(metadataJSON(self), `"Doc client"`, "\"Doc \xff client\"", 1)))
		case "/http-redirect-uri":
			_, _ = w.Write([]byte(strings.Replace(metadataJSON(self), "http://127.0.0.1:7777/cb", "http://evil.example/cb", 1)))
		default:
			http.NotFound(w, r)
		}
	})
	// After the server's own cleanup is registered, so it runs first: the slow handler
	// lets go before the server waits for it to finish.
	t.Cleanup(func() { close(release) })
	roots := srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	loopbackOK := authz.NewClientMetadata(true, roots)
	guarded := authz.NewClientMetadata(false, roots)
	now := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	port := srv.URL[strings.LastIndexByte(srv.URL, ':'):]

	c, err := loopbackOK.Client(context.Background(), srv.URL+"/good", now)
	if err != nil || c.Name != "Doc client" || !c.Document || !c.Public() || c.ID != srv.URL+"/good" {
		t.Fatalf("good document: %+v %v", c, err)
	}
	for _, tc := range []struct {
		name string
		m    *authz.ClientMetadata
		url  string
		why  string
	}{
		{"ErrLoopback", guarded, srv.URL + "/good", "127.0.0.1, which is not a public address"},
		{"ErrLoopbackByName", guarded, "https://localhost" + port + "/good", "which is not a public address"},
		{"ErrPrivate", guarded, "https://10.1.2.3/client", "10.1.2.3, which is not a public address"},
		{"ErrPrivate192", guarded, "https://192.168.1.1/client", "not a public address"},
		{"ErrLinkLocalMetadataService", guarded, "https://169.254.169.254/latest/meta-data", "169.254.169.254, which is not a public address"},
		{"ErrIPv6Loopback", guarded, "https://[::1]" + port + "/good", "::1, which is not a public address"},
		{"ErrIPv4MappedLoopback", guarded, "https://[::ffff:127.0.0.1]" + port + "/good", "127.0.0.1, which is not a public address"},
		{"ErrUniqueLocalV6", guarded, "https://[fd00::1]/client", "not a public address"},
		{"ErrSharedAddressSpace", guarded, "https://100.64.0.1/client", "not a public address"},
		{"ErrUnspecified", guarded, "https://0.0.0.0" + port + "/good", "not a public address"},
		{"ErrPlainHTTP", loopbackOK, "http://127.0.0.1" + port + "/good", "must use https"},
		{"ErrNoPath", loopbackOK, srv.URL, "must have a path"},
		{"ErrRedirect", loopbackOK, srv.URL + "/redirect", "redirects"},
		{"ErrOversize", loopbackOK, srv.URL + "/big", "larger than 5 KB"},
		{"ErrSlow", loopbackOK, srv.URL + "/slow", "longer than 3 seconds"},
		{"ErrNotFound", loopbackOK, srv.URL + "/missing", "HTTP 404"},
		{"ErrOtherClientID", loopbackOK, srv.URL + "/other-id", "not the URL it is served at"},
		{"ErrConfidential", loopbackOK, srv.URL + "/secret", "only public clients"},
		{"ErrBadRedirectURI", loopbackOK, srv.URL + "/http-redirect-uri", "loopback host"},
		{"ErrBidiName", loopbackOK, srv.URL + "/bidi-name", "client_name must not contain bidirectional formatting characters (here U+202E)"},
		{"ErrInvalidUTF8Name", loopbackOK, srv.URL + "/invalid-utf8-name", "client_name should be valid UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.m.Client(context.Background(), tc.url, now)
			var oe *authz.OAuthError
			if !errors.As(err, &oe) || oe.Code != "invalid_client" || !strings.Contains(oe.Description, tc.why) {
				t.Fatalf("got %v, want invalid_client saying %q", err, tc.why)
			}
		})
	}
	t.Run("OK_Cached", func(t *testing.T) {
		before := srv.hits.Load()
		for range 3 {
			if _, err := loopbackOK.Client(context.Background(), srv.URL+"/cached", now); err != nil {
				t.Fatal(err)
			}
		}
		if got := srv.hits.Load() - before; got != 1 {
			t.Fatalf("%d fetches for three uses within the cache's life", got)
		}
		if _, err := loopbackOK.Client(context.Background(), srv.URL+"/cached", now.Add(authz.MetadataTTL)); err != nil || srv.hits.Load()-before != 2 {
			t.Fatalf("not fetched again after %v: %v", authz.MetadataTTL, err)
		}
	})
}

// TestPublicAddr: the guard's notion of a public address.
func TestPublicAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"93.184.216.34": true, "2606:2800:220:1::1": true, "8.8.8.8": true,
		"127.0.0.1": false, "10.0.0.1": false, "172.16.5.4": false, "192.168.0.1": false, "169.254.1.1": false,
		"100.100.100.100": false, "0.0.0.0": false, "224.0.0.1": false, "255.255.255.255": false,
		"::1": false, "::": false, "fe80::1": false, "fc00::1": false, "ff02::1": false, "64:ff9b::a00:1": false,
		"::7f00:1": false, "64:ff9b:1::a00:1": false, "2002:c0a8:101::1": false, "fec0::1": false, "2002:5db8:d822::1": false,
	} {
		if got := authz.PublicAddr(netip.MustParseAddr(addr)); got != want {
			t.Errorf("%s: public %v, want %v", addr, got, want)
		}
	}
}
