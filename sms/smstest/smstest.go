// Package smstest runs a local HTTP server on 127.0.0.1 speaking the Twilio Messages
// API for tests: interviewd posts to it over a real socket, the way it posts to a
// self-hoster's provider, and the test reads the texts back (a two-step code). It
// checks what Twilio checks (method, path, basic auth, form fields) and answers as
// Twilio does: 201 with a message resource, or an error document. It is a package of
// its own so the sms package's, the app's and the account-access API's tests can share
// it; nothing outside tests imports it.
package smstest

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// The credentials and sender Start's server expects (Twilio's test-number style).
const (
	AccountSID = "AC00000000000000000000000000000001"
	AuthToken  = "smstest-auth-token-0001"
	From       = "+15005550006"
)

// Message is one text the server accepted.
type Message struct {
	SID  string
	To   string
	From string // "" when MessagingServiceSid was sent
	// MessagingServiceSid is the service the text was sent through, if any.
	MessagingServiceSid string
	Body                string
}

var sixDigits = regexp.MustCompile(`(?:^|[^0-9])([0-9]{6})(?:[^0-9]|$)`)

// Code returns the first run of exactly six digits in the text, or "".
func (m Message) Code() string {
	if g := sixDigits.FindStringSubmatch(m.Body); g != nil {
		return g[1]
	}
	return ""
}

// Failure is a Twilio error the server answers every request with while it is set.
type Failure struct {
	HTTPStatus int    // e.g. 400
	Code       int    // e.g. 21211
	Message    string // e.g. "The 'To' number is not a valid phone number."
}

// Server is a running Twilio-compatible test server.
type Server struct {
	// URL is what to set INTERVIEWD_SMS_URL to (sms.New's argument): it carries the
	// credentials and the sender.
	URL string

	srv     *httptest.Server
	opts    Options
	mu      sync.Mutex
	msgs    []Message
	seen    map[string]int // per recipient: how many Next has returned
	refused int
	fail    *Failure
}

// Options shape a server. The zero value is Start's.
type Options struct {
	// MessagingService, when set, is the MessagingServiceSid the URL names and every
	// request must carry instead of From.
	MessagingService string
}

// Start runs a server expecting AccountSID, AuthToken and From; it stops when the test
// ends.
func Start(t testing.TB) *Server { return StartWith(t, Options{}) }

// StartWith runs a server with opts; it stops when the test ends.
func StartWith(t testing.TB, opts Options) *Server {
	t.Helper()
	s := &Server{opts: opts, seen: map[string]int{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	u, err := url.Parse(s.srv.URL)
	if err != nil {
		t.Fatalf("smstest: %v", err)
	}
	u.User = url.UserPassword(AccountSID, AuthToken)
	u.Path = s.path()
	if opts.MessagingService != "" {
		u.RawQuery = url.Values{"MessagingServiceSid": {opts.MessagingService}}.Encode()
	} else {
		u.RawQuery = url.Values{"From": {From}}.Encode()
	}
	s.URL = u.String()
	return s
}

func (s *Server) path() string { return "/2010-04-01/Accounts/" + AccountSID + "/Messages.json" }

// Fail makes every later request fail with f until Fail(nil).
func (s *Server) Fail(f *Failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = f
}

// Messages returns every text accepted so far, oldest first.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.msgs...)
}

// Refused counts the requests answered with an error.
func (s *Server) Refused() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused
}

