package sms

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"interviewd/sms/smstest"
)

func mustNew(t *testing.T, raw string) *twilio {
	t.Helper()
	s, err := New(raw)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	tw, ok := s.(*twilio)
	if !ok {
		t.Fatalf("New returned %T", s)
	}
	return tw
}

func TestNewEmptyIsNoProvider(t *testing.T) {
	for _, raw := range []string{"", "  "} {
		s, err := New(raw)
		if s != nil || err != nil {
			t.Fatalf("New(%q) = %v, %v; want nil, nil", raw, s, err)
		}
	}
}

// TestNewRejects: every URL it cannot use is refused with a message naming the
// problem, and no message repeats the token.
func TestNewRejects(t *testing.T) {
	const secret = "s3cr3t-token"
	for _, c := range []struct{ name, raw, want string }{
		{"Scheme", "ftp://AC1:" + secret + "@api.twilio.com/x?From=%2B15005550006", "must start with https://"},
		{"PlainHTTPElsewhere", "http://AC1:" + secret + "@api.twilio.com/x?From=%2B15005550006", "must use https://"},
		{"NoHost", "https://AC1:" + secret + "@/x?From=%2B15005550006", "names no host"},
		{"NoPath", "https://AC1:" + secret + "@api.twilio.com?From=%2B15005550006", "names no Messages resource"},
		{"NoCredentials", "https://api.twilio.com/2010-04-01/Accounts/AC1/Messages.json?From=%2B15005550006", "ACCOUNT_SID:AUTH_TOKEN@host"},
		{"NoToken", "https://AC1@api.twilio.com/x?From=%2B15005550006", "ACCOUNT_SID:AUTH_TOKEN@host"},
		{"NoSender", "https://AC1:" + secret + "@api.twilio.com/x", "exactly one sender"},
		{"TwoSenders", "https://AC1:" + secret + "@api.twilio.com/x?From=%2B15005550006&MessagingServiceSid=MG1", "exactly one sender"},
		{"EmptyFrom", "https://AC1:" + secret + "@api.twilio.com/x?From=", "more than once or empty"},
		{"TwiceFrom", "https://AC1:" + secret + "@api.twilio.com/x?From=a&From=b", "more than once or empty"},
		{"UnknownParameter", "https://AC1:" + secret + "@api.twilio.com/x?From=a&Body=hi", `not "Body"`},
		{"Fragment", "https://AC1:" + secret + "@api.twilio.com/x?From=a#frag", "no #fragment"},
		{"Unparsable", "https://AC1:" + secret + "@api.twilio.com:port/x", "is not a URL"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := New(c.raw)
			if err == nil || s != nil {
				t.Fatalf("New accepted %q", c.raw)
			}
			if !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "sms: INTERVIEWD_SMS_URL") {
				t.Fatalf("error %q, want it to name %q", err, c.want)
			}
			if strings.Contains(err.Error(), secret) {
				t.Fatalf("error %q repeats the token", err)
			}
		})
	}
}

func TestNewAcceptsLoopbackHTTPAndTwilio(t *testing.T) {
	for _, raw := range []string{
		"http://AC1:tok@127.0.0.1:8080/Messages.json?From=%2B15005550006",
		"http://AC1:tok@localhost/Messages.json?MessagingServiceSid=MG1",
		"http://AC1:tok@[::1]:9/Messages.json?From=Acme",
		"https://AC1:tok@api.twilio.com/2010-04-01/Accounts/AC1/Messages.json?From=%2B15005550006",
	} {
		tw := mustNew(t, raw)
		if strings.Contains(tw.endpoint, "tok") || strings.Contains(tw.endpoint, "?") {
			t.Fatalf("%q: endpoint %q keeps credentials or query", raw, tw.endpoint)
		}
	}
}

// TestSend: a text reaches the local Twilio server with the configured sender, as
// form fields.
func TestSend(t *testing.T) {
	t.Run("From", func(t *testing.T) {
		srv := smstest.Start(t)
		s := mustNew(t, srv.URL)
		if err := s.Send(context.Background(), "+447700900123", CodeText("123456", 10*time.Minute, "https://research.example")); err != nil {
			t.Fatal(err)
		}
		m := srv.Next(t, "+447700900123")
		if m.From != smstest.From || m.MessagingServiceSid != "" || m.Code() != "123456" || !strings.HasPrefix(m.SID, "SM") {
			t.Fatalf("message %+v", m)
		}
		if !strings.HasSuffix(m.Body, "\n\n@research.example #123456") || !strings.Contains(m.Body, "expires in 10 minutes") {
			t.Fatalf("body %q", m.Body)
		}
	})
	t.Run("MessagingService", func(t *testing.T) {
		srv := smstest.StartWith(t, smstest.Options{MessagingService: "MG0123"})
		s := mustNew(t, srv.URL)
		if err := s.Send(context.Background(), "+15551234567", "Your code is 654321"); err != nil {
			t.Fatal(err)
		}
		if m := srv.Next(t, "+15551234567"); m.MessagingServiceSid != "MG0123" || m.From != "" || m.Code() != "654321" {
			t.Fatalf("message %+v", m)
		}
	})
}

