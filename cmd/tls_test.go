package cmd

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/crypto/acme"

	"interviewd/server"
)

// testCert is a self-signed certificate made in the test, for 127.0.0.1, localhost and
// any names given.
type testCert struct {
	certPEM, keyPEM []byte
	x509            *x509.Certificate
	key             *ecdsa.PrivateKey
}

func mustCert(t *testing.T, cn string, names ...string) testCert {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(90 * 24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames: append([]string{"localhost"}, names...), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		BasicConstraintsValid: true, IsCA: true, // self-signed: it is its own root in the client's pool
		SignatureAlgorithm: x509.ECDSAWithSHA256,
	}
	tmpl.KeyUsage |= x509.KeyUsageCertSign
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	parsed, _ := x509.ParseCertificate(der)
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return testCert{
		certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyPEM:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}),
		x509:    parsed, key: key,
	}
}

func (c testCert) write(t *testing.T, certFile, keyFile string) {
	t.Helper()
	// Key first, then certificate, each replaced whole (as certbot's renewal does with
	// its symlinks), so a reload never pairs a new certificate with an old key.
	for _, f := range []struct {
		path string
		data []byte
	}{{keyFile, c.keyPEM}, {certFile, c.certPEM}} {
		tmp := f.path + ".tmp"
		if err := os.WriteFile(tmp, f.data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, f.path); err != nil {
			t.Fatal(err)
		}
	}
}

// freeAddr returns a 127.0.0.1 address nothing listens on right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// bootAt runs serve with args until the test ends and waits until addr accepts
// connections (polling, with a generous deadline).
func bootAt(t *testing.T, addr string, args ...string) *syncBuffer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	logs := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, append([]string{"serve", "--addr", addr}, args...), io.Discard, logs, noEnv)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(60 * time.Second):
			t.Error("server did not stop within 60 s")
		}
	})
	// The start line comes once every listener (redirect, metrics, admin socket) is up.
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		select {
		case err := <-done:
			done <- err
			t.Fatalf("server exited early: %v\n%s", err, logs.String())
		default:
		}
		if strings.Contains(logs.String(), `"message":"listening"`) {
			return logs
		}
		if time.Now().After(deadline) {
			t.Fatalf("server never listened on %s:\n%s", addr, logs.String())
		}
	}
}

func tlsClient(roots ...*x509.Certificate) *http.Client {
	pool := x509.NewCertPool()
	for _, r := range roots {
		pool.AddCert(r)
	}
	return &http.Client{
		Transport:     &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, NextProtos: []string{"h2", "http/1.1"}}, DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       60 * time.Second,
	}
}

// servedCert returns the leaf certificate a fresh TLS handshake with addr presents.
func servedCert(t *testing.T, addr, serverName string) *x509.Certificate {
	t.Helper()
	c, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, ServerName: serverName})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0]
}

// hupMu keeps SIGHUP tests apart: a signal reaches every listener in the process.
var hupMu sync.Mutex

func TestHTTPSFromFiles(t *testing.T) {
	hupMu.Lock()
	defer hupMu.Unlock()
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	first := mustCert(t, "first")
	first.write(t, certFile, keyFile)
	addr, httpAddr := freeAddr(t), freeAddr(t)
	logs := bootAt(t, addr, "--data", filepath.Join(dir, "data"), "--tls-cert", certFile, "--tls-key", keyFile, "--http-addr", httpAddr)
	_, port, _ := net.SplitHostPort(addr)

	t.Run("OK_ServesTLSWithHSTS", func(t *testing.T) {
		resp, err := tlsClient(first.x509).Get("https://" + addr + "/v1/api/openapi.json")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Strict-Transport-Security") != server.HSTSValue {
			t.Fatalf("%d, HSTS %q", resp.StatusCode, resp.Header.Get("Strict-Transport-Security"))
		}
		if resp.TLS == nil || resp.TLS.NegotiatedProtocol != "http/1.1" {
			t.Fatalf("ALPN: %+v", resp.TLS)
		}
	})
	t.Run("ErrPlainHTTPOnTLSPort", func(t *testing.T) {
		resp, err := http.Get("http://" + addr + "/v1/api/openapi.json")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				t.Fatal("the TLS port answered plain HTTP with 200")
			}
		}
	})
	t.Run("OK_PlainHTTPRedirects308", func(t *testing.T) {
		c := tlsClient()
		for _, method := range []string{"GET", "POST"} {
			req, _ := http.NewRequest(method, "http://"+httpAddr+"/v1/api/studies?limit=5&x=%C3%A9", strings.NewReader("{}"))
			req.Host = "interviews.example.com"
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			want := "https://interviews.example.com:" + port + "/v1/api/studies?limit=5&x=%C3%A9"
			if resp.StatusCode != 308 || resp.Header.Get("Location") != want {
				t.Fatalf("%s: %d Location %q, want 308 %q", method, resp.StatusCode, resp.Header.Get("Location"), want)
			}
			if resp.Header.Get("Strict-Transport-Security") != "" {
				t.Fatal("HSTS sent over plain HTTP")
			}
		}
	})
	t.Run("OK_RealSIGHUPReloads", func(t *testing.T) {
		second := mustCert(t, "second")
		second.write(t, certFile, keyFile)
		if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if got := servedCert(t, addr, ""); got.SerialNumber.Cmp(second.x509.SerialNumber) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("still serving the first certificate 60 s after SIGHUP:\n%s", logs.String())
			}
		}
		resp, err := tlsClient(second.x509).Get("https://" + addr + "/v1/api/openapi.json")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if !strings.Contains(logs.String(), "TLS certificate reloaded") {
			t.Fatal("the reload was not logged")
		}
	})
}