// Next waits (up to 60 seconds, polling) for the next text to the number to that an
// earlier Next has not returned, and fails the test if none comes.
func (s *Server) Next(t testing.TB, to string) Message {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		s.mu.Lock()
		n := 0
		for _, m := range s.msgs {
			if m.To != to {
				continue
			}
			if n == s.seen[to] {
				s.seen[to]++
				s.mu.Unlock()
				return m
			}
			n++
		}
		s.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatalf("smstest: no new text to %s within 60 s", to)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// serve is the Messages resource: POST only, basic auth with the account's SID and
// token, a form with To, Body and the configured sender.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != s.path() {
		s.refuse(w, &Failure{404, 20404, "The requested resource " + r.URL.Path + " was not found"})
		return
	}
	if r.Method != http.MethodPost {
		s.refuse(w, &Failure{405, 20004, "Method not allowed"})
		return
	}
	user, pass, ok := r.BasicAuth()
	if !ok || subtle.ConstantTimeCompare([]byte(user), []byte(AccountSID)) != 1 || subtle.ConstantTimeCompare([]byte(pass), []byte(AuthToken)) != 1 {
		w.Header().Set("WWW-Authenticate", `Basic realm="Twilio API"`)
		s.refuse(w, &Failure{401, 20003, "Authenticate"})
		return
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/x-www-form-urlencoded") {
		s.refuse(w, &Failure{400, 20001, "Expected a form, got Content-Type " + ct})
		return
	}
	if r.URL.RawQuery != "" {
		s.refuse(w, &Failure{400, 20001, "Parameters belong in the form, not the URL"})
		return
	}
	if err := r.ParseForm(); err != nil {
		s.refuse(w, &Failure{400, 20001, "The form does not parse"})
		return
	}
	m := Message{To: r.PostForm.Get("To"), From: r.PostForm.Get("From"),
		MessagingServiceSid: r.PostForm.Get("MessagingServiceSid"), Body: r.PostForm.Get("Body")}
	switch {
	case m.To == "":
		s.refuse(w, &Failure{400, 21604, "A 'To' phone number is required."})
		return
	case !e164(m.To):
		s.refuse(w, &Failure{400, 21211, "Invalid 'To' Phone Number: " + m.To})
		return
	case m.Body == "":
		s.refuse(w, &Failure{400, 21602, "Message body is required."})
		return
	case len([]rune(m.Body)) > 1600:
		s.refuse(w, &Failure{400, 21617, "The concatenated message body exceeds the 1600 character limit."})
		return
	case s.opts.MessagingService != "" && (m.MessagingServiceSid != s.opts.MessagingService || m.From != ""):
		s.refuse(w, &Failure{400, 21701, "The Messaging Service Sid " + m.MessagingServiceSid + " is invalid."})
		return
	case s.opts.MessagingService == "" && (m.From != From || m.MessagingServiceSid != ""):
		s.refuse(w, &Failure{400, 21212, "Invalid From Number: " + m.From})
		return
	}
	s.mu.Lock()
	fail := s.fail
	s.mu.Unlock()
	if fail != nil {
		s.refuse(w, fail)
		return
	}
	var id [16]byte
	_, _ = rand.Read(id[:])
	m.SID = "SM" + hex.EncodeToString(id[:])
	s.mu.Lock()
	s.msgs = append(s.msgs, m)
	s.mu.Unlock()
	now := time.Now().UTC().Format(time.RFC1123Z)
	resource := map[string]any{
		"sid": m.SID, "account_sid": AccountSID, "to": m.To, "from": nilIfEmpty(m.From),
		"messaging_service_sid": nilIfEmpty(m.MessagingServiceSid), "body": m.Body, "status": "queued",
		"num_segments": "1", "direction": "outbound-api", "api_version": "2010-04-01",
		"date_created": now, "date_updated": now, "date_sent": nil, "error_code": nil, "error_message": nil,
		"price": nil, "price_unit": "USD", "uri": strings.TrimSuffix(s.path(), ".json") + "/" + m.SID + ".json",
	}
	writeJSON(w, http.StatusCreated, resource)
}

// refuse answers with Twilio's error document.
func (s *Server) refuse(w http.ResponseWriter, f *Failure) {
	s.mu.Lock()
	s.refused++
	s.mu.Unlock()
	writeJSON(w, f.HTTPStatus, map[string]any{
		"code": f.Code, "message": f.Message, "status": f.HTTPStatus,
		"more_info": fmt.Sprintf("https://www.twilio.com/docs/errors/%d", f.Code),
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// e164 is "+" and 7 to 15 digits, the first not 0.
func e164(s string) bool {
	if len(s) < 8 || len(s) > 16 || s[0] != '+' || s[1] == '0' {
		return false
	}
	for _, c := range s[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