// TestSendTwilioError: the provider's error document comes back in the error, and a
// refused number is told apart from a refused account.
func TestSendTwilioError(t *testing.T) {
	srv := smstest.Start(t)
	s := mustNew(t, srv.URL)
	srv.Fail(&smstest.Failure{HTTPStatus: 400, Code: 21610, Message: "Attempt to send to unsubscribed recipient"})
	err := s.Send(context.Background(), "+447700900123", "hi")
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T), want *sms.Error", err, err)
	}
	if e.HTTPStatus != 400 || e.Code != 21610 || e.Message != "Attempt to send to unsubscribed recipient" ||
		e.MoreInfo != "https://www.twilio.com/docs/errors/21610" || !e.BadNumber() {
		t.Fatalf("error %+v", e)
	}
	if got := err.Error(); got != "sms: the provider refused the message (HTTP 400, error 21610): Attempt to send to unsubscribed recipient (https://www.twilio.com/docs/errors/21610)" {
		t.Fatalf("error text %q", got)
	}
	srv.Fail(&smstest.Failure{HTTPStatus: 429, Code: 20429, Message: "Too Many Requests"})
	if err := s.Send(context.Background(), "+447700900123", "hi"); !errors.As(err, &e) || e.Code != 20429 || e.BadNumber() {
		t.Fatalf("rate limited: %v", err)
	}
	srv.Fail(nil)
	if err := s.Send(context.Background(), "+447700900123", "hi"); err != nil {
		t.Fatalf("after the failure cleared: %v", err)
	}
	if len(srv.Messages()) != 1 || srv.Refused() != 2 {
		t.Fatalf("%d accepted, %d refused; want 1, 2", len(srv.Messages()), srv.Refused())
	}
}

// TestSendRefusesBadInput: a number that is not E.164 or an empty body never reaches
// the provider.
func TestSendRefusesBadInput(t *testing.T) {
	srv := smstest.Start(t)
	s := mustNew(t, srv.URL)
	for _, c := range []struct{ to, body string }{
		{"07700900123", "hi"}, {"+0123456789", "hi"}, {"+44 7700 900123", "hi"}, {"+123456", "hi"},
		{"+1234567890123456", "hi"}, {"+447700900123", ""}, {"+447700900123", strings.Repeat("x", 1601)},
	} {
		if err := s.Send(context.Background(), c.to, c.body); err == nil {
			t.Errorf("Send(%q, %d characters) succeeded", c.to, len(c.body))
		}
	}
	if n := len(srv.Messages()) + srv.Refused(); n != 0 {
		t.Fatalf("%d requests reached the provider", n)
	}
}

// TestSendAuthRefused: wrong credentials are the provider's 401 with Twilio's 20003,
// and the error names neither the configured nor any other token.
func TestSendAuthRefused(t *testing.T) {
	srv := smstest.Start(t)
	u, _ := url.Parse(srv.URL)
	u.User = url.UserPassword(smstest.AccountSID, "wrong-token-value")
	s := mustNew(t, u.String())
	err := s.Send(context.Background(), "+447700900123", "hi")
	var e *Error
	if !errors.As(err, &e) || e.HTTPStatus != 401 || e.Code != 20003 || e.BadNumber() {
		t.Fatalf("error %v", err)
	}
	if strings.Contains(err.Error(), "wrong-token-value") {
		t.Fatalf("error %q names the token", err)
	}
	if len(srv.Messages()) != 0 {
		t.Fatal("a text was accepted with the wrong token")
	}
}

