// Package smtptest runs a real SMTP server (github.com/emersion/go-smtp) on 127.0.0.1
// for tests: interviewd sends to it over a real socket, the way it sends to a
// self-hoster's mail server, and the test reads the messages back (a sign-in code, an
// invitation link). It is a package of its own so the server's and the app's tests can
// share it; nothing outside tests imports it.
package smtptest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"errors"
	"io"
	"log"
	"math/big"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Message is one message the server accepted.
type Message struct {
	From    string
	To      []string
	Subject string
	Text    string // the text/plain part, decoded
	HTML    string // the text/html part, decoded
	Raw     []byte
	// TLS reports whether the message came over an encrypted connection, Auth the user
	// name it authenticated as ("" for none).
	TLS  bool
	Auth string
}

var sixDigits = regexp.MustCompile(`(?:^|[^0-9])([0-9]{6})(?:[^0-9]|$)`)

// Code returns the first run of exactly six digits in the subject or text (a sign-in
// or two-step code), or "".
func (m Message) Code() string {
	for _, s := range []string{m.Subject, m.Text} {
		if g := sixDigits.FindStringSubmatch(s); g != nil {
			return g[1]
		}
	}
	return ""
}

// Link returns the first URL in the text that starts with prefix, or "".
func (m Message) Link(prefix string) string {
	for _, f := range strings.Fields(m.Text) {
		if strings.HasPrefix(f, prefix) {
			return strings.TrimRight(f, ".,;)>")
		}
	}
	return ""
}

// Server is a running test SMTP server.
type Server struct {
	// URL is what to set INTERVIEWD_SMTP_URL (mail.Config.URL) to.
	URL string
	// TLSConfig trusts the server's self-signed certificate (nil for Start): pass it
	// as mail.Config.TLSConfig.
	TLSConfig *tls.Config

	srv  *smtp.Server
	mu   sync.Mutex
	msgs []Message
	seen map[string]int // per recipient: how many Next has returned
}

// Options shape a server. The zero value is Start's plain server.
type Options struct {
	// StartTLS offers STARTTLS with a fresh self-signed certificate for 127.0.0.1.
	StartTLS bool
	// Implicit speaks TLS from the first byte (smtps://).
	Implicit bool
	// User and Password, when set, are required (AUTH PLAIN, only over TLS).
	User, Password string
}

// Start runs a plain SMTP server without TLS or authentication, as a local relay
// would be; it stops when the test ends.
func Start(t testing.TB) *Server { return StartWith(t, Options{}) }

// StartWith runs a server with opts; it stops when the test ends.
func StartWith(t testing.TB, opts Options) *Server {
	t.Helper()
	s := &Server{seen: map[string]int{}}
	be := smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		_, isTLS := c.TLSConnectionState()
		return &session{srv: s, tls: isTLS, needAuth: opts.User != "", user: opts.User, pass: opts.Password}, nil
	})
	s.srv = smtp.NewServer(be)
	s.srv.Domain = "smtptest.local"
	s.srv.ReadTimeout = 60 * time.Second
	s.srv.WriteTimeout = 60 * time.Second
	s.srv.MaxMessageBytes = 10 << 20
	s.srv.ErrorLog = log.New(io.Discard, "", 0)
	if opts.StartTLS || opts.Implicit {
		cert, pool := selfSigned(t)
		s.srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		s.TLSConfig = &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
	}
	var ln net.Listener
	var err error
	if opts.Implicit {
		ln, err = tls.Listen("tcp", "127.0.0.1:0", s.srv.TLSConfig)
	} else {
		ln, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err != nil {
		t.Fatalf("smtptest: listen: %v", err)
	}
	u := url.URL{Scheme: "smtp", Host: ln.Addr().String()}
	if opts.Implicit {
		u.Scheme = "smtps"
	}
	if opts.User != "" {
		u.User = url.UserPassword(opts.User, opts.Password)
	}
	s.URL = u.String()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.srv.Serve(ln)
	}()
	t.Cleanup(func() {
		_ = s.srv.Close()
		<-done
	})
	return s
}

// Messages returns every message accepted so far, oldest first.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.msgs...)
}