// tlsFromFlags builds the TLS side exactly as serve does, from flags.
func tlsFromFlags(t *testing.T, args ...string) (*opsFlags, *tlsSetup, *syncBuffer) {
	t.Helper()
	fs := newFlagSet("serve", noEnv)
	o := addOpsFlags(fs)
	if err := fs.parse(args); err != nil {
		t.Fatal(err)
	}
	if err := o.check(); err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	ts, err := newTLS(o, t.TempDir(), zerolog.New(logs))
	if err != nil {
		t.Fatal(err)
	}
	return o, ts, logs
}

func TestCertReload(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	a, b := mustCert(t, "a"), mustCert(t, "b")
	a.write(t, certFile, keyFile)
	_, ts, logs := tlsFromFlags(t, "--tls-cert", certFile, "--tls-key", keyFile)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", ts.cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _ = c.(*tls.Conn).Handshake(); c.Close() }()
		}
	}()
	addr := ln.Addr().String()
	if got := servedCert(t, addr, ""); got.SerialNumber.Cmp(a.x509.SerialNumber) != 0 {
		t.Fatal("not serving the first certificate")
	}
	b.write(t, certFile, keyFile)
	if err := ts.reload(); err != nil { // what the SIGHUP handler calls
		t.Fatal(err)
	}
	if got := servedCert(t, addr, ""); got.SerialNumber.Cmp(b.x509.SerialNumber) != 0 {
		t.Fatal("reload did not swap the served certificate")
	}
	// A broken file (a half-finished renewal) keeps the certificate in use.
	if err := os.WriteFile(certFile, []byte("-----BEGIN CERTIFICATE-----\ngarbage\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := ts.reload(); err == nil {
		t.Fatal("a broken certificate file was accepted")
	}
	if got := servedCert(t, addr, ""); got.SerialNumber.Cmp(b.x509.SerialNumber) != 0 {
		t.Fatal("a failed reload dropped the working certificate")
	}
	if !strings.Contains(logs.String(), "still serving the previous certificate") {
		t.Fatalf("failed reload not logged: %s", logs.String())
	}
}

func TestHTTPSFlagErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--tls-cert", "x.pem"}, "--tls-cert and --tls-key go together"},
		{[]string{"--tls-cert", "x.pem", "--tls-key", "y.pem", "--acme-domain", "a.example.com"}, "choose one"},
		{[]string{"--acme-email", "a@example.com"}, "need --acme-domain"},
		{[]string{"--acme-domain", "https://a.example.com"}, "want a domain name"},
		{[]string{"--acme-ca-root", "ca.pem"}, "need --acme-domain"},
		{[]string{"--acme-domain", "a.example.com", "--acme-ca-root", filepath.Join(dir, "missing-ca.pem")}, "read --acme-ca-root"},
		{[]string{"--tls-cert", filepath.Join(dir, "missing.pem"), "--tls-key", filepath.Join(dir, "missing.key")}, "load --tls-cert"},
		{[]string{"--backup-dir", dir, "--backup-every", "soon"}, "--backup-every"},
		{[]string{"--backup-dir", dir, "--backup-keep", "0"}, "--backup-keep"},
	} {
		err := Run(context.Background(), append([]string{"serve", "--addr", "127.0.0.1:0", "--data", filepath.Join(dir, "d")}, c.args...), io.Discard, io.Discard, noEnv)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
}

