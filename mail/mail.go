// Package mail sends the few messages interviewd writes to people (sign-in codes,
// two-step codes, invitations). It is its own package because it is the one place that
// talks SMTP: with INTERVIEWD_SMTP_URL set it sends through that server (go-mail,
// STARTTLS when offered, implicit TLS for smtps://); without it every message is logged
// and kept in the data file's outbox, so a self-hoster with no mail server can still
// sign in (`interviewd mail outbox`).
package mail

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"
	gomail "github.com/wneessen/go-mail"

	"interviewd/kv"
)

// Message is one email: plain text with an HTML alternative.
type Message struct {
	To string
	// FromName, when set, is the name the message comes from, with the configured
	// sender's address ("Onboarding study <interviewd@example.com>").
	FromName string
	Subject  string
	Text     string
	HTML     string
}

// Sender delivers messages. Send returns an error when the message could not be handed
// on (the SMTP server refused it or could not be reached); the offline sender fails
// only when the outbox cannot be written.
type Sender interface {
	Send(ctx context.Context, m Message) error
}

// Outbox keeps what the offline sender would have mailed (*kv.DB is one).
type Outbox interface {
	AddOutboxMail(ctx context.Context, m kv.OutboxMail) (kv.OutboxMail, error)
}

// Config chooses and configures the sender.
type Config struct {
	// URL is smtp://[user:pass@]host[:port] (STARTTLS when the server offers it; port
	// 587 by default) or smtps://[user:pass@]host[:port] (TLS from the first byte; port
	// 465 by default). Empty: the offline sender.
	URL string
	// From is the sender address, "Name <addr>" or "addr". Empty: "interviewd
	// <interviewd@HOST>" with HOST from BaseURL.
	From string
	// BaseURL is the service's public URL (for the default From).
	BaseURL string
	// TLSConfig, when set, is used for STARTTLS and smtps (tests pass their CA here).
	TLSConfig *tls.Config
	// Timeout bounds one delivery; 0 means 30 seconds.
	Timeout time.Duration
}

// New returns the SMTP sender when cfg.URL is set, otherwise the offline sender that
// logs to log and keeps messages in outbox. It returns an error for a URL it cannot use
// (wrong scheme, bad port, no host) or an unusable From.
func New(cfg Config, outbox Outbox, log zerolog.Logger) (Sender, error) {
	from := strings.TrimSpace(cfg.From)
	if from == "" {
		from = defaultFrom(cfg.BaseURL)
	}
	if strings.TrimSpace(cfg.URL) == "" {
		if outbox == nil {
			return nil, fmt.Errorf("mail: the offline sender needs an outbox")
		}
		return &offline{outbox: outbox, log: log}, nil
	}
	s, err := newSMTP(cfg, from)
	if err != nil {
		return nil, err
	}
	return s, nil
}

func defaultFrom(baseURL string) string {
	host := "localhost"
	if u, err := url.Parse(baseURL); err == nil && u.Hostname() != "" {
		host = u.Hostname()
	}
	if strings.Count(host, ".") == 0 && host != "localhost" {
		host = "localhost"
	}
	return "interviewd <interviewd@" + host + ">"
}

// smtpSender sends through one SMTP server, a connection per message: interviewd sends
// a handful of messages an hour, so a pool would only hold idle connections open.
type smtpSender struct {
	host string
	opts []gomail.Option
	from string
}

// ParseURL checks an SMTP URL and returns its parts: implicit is true for smtps://.
func ParseURL(raw string) (host string, port int, user, pass string, implicit bool, err error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", 0, "", "", false, fmt.Errorf("mail: INTERVIEWD_SMTP_URL is not a URL")
	}
	switch u.Scheme {
	case "smtp":
		port = 587
	case "smtps":
		port, implicit = 465, true
	default:
		return "", 0, "", "", false, fmt.Errorf("mail: INTERVIEWD_SMTP_URL must start with smtp:// or smtps://")
	}
	host = u.Hostname()
	if host == "" {
		return "", 0, "", "", false, fmt.Errorf("mail: INTERVIEWD_SMTP_URL names no host")
	}
	if p := u.Port(); p != "" {
		n, perr := strconv.Atoi(p)
		if perr != nil || n < 1 || n > 65535 {
			return "", 0, "", "", false, fmt.Errorf("mail: INTERVIEWD_SMTP_URL has a bad port %q", p)
		}
		port = n
	}
	if u.User != nil {
		user = u.User.Username()
		pass, _ = u.User.Password()
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return "", 0, "", "", false, fmt.Errorf("mail: INTERVIEWD_SMTP_URL takes no path or query")
	}
	return host, port, user, pass, implicit, nil
}