// Next waits (up to 60 seconds, polling) for the next message to address that an
// earlier Next has not returned, and fails the test if none comes.
func (s *Server) Next(t testing.TB, address string) Message {
	t.Helper()
	address = strings.ToLower(address)
	deadline := time.Now().Add(60 * time.Second)
	for {
		s.mu.Lock()
		n := 0
		for _, m := range s.msgs {
			if !hasRecipient(m, address) {
				continue
			}
			if n == s.seen[address] {
				s.seen[address]++
				s.mu.Unlock()
				return m
			}
			n++
		}
		s.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatalf("smtptest: no new message to %s within 60 s", address)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func hasRecipient(m Message, address string) bool {
	for _, to := range m.To {
		if strings.EqualFold(to, address) {
			return true
		}
	}
	return false
}

type session struct {
	srv      *Server
	tls      bool
	needAuth bool
	user     string
	pass     string
	authed   string
	from     string
	to       []string
}

func (s *session) AuthMechanisms() []string {
	if !s.needAuth {
		return nil
	}
	return []string{sasl.Plain}
}

func (s *session) Auth(mech string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != s.user || pass != s.pass {
			return errors.New("invalid credentials")
		}
		s.authed = user
		return nil
	}), nil
}

func (s *session) Mail(from string, _ *smtp.MailOptions) error {
	if s.needAuth && s.authed == "" {
		return smtp.ErrAuthRequired
	}
	s.from = from
	return nil
}

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.to = append(s.to, strings.ToLower(to))
	return nil
}

func (s *session) Data(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	m := parse(raw)
	m.From, m.To, m.TLS, m.Auth = s.from, append([]string(nil), s.to...), s.tls, s.authed
	s.srv.mu.Lock()
	s.srv.msgs = append(s.srv.msgs, m)
	s.srv.mu.Unlock()
	return nil
}

func (s *session) Reset()        { s.from, s.to = "", nil }
func (s *session) Logout() error { return nil }

// parse reads the subject and the text and HTML parts of a MIME message.
func parse(raw []byte) Message {
	m := Message{Raw: raw}
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		m.Text = string(raw)
		return m
	}
	dec := new(mime.WordDecoder)
	if subj, err := dec.DecodeHeader(msg.Header.Get("Subject")); err == nil {
		m.Subject = subj
	}
	walk(msg.Header.Get("Content-Type"), msg.Header.Get("Content-Transfer-Encoding"), msg.Body, &m)
	return m
}

func walk(ctype, cte string, body io.Reader, m *Message) {
	media, params, err := mime.ParseMediaType(ctype)
	if err != nil {
		media = "text/plain"
	}
	if strings.HasPrefix(media, "multipart/") {
		mr := multipart.NewReader(body, params["boundary"])
		for {
			p, err := mr.NextRawPart()
			if err != nil {
				return
			}
			walk(p.Header.Get("Content-Type"), p.Header.Get("Content-Transfer-Encoding"), p, m)
		}
	}
	var r io.Reader = body
	switch strings.ToLower(cte) {
	case "quoted-printable":
		r = quotedprintable.NewReader(body)
	case "base64":
		r = base64.NewDecoder(base64.StdEncoding, &noNewlines{r: body})
	}
	data, _ := io.ReadAll(r)
	switch media {
	case "text/plain":
		if m.Text == "" {
			m.Text = strings.ReplaceAll(string(data), "\r\n", "\n")
		}
	case "text/html":
		if m.HTML == "" {
			m.HTML = string(data)
		}
	}
}

// noNewlines drops CR and LF so a line-wrapped base64 body decodes.
type noNewlines struct{ r io.Reader }

func (n *noNewlines) Read(p []byte) (int, error) {
	for {
		k, err := n.r.Read(p)
		j := 0
		for _, c := range p[:k] {
			if c != '\r' && c != '\n' {
				p[j] = c
				j++
			}
		}
		if j > 0 || err != nil {
			return j, err
		}
	}
}

// selfSigned makes a certificate for 127.0.0.1 and a pool that trusts it.
func selfSigned(t testing.TB) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("smtptest: key: %v", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: "smtptest"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatalf("smtptest: certificate: %v", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatalf("smtptest: certificate: %v", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}
