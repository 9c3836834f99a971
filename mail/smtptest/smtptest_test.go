package smtptest

import (
	"net/smtp"
	"net/url"
	"strings"
	"testing"
)

func send(t *testing.T, srv *Server, to, raw string) {
	t.Helper()
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if err := smtp.SendMail(u.Host, nil, "sender@x.test", []string{to}, []byte(strings.ReplaceAll(raw, "\n", "\r\n"))); err != nil {
		t.Fatal(err)
	}
}

// Next returns each recipient's messages in order, once each; the parts are decoded.
func TestNextDecodesInOrder(t *testing.T) {
	srv := Start(t)
	send(t, srv, "a@x.test", "Subject: =?utf-8?q?Code_=C3=A9_123456?=\nContent-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: quoted-printable\n\nYour code is 123456 =E2=80=94 thanks.\n")
	send(t, srv, "b@x.test", "Subject: other\n\nfor b\n")
	send(t, srv, "A@X.test", "Subject: invite\nMIME-Version: 1.0\nContent-Type: multipart/alternative; boundary=BB\n\n--BB\nContent-Type: text/plain\nContent-Transfer-Encoding: base64\n\nT3BlbiBodHRwczovL2gudGVzdC9hcHAvaW52aXRhdGlvbnMvaXZpX2FiYy4K\n--BB\nContent-Type: text/html\n\n<p>hi</p>\n--BB--\n")
	first := srv.Next(t, "a@x.test")
	if first.Subject != "Code é 123456" || first.Code() != "123456" || !strings.Contains(first.Text, "123456 — thanks") || first.From != "sender@x.test" {
		t.Fatalf("first %+v", first)
	}
	second := srv.Next(t, "a@x.test")
	if second.Subject != "invite" || second.Link("https://h.test/app/invitations/") != "https://h.test/app/invitations/ivi_abc" || second.HTML != "<p>hi</p>" || second.Code() != "" {
		t.Fatalf("second %+v (text %q)", second, second.Text)
	}
	if b := srv.Next(t, "B@x.test"); b.Subject != "other" {
		t.Fatalf("b %+v", b)
	}
	if n := len(srv.Messages()); n != 3 {
		t.Fatalf("%d messages", n)
	}
}