func newSMTP(cfg Config, from string) (*smtpSender, error) {
	host, port, user, pass, implicit, err := ParseURL(cfg.URL)
	if err != nil {
		return nil, err
	}
	if probe := gomail.NewMsg(); probe.From(from) != nil {
		return nil, fmt.Errorf("mail: INTERVIEWD_MAIL_FROM %q is not an address", from)
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	opts := []gomail.Option{gomail.WithPort(port), gomail.WithTimeout(timeout)}
	tlsConf := cfg.TLSConfig
	if tlsConf == nil {
		tlsConf = &tls.Config{MinVersion: tls.VersionTLS12}
	} else {
		tlsConf = tlsConf.Clone()
	}
	if tlsConf.ServerName == "" {
		tlsConf.ServerName = host
	}
	opts = append(opts, gomail.WithTLSConfig(tlsConf))
	if implicit {
		opts = append(opts, gomail.WithSSL())
	} else {
		// STARTTLS when offered: a local relay without TLS still works, and one that
		// offers it is never spoken to in the clear.
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSOpportunistic))
	}
	if user != "" {
		opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthAutoDiscover), gomail.WithUsername(user), gomail.WithPassword(pass))
	}
	return &smtpSender{host: host, opts: opts, from: from}, nil
}

// Send delivers m. The error names the SMTP server's refusal, never the password.
func (s *smtpSender) Send(ctx context.Context, m Message) error {
	msg := gomail.NewMsg()
	if err := msg.From(s.from); err != nil {
		return fmt.Errorf("mail: from: %w", err)
	}
	if m.FromName != "" {
		addr := msg.GetFrom()[0].Address
		if err := msg.FromFormat(m.FromName, addr); err != nil {
			return fmt.Errorf("mail: from: %w", err)
		}
	}
	if err := msg.To(m.To); err != nil {
		return fmt.Errorf("mail: to %q: %w", m.To, err)
	}
	msg.Subject(m.Subject)
	msg.SetDate()
	msg.SetMessageID()
	msg.SetBodyString(gomail.TypeTextPlain, m.Text)
	if m.HTML != "" {
		msg.AddAlternativeString(gomail.TypeTextHTML, m.HTML)
	}
	c, err := gomail.NewClient(s.host, s.opts...)
	if err != nil {
		return fmt.Errorf("mail: %w", err)
	}
	if err := c.DialAndSendWithContext(ctx, msg); err != nil {
		return fmt.Errorf("mail: send to %s via %s: %w", m.To, s.host, err)
	}
	return nil
}

// KeepsInOutbox reports whether s is the offline sender: nothing it is given is mailed;
// it is kept in the outbox (and logged) instead.
func KeepsInOutbox(s Sender) bool {
	_, ok := s.(*offline)
	return ok
}

// offline keeps messages in the outbox and logs them: the subject carries any code, so
// the log alone is enough to sign in.
type offline struct {
	outbox Outbox
	log    zerolog.Logger
}

func (o *offline) Send(ctx context.Context, m Message) error {
	kept, err := o.outbox.AddOutboxMail(ctx, kv.OutboxMail{To: m.To, Subject: m.Subject, Text: m.Text})
	if err != nil {
		return fmt.Errorf("mail: keep in outbox: %w", err)
	}
	o.log.Warn().Str("to", m.To).Str("subject", m.Subject).Str("outbox_id", kept.ID.String()).
		Msg("mail not sent: no INTERVIEWD_SMTP_URL is set; kept in the outbox (interviewd mail outbox)")
	return nil
}