// TestACMEWiring checks what can be checked without a certificate authority: the
// autocert manager caches in DATA/acme, its certificates are what the TLS listener
// serves, its HTTP-01 handler answers on the port-80 listener for the allowed domain
// only, and TLS-ALPN-01 is offered. TestACMEWithPebble gets a certificate from a CA.
func TestACMEWiring(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	cacheDir := filepath.Join(data, "acme")
	if err := os.MkdirAll(cacheDir, 0o700); err != nil {
		t.Fatal(err)
	}
	// A certificate as autocert caches it (private key then chain, under the domain).
	cert := mustCert(t, "interviews.example.test", "interviews.example.test")
	kder, _ := x509.MarshalECPrivateKey(cert.key)
	cached := append(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), cert.certPEM...)
	if err := os.WriteFile(filepath.Join(cacheDir, "interviews.example.test"), cached, 0o600); err != nil {
		t.Fatal(err)
	}
	// An HTTP-01 token as autocert stores it while a CA validates.
	if err := os.WriteFile(filepath.Join(cacheDir, "tok-123+http-01"), []byte("tok-123.key-thumbprint"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr, httpAddr := freeAddr(t), freeAddr(t)
	// The directory URL points nowhere: nothing here may need the CA.
	bootAt(t, addr, "--data", data, "--acme-domain", "interviews.example.test", "--acme-email", "ops@example.test",
		"--acme-directory", "http://127.0.0.1:1/directory", "--http-addr", httpAddr)

	t.Run("OK_ServesCachedCertificate", func(t *testing.T) {
		c := tlsClient(cert.x509)
		c.Transport.(*http.Transport).DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		}
		resp, err := c.Get("https://interviews.example.test/v1/api/openapi.json")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Strict-Transport-Security") == "" {
			t.Fatalf("%d %v", resp.StatusCode, resp.Header)
		}
	})
	t.Run("ErrUnknownHostGetsNoCertificate", func(t *testing.T) {
		c, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, ServerName: "other.example.test"})
		if err == nil {
			c.Close()
			t.Fatal("a certificate was served for a host outside --acme-domain")
		}
	})
	get := func(host, path string) (int, string) {
		req, _ := http.NewRequest("GET", "http://"+httpAddr+path, nil)
		req.Host = host
		resp, err := tlsClient().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b) + resp.Header.Get("Location")
	}
	t.Run("OK_HTTP01OnPort80", func(t *testing.T) {
		if s, body := get("interviews.example.test", "/.well-known/acme-challenge/tok-123"); s != 200 || body != "tok-123.key-thumbprint" {
			t.Fatalf("%d %q", s, body)
		}
		if s, _ := get("other.example.test", "/.well-known/acme-challenge/tok-123"); s != 403 {
			t.Fatalf("challenge for a host outside --acme-domain: %d", s)
		}
	})
	t.Run("OK_OtherPathsRedirect", func(t *testing.T) {
		_, port, _ := net.SplitHostPort(addr)
		if s, loc := get("interviews.example.test", "/i/abc"); s != 308 || loc != "https://interviews.example.test:"+port+"/i/abc" {
			t.Fatalf("%d %q", s, loc)
		}
	})
	t.Run("OK_TLSALPN01Offered", func(t *testing.T) {
		_, ts, _ := tlsFromFlags(t, "--acme-domain", "interviews.example.test")
		if ts.acme == nil || !contains(ts.cfg.NextProtos, acme.ALPNProto) || !contains(ts.cfg.NextProtos, "http/1.1") {
			t.Fatalf("NextProtos %v", ts.cfg.NextProtos)
		}
		if st, err := os.Stat(cacheDir); err != nil || st.Mode().Perm() != 0o700 {
			t.Fatalf("DATA/acme: %v %v", st.Mode(), err)
		}
	})
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// TestHTTPSWithoutPlainHTTP: HTTPS alone opens no plain-HTTP listener, so a normal user
// (who may not bind port 80) can start it on a high port; --http-addr opens one only
// beside HTTPS.
func TestHTTPSWithoutPlainHTTP(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	cert := mustCert(t, "alone")
	cert.write(t, certFile, keyFile)
	// Where this test may bind :80 itself (root, or a lowered unprivileged port start)
	// and nothing else holds it, it checks that the server leaves it free.
	port80Free := false
	if ln, err := net.Listen("tcp", ":80"); err == nil {
		port80Free = true
		ln.Close()
	}
	addr := freeAddr(t)
	logs := bootAt(t, addr, "--data", filepath.Join(dir, "data"), "--tls-cert", certFile, "--tls-key", keyFile)
	resp, err := tlsClient(cert.x509).Get("https://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("healthz over HTTPS: %d", resp.StatusCode)
	}
	if strings.Contains(logs.String(), "redirecting plain HTTP") {
		t.Fatalf("a plain-HTTP listener was opened without --http-addr:\n%s", logs.String())
	}
	if port80Free {
		ln, err := net.Listen("tcp", ":80")
		if err != nil {
			t.Fatalf("port 80 is taken while the server runs: %v", err)
		}
		ln.Close()
	}

	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"ErrHTTPAddrWithoutTLS", []string{"--http-addr", ":80"}, "--http-addr is a plain-HTTP listener beside HTTPS: it needs --tls-cert or --acme-domain"},
		{"ErrHTTPAddrMalformed", []string{"--tls-cert", certFile, "--tls-key", keyFile, "--http-addr", "80"}, `--http-addr "80": want host:port or :port`},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "data")
			err := Run(context.Background(), append([]string{"serve", "--addr", "127.0.0.1:0", "--data", data}, c.args...), io.Discard, io.Discard, noEnv)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
			if _, err := os.Stat(data); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("a refused flag touched the data folder: %v", err)
			}
		})
	}
}
