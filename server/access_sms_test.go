package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"interviewd/kv"
	"interviewd/sms"
)

// A minimal text-message provider speaking the Twilio Messages API (form POST to
// /2010-04-01/Accounts/{sid}/Messages.json with To, From and Body, basic auth), and a
// minimal sender posting to it, so the access API's SMS tests run over real HTTP.
// The sms package's own client and fake provider replace this file when they land.

type smsFake struct {
	srv  *httptest.Server
	mu   sync.Mutex
	msgs []smsMessage
	sent int
	more chan struct{}
}

type smsMessage struct{ To, From, Body string }

var smsCode = regexp.MustCompile(`\b[0-9]{6}\b`)

// Code is the first six-digit code in the message.
func (m smsMessage) Code() string { return smsCode.FindString(m.Body) }

var smsPath = regexp.MustCompile(`^/2010-04-01/Accounts/([A-Za-z0-9]+)/Messages\.json$`)

func startSMSFake(t *testing.T) *smsFake {
	t.Helper()
	f := &smsFake{more: make(chan struct{}, 100)}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m := smsPath.FindStringSubmatch(r.URL.Path)
		user, _, ok := r.BasicAuth()
		if r.Method != "POST" || m == nil || !ok || user != m[1] {
			http.Error(w, `{"code":20404,"message":"not found"}`, http.StatusNotFound)
			return
		}
		if err := r.ParseForm(); err != nil || r.PostForm.Get("To") == "" || r.PostForm.Get("Body") == "" {
			http.Error(w, `{"code":21602,"message":"Message body is required."}`, http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.msgs = append(f.msgs, smsMessage{To: r.PostForm.Get("To"), From: r.PostForm.Get("From"), Body: r.PostForm.Get("Body")})
		f.sent++
		n := f.sent
		f.mu.Unlock()
		f.more <- struct{}{}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"sid":"SM%032d","status":"queued"}`, n)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// Next waits (generously) for the next message to number to and returns it.
func (f *smsFake) Next(t *testing.T, to string) smsMessage {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		f.mu.Lock()
		for i, m := range f.msgs {
			if m.To == to {
				f.msgs = append(f.msgs[:i:i], f.msgs[i+1:]...)
				f.mu.Unlock()
				return m
			}
		}
		f.mu.Unlock()
		select {
		case <-f.more:
		case <-deadline:
			t.Fatalf("no text message to %s", to)
		}
	}
}

// twilioSender posts messages to a Twilio-protocol endpoint.
type twilioSender struct {
	base, sid, token, from string
}

func (s twilioSender) Send(ctx context.Context, to, body string) error {
	form := url.Values{"To": {to}, "From": {s.from}, "Body": {body}}
	req, err := http.NewRequestWithContext(ctx, "POST", s.base+"/2010-04-01/Accounts/"+s.sid+"/Messages.json", strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.SetBasicAuth(s.sid, s.token)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("sms provider: status %d", resp.StatusCode)
	}
	return nil
}

// withSMS gives the server a text-message provider: f.
func withSMS(f *smsFake) serveOption {
	var sender sms.Sender = twilioSender{base: f.srv.URL, sid: "AC123", token: "secret", from: "+15005550006"}
	return func(c *Config, _ *kv.Options) { c.SMS = sender }
}