// TestRedaction: neither the sender's String, nor an error from an unreachable or
// misbehaving provider, nor one that echoes the token, carries the token.
func TestRedaction(t *testing.T) {
	const token = "tok-that-must-not-leak"
	// A gateway that answers with plain text echoing what it was sent.
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, pass, _ := r.BasicAuth()
		http.Error(w, "bad gateway for "+pass, http.StatusBadGateway)
	}))
	defer echo.Close()
	s := mustNew(t, strings.Replace(echo.URL, "http://", "http://AC1:"+token+"@", 1)+"/Messages.json?From=%2B15005550006")
	if str := fmt.Sprint(s); strings.Contains(str, token) || !strings.Contains(str, "xxxxx") {
		t.Fatalf("String() = %q", str)
	}
	err := s.Send(context.Background(), "+447700900123", "hi")
	var e *Error
	if !errors.As(err, &e) || e.HTTPStatus != 502 || e.Code != 0 || e.Message != "bad gateway for xxxxx" {
		t.Fatalf("plain-text refusal: %v", err)
	}
	echo.Close()
	err = s.Send(context.Background(), "+447700900123", "hi")
	if err == nil || strings.Contains(err.Error(), token) {
		t.Fatalf("unreachable provider: %v", err)
	}
}

// TestSendStops: a provider that never answers is given up on when the context ends
// or after the client's timeout.
func TestSendStops(t *testing.T) {
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer hang.Close()
	defer close(release)
	raw := strings.Replace(hang.URL, "http://", "http://AC1:tok@", 1) + "/Messages.json?From=%2B15005550006"
	if DefaultTimeout < 5*time.Second || DefaultTimeout > time.Minute {
		t.Fatalf("DefaultTimeout %v is not a sane bound for one text", DefaultTimeout)
	}
	t.Run("Context", func(t *testing.T) {
		s := mustNew(t, raw)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- s.Send(ctx, "+447700900123", "hi") }()
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("error %v, want context.Canceled", err)
		}
	})
	t.Run("Timeout", func(t *testing.T) {
		s := mustNew(t, raw)
		s.client.Timeout = 50 * time.Millisecond
		err := s.Send(context.Background(), "+447700900123", "hi")
		var ne interface{ Timeout() bool }
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("error %v, want a timeout", err)
		}
	})
}

func TestCodeText(t *testing.T) {
	got := CodeText("012345", 10*time.Minute, "http://localhost:8080")
	want := "Your interviewd code is 012345. It expires in 10 minutes. Never share it: we will not ask you for it.\n\n@localhost #012345"
	if got != want {
		t.Fatalf("CodeText = %q", got)
	}
	if got := CodeText("012345", 10*time.Minute, ""); strings.Contains(got, "@") {
		t.Fatalf("without a base URL: %q", got)
	}
}

func TestValidNumber(t *testing.T) {
	for s, want := range map[string]bool{
		"+447700900123": true, "+15005550006": true, "+2901234": true, "+123456789012345": true,
		"447700900123": false, "+0447700900123": false, "+4477009001a3": false, "+123456": false,
		"+1234567890123456": false, "": false, "+": false,
	} {
		if ValidNumber(s) != want {
			t.Errorf("ValidNumber(%q) = %v", s, !want)
		}
	}
}

// FuzzNew: whatever the URL, New either refuses it or yields an endpoint that carries
// no credentials or query, over https or to this machine, and a String without the
// token.
func FuzzNew(f *testing.F) {
	for _, s := range []string{
		"https://AC1:tok@api.twilio.com/2010-04-01/Accounts/AC1/Messages.json?From=%2B15005550006",
		"http://AC1:tok@127.0.0.1:1/x?MessagingServiceSid=MG1", "http://a:b@evil.example/x?From=1",
		"https://a:b@h/x?From=1&From=2", "https://:b@h/x?From=1", "//a:b@h/x?From=1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		s, err := New(raw)
		if err != nil || s == nil {
			return
		}
		tw := s.(*twilio)
		u, perr := url.Parse(tw.endpoint)
		if perr != nil || u.User != nil || u.RawQuery != "" || tw.token == "" || tw.account == "" {
			t.Fatalf("New(%q): endpoint %q", raw, tw.endpoint)
		}
		if u.Scheme != "https" && !(u.Scheme == "http" && loopback(u.Hostname())) {
			t.Fatalf("New(%q): plain http to %q", raw, u.Host)
		}
		if (tw.from == "") == (tw.service == "") {
			t.Fatalf("New(%q): sender from=%q service=%q", raw, tw.from, tw.service)
		}
		shown, perr := url.Parse(tw.String())
		if perr != nil || shown.User == nil {
			t.Fatalf("New(%q): String %q", raw, tw.String())
		}
		if p, _ := shown.User.Password(); p != "xxxxx" {
			t.Fatalf("New(%q): String %q shows the token", raw, tw.String())
		}
	})
}
