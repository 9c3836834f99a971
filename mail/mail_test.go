package mail_test

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"interviewd/kv"
	"interviewd/mail"
	"interviewd/mail/smtptest"
)

func mustOpenDB(t *testing.T) *kv.DB {
	t.Helper()
	db, err := kv.Open(t.TempDir(), kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestSendThroughSMTP(t *testing.T) {
	cases := []struct {
		name     string
		opts     smtptest.Options
		wantTLS  bool
		wantAuth string
	}{
		{"PlainRelay", smtptest.Options{}, false, ""},
		{"StartTLSWithAuth", smtptest.Options{StartTLS: true, User: "mailer", Password: "s3cret pass"}, true, "mailer"},
		{"ImplicitTLS", smtptest.Options{Implicit: true, User: "mailer", Password: "pw"}, true, "mailer"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := smtptest.StartWith(t, tc.opts)
			s, err := mail.New(mail.Config{URL: srv.URL, BaseURL: "https://research.example.org", TLSConfig: srv.TLSConfig}, nil, zerolog.Nop())
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			if err := s.Send(ctx, mail.SignInCode("Ada@Example.org", "042917", "https://research.example.org")); err != nil {
				t.Fatalf("send: %v", err)
			}
			m := srv.Next(t, "ada@example.org")
			if m.Code() != "042917" {
				t.Fatalf("code %q from subject %q text %q", m.Code(), m.Subject, m.Text)
			}
			if m.TLS != tc.wantTLS || m.Auth != tc.wantAuth {
				t.Fatalf("tls=%v auth=%q, want %v %q", m.TLS, m.Auth, tc.wantTLS, tc.wantAuth)
			}
			if m.From != "interviewd@research.example.org" {
				t.Fatalf("envelope from %q", m.From)
			}
			if !strings.Contains(m.Text, "10 minutes") || !strings.Contains(m.HTML, "042917") {
				t.Fatalf("text %q html %q", m.Text, m.HTML)
			}
		})
	}
}

func TestSendRefusedCredentials(t *testing.T) {
	srv := smtptest.StartWith(t, smtptest.Options{StartTLS: true, User: "mailer", Password: "right"})
	url := strings.Replace(srv.URL, "mailer:right@", "mailer:wrong@", 1)
	s, err := mail.New(mail.Config{URL: url, TLSConfig: srv.TLSConfig}, nil, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	err = s.Send(context.Background(), mail.TwoStepCode("a@b.test", "123456"))
	if err == nil {
		t.Fatal("sent with a wrong password")
	}
	if !strings.Contains(strings.ToLower(err.Error()), "auth") || strings.Contains(err.Error(), "wrong") {
		t.Fatalf("error leaks the password: %v", err)
	}
	if len(srv.Messages()) != 0 {
		t.Fatal("server accepted a message")
	}
}

// A server that offers STARTTLS with a certificate the client does not trust is never
// spoken to in the clear: the send fails.
func TestSendUntrustedCertificate(t *testing.T) {
	srv := smtptest.StartWith(t, smtptest.Options{StartTLS: true})
	s, err := mail.New(mail.Config{URL: srv.URL}, nil, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	err = s.Send(context.Background(), mail.TwoStepCode("a@b.test", "123456"))
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("sent despite an untrusted certificate, or failed otherwise: %v", err)
	}
	if len(srv.Messages()) != 0 {
		t.Fatal("message delivered without TLS")
	}
}

func TestOfflineSenderKeepsAndLogs(t *testing.T) {
	db := mustOpenDB(t)
	var logs bytes.Buffer
	s, err := mail.New(mail.Config{}, db, zerolog.New(&logs))
	if err != nil {
		t.Fatal(err)
	}
	smtp, err := mail.New(mail.Config{URL: "smtp://mail.acme.test"}, db, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	if !mail.KeepsInOutbox(s) || mail.KeepsInOutbox(smtp) {
		t.Fatalf("KeepsInOutbox: offline %v, SMTP %v", mail.KeepsInOutbox(s), mail.KeepsInOutbox(smtp))
	}
	ctx := context.Background()
	if err := s.Send(ctx, mail.SignInCode("owner@acme.test", "555123", "")); err != nil {
		t.Fatal(err)
	}
	if err := s.Send(ctx, mail.Invitation("new@acme.test", "Acme", "owner@acme.test", "admin", "http://localhost:8080/app/invitations/ivi_x", time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))); err != nil {
		t.Fatal(err)
	}
	box, err := db.FindOutboxMail(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(box) != 2 || box[0].To != "new@acme.test" || box[1].To != "owner@acme.test" {
		t.Fatalf("outbox %+v", box)
	}
	if !strings.Contains(box[0].Text, "http://localhost:8080/app/invitations/ivi_x") || !strings.Contains(box[0].Text, "an admin") {
		t.Fatalf("invitation text %q", box[0].Text)
	}
	if !strings.Contains(logs.String(), "555123") || !strings.Contains(logs.String(), "owner@acme.test") {
		t.Fatalf("log does not show the code: %s", logs.String())
	}
}

func TestOutboxKeepsNewest(t *testing.T) {
	db := mustOpenDB(t)
	ctx := context.Background()
	for i := 0; i < kv.OutboxKeep+5; i++ {
		if _, err := db.AddOutboxMail(ctx, kv.OutboxMail{To: "a@b.test", Subject: "n" + itoa(i)}); err != nil {
			t.Fatal(err)
		}
	}
	box, err := db.FindOutboxMail(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(box) != kv.OutboxKeep || box[0].Subject != "n"+itoa(kv.OutboxKeep+4) || box[len(box)-1].Subject != "n5" {
		t.Fatalf("kept %d, newest %q, oldest %q", len(box), box[0].Subject, box[len(box)-1].Subject)
	}
	if three, _ := db.FindOutboxMail(ctx, 3); len(three) != 3 {
		t.Fatalf("limit 3 gave %d", len(three))
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestInvitationEscapesHTML(t *testing.T) {
	m := mail.Invitation("x@y.test", "<script>alert(1)</script>\r\nBcc: evil@x.test", "", "member", "https://h.test/app/invitations/ivi_a?b=1&c=2", time.Now())
	if strings.Contains(m.HTML, "<script>") {
		t.Fatalf("org name not escaped: %s", m.HTML)
	}
	if strings.ContainsAny(m.Subject, "\r\n") {
		t.Fatalf("subject keeps a line break: %q", m.Subject)
	}
	if !strings.Contains(m.HTML, `href="https://h.test/app/invitations/ivi_a?b=1&amp;c=2"`) {
		t.Fatalf("link: %s", m.HTML)
	}
	if !strings.Contains(m.Text, "You are invited") || !strings.Contains(m.Text, "a member") {
		t.Fatalf("text: %s", m.Text)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	for _, tc := range []struct{ url, from, want string }{
		{"http://mail.test", "", "smtp:// or smtps://"},
		{"smtp://", "", "names no host"},
		{"smtp://mail.test:99999", "", "bad port"},
		{"smtp://mail.test/x", "", "no path"},
		{"smtp://mail.test", "not an address", "not an address"},
	} {
		_, err := mail.New(mail.Config{URL: tc.url, From: tc.from}, nil, zerolog.Nop())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q from %q: %v, want %q", tc.url, tc.from, err, tc.want)
		}
	}
	for _, tc := range []struct {
		url      string
		port     int
		implicit bool
	}{
		{"smtp://u:p@mail.test", 587, false}, {"smtps://mail.test", 465, true}, {"smtp://mail.test:2525", 2525, false},
	} {
		_, port, _, _, implicit, err := mail.ParseURL(tc.url)
		if err != nil || port != tc.port || implicit != tc.implicit {
			t.Errorf("%s: port %d implicit %v err %v", tc.url, port, implicit, err)
		}
	}
	if _, err := mail.New(mail.Config{}, nil, zerolog.Nop()); err == nil {
		t.Error("offline sender without an outbox accepted")
	}
}
