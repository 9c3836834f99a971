package cmd

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	stdlog "log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/crypto/acme"
	"golang.org/x/crypto/acme/autocert"
)

// HTTPS is served by the binary itself, as Caddy does: from certificate files that are
// re-read on SIGHUP (so a renewal by certbot or similar needs no restart), or from
// certificates obtained and renewed automatically over ACME (Let's Encrypt by default)
// and cached in DATA/acme/. Either way, when --http-addr names one (such as :80, which
// only a privileged process may bind, so it is never the default), a plain-HTTP listener
// answers every request with a 308 to the same URL over HTTPS, and serves ACME's
// HTTP-01 challenges.

// certReloader serves the certificate files' current contents: GetCertificate reads an
// atomically swapped pointer, so a reload never blocks or tears a handshake.
type certReloader struct {
	certFile, keyFile string
	cur               atomic.Pointer[tls.Certificate]
}

func newCertReloader(certFile, keyFile string) (*certReloader, error) {
	r := &certReloader{certFile: certFile, keyFile: keyFile}
	if err := r.reload(); err != nil {
		return nil, err
	}
	return r, nil
}

// reload reads the files again; on any error the certificate in use stays.
func (r *certReloader) reload() error {
	c, err := tls.LoadX509KeyPair(r.certFile, r.keyFile)
	if err != nil {
		return fmt.Errorf("load --tls-cert %s / --tls-key %s: %w", r.certFile, r.keyFile, err)
	}
	if c.Leaf == nil {
		if c.Leaf, err = x509.ParseCertificate(c.Certificate[0]); err != nil {
			return fmt.Errorf("parse --tls-cert %s: %w", r.certFile, err)
		}
	}
	r.cur.Store(&c)
	return nil
}

func (r *certReloader) getCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return r.cur.Load(), nil
}

// tlsSetup is the HTTPS side of serve once its flags are checked.
type tlsSetup struct {
	cfg      *tls.Config
	reloader *certReloader      // file certificates
	acme     *autocert.Manager  // automatic certificates
	hup      chan os.Signal     // SIGHUP, for file certificates
	http     *http.Server       // the --http-addr redirect and HTTP-01 listener
	httpLn   net.Listener       //
	log      zerolog.Logger     //
	httpDone chan struct{}      // closed when the --http-addr server has returned
	reloaded func(error)        // metrics hook
	cancel   context.CancelFunc // stops the SIGHUP loop
}

// newTLS builds the TLS configuration from the flags: files, ACME, or nil for plain HTTP.
func newTLS(o *opsFlags, dataDir string, log zerolog.Logger) (*tlsSetup, error) {
	t := &tlsSetup{log: log}
	base := &tls.Config{MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}}
	switch {
	case *o.tlsCert != "":
		r, err := newCertReloader(*o.tlsCert, *o.tlsKey)
		if err != nil {
			return nil, err
		}
		t.reloader, base.GetCertificate = r, r.getCertificate
	case *o.acmeDomain != "":
		dir := filepath.Join(dataDir, "acme")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("create %s: %w", dir, err)
		}
		m := &autocert.Manager{
			Prompt:     autocert.AcceptTOS,
			Cache:      autocert.DirCache(dir),
			HostPolicy: autocert.HostWhitelist(o.domains()...),
			Email:      *o.acmeEmail,
		}
		if *o.acmeDirectory != "" || *o.acmeCARoot != "" {
			c, err := acmeClient(*o.acmeDirectory, *o.acmeCARoot)
			if err != nil {
				return nil, err
			}
			m.Client = c
		}
		t.acme, base.GetCertificate = m, m.GetCertificate
		// TLS-ALPN-01: the CA connects offering only acme-tls/1 and autocert answers
		// with the challenge certificate.
		base.NextProtos = append(base.NextProtos, acme.ALPNProto)
	default:
		return nil, nil
	}
	t.cfg = base
	return t, nil
}

// acmeClient talks to the directory (empty: Let's Encrypt), trusting the system roots
// plus those in caRoot: a private CA's API is often served under its own root. The extra
// roots apply to this client's HTTPS only, never to what interviewd serves or fetches.
func acmeClient(directory, caRoot string) (*acme.Client, error) {
	c := &acme.Client{DirectoryURL: directory}
	if c.DirectoryURL == "" {
		c.DirectoryURL = autocert.DefaultACMEDirectory
	}
	if caRoot == "" {
		return c, nil
	}
	pem, err := os.ReadFile(caRoot)
	if err != nil {
		return nil, fmt.Errorf("read --acme-ca-root: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--acme-ca-root %s: no PEM certificate found", caRoot)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	c.HTTPClient = &http.Client{Transport: tr}
	return c, nil
}

// reload re-reads the certificate files (what SIGHUP does) and says what happened.
func (t *tlsSetup) reload() error {
	if t.reloader == nil {
		return errors.New("no certificate files to reload (ACME certificates renew themselves)")
	}
	err := t.reloader.reload()
	if err != nil {
		t.log.Error().Err(err).Msg("TLS certificate reload failed; still serving the previous certificate")
	} else {
		leaf := t.reloader.cur.Load().Leaf
		t.log.Info().Str("subject", leaf.Subject.CommonName).Time("not_after", leaf.NotAfter).Msg("TLS certificate reloaded")
	}
	if t.reloaded != nil {
		t.reloaded(err)
	}
	return err
}

// start begins re-reading the certificate files on SIGHUP and, when httpAddr is set,
// serving the plain-HTTP listener there; tlsPort is where its redirect points.
func (t *tlsSetup) start(ctx context.Context, httpAddr, tlsPort string) error {
	if t.reloader != nil {
		ctx, t.cancel = context.WithCancel(ctx)
		t.hup = make(chan os.Signal, 1)
		signal.Notify(t.hup, syscall.SIGHUP)
		go func() {
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.hup:
					_ = t.reload()
				}
			}
		}()
	}
	if httpAddr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", httpAddr)
	if err != nil {
		return fmt.Errorf("listen on --http-addr %s: %w", httpAddr, err)
	}
	var h http.Handler = redirectHTTPS(tlsPort)
	if t.acme != nil {
		h = t.acme.HTTPHandler(h) // HTTP-01 challenges, then the redirect
	}
	t.httpLn, t.httpDone = ln, make(chan struct{})
	t.http = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: 60 * time.Second, MaxHeaderBytes: 16 << 10,
		ErrorLog: stdlog.New(t.log.With().Str("listener", "http-redirect").Logger(), "", 0)}
	go func() {
		defer close(t.httpDone)
		if err := t.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.log.Error().Err(err).Msg("HTTP redirect listener stopped")
		}
	}()
	t.log.Info().Str("http_addr", ln.Addr().String()).Bool("acme_http01", t.acme != nil).Msg("redirecting plain HTTP to HTTPS")
	return nil
}

// close stops the SIGHUP loop and the --http-addr listener, waiting for it.
func (t *tlsSetup) close() {
	if t.hup != nil {
		signal.Stop(t.hup)
	}
	if t.cancel != nil {
		t.cancel()
	}
	if t.http != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = t.http.Shutdown(ctx)
		<-t.httpDone
	}
}

// redirectHTTPS answers every request with 308 to the same host, path and query over
// HTTPS (308 keeps the method and body, so an API client's POST is repeated as a POST).
func redirectHTTPS(tlsPort string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		if host == "" || strings.ContainsAny(host, "/\\@ ") {
			http.Error(w, "A Host header is required.", http.StatusBadRequest)
			return
		}
		if strings.Contains(host, ":") { // IPv6 literal
			host = "[" + host + "]"
		}
		if tlsPort != "" && tlsPort != "443" {
			host += ":" + tlsPort
		}
		w.Header().Set("Location", "https://"+host+r.URL.RequestURI())
		w.Header().Set("Connection", "close")
		w.WriteHeader(http.StatusPermanentRedirect)
	})
}
