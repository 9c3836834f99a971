package sms

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// The provider is named by one URL, INTERVIEWD_SMS_URL: the Messages resource of the
// Twilio API (or of a gateway speaking its form), the account's credentials as the
// URL's user and password (sent as HTTP basic auth), and the sender as a query
// parameter, From (a number, short code or sender name) or MessagingServiceSid:
//
//	https://ACCOUNT_SID:AUTH_TOKEN@api.twilio.com/2010-04-01/Accounts/ACCOUNT_SID/Messages.json?From=%2B15005550006
//
// The query is configuration, not part of the request: each message is a POST of the
// form fields To, From (or MessagingServiceSid) and Body to the URL without its user
// and query. https is required except for loopback hosts (a gateway on the same
// machine, and the tests' local server).

// DefaultTimeout bounds one send: a provider that has not answered by then is treated
// as down, and the person can ask for another code.
const DefaultTimeout = 15 * time.Second

// maxBody is the most a text may hold: Twilio's limit for one message.
const maxBody = 1600

// twilio sends through one Twilio-compatible Messages endpoint.
type twilio struct {
	endpoint string // scheme://host/path: no credentials, no query
	account  string
	token    string
	from     string // the From field, or "" when service is set
	service  string // the MessagingServiceSid field
	redacted string // the configured URL with the token masked
	client   *http.Client
}

// New returns the sender for the provider URL raw (see the URL form above), or nil and
// no error when raw is empty: no provider, no text messages. It returns an error that
// names what is wrong (never the token) for a URL it cannot use.
func New(raw string) (Sender, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil, nil
	}
	t, err := parseURL(raw)
	if err != nil {
		return nil, err
	}
	return t, nil
}

func parseURL(raw string) (*twilio, error) {
	u, err := url.Parse(raw)
	if err != nil {
		// url.Parse's error quotes the URL, token and all.
		return nil, errors.New("sms: INTERVIEWD_SMS_URL is not a URL")
	}
	switch {
	case u.Scheme != "https" && u.Scheme != "http":
		return nil, errors.New("sms: INTERVIEWD_SMS_URL must start with https://")
	case u.Hostname() == "":
		return nil, errors.New("sms: INTERVIEWD_SMS_URL names no host")
	case u.Scheme == "http" && !loopback(u.Hostname()):
		return nil, errors.New("sms: INTERVIEWD_SMS_URL must use https:// (http:// only for a gateway on this machine: localhost, 127.0.0.1 or [::1])")
	case u.Path == "" || u.Path == "/":
		return nil, errors.New("sms: INTERVIEWD_SMS_URL names no Messages resource (e.g. /2010-04-01/Accounts/ACCOUNT_SID/Messages.json)")
	case u.Fragment != "":
		return nil, errors.New("sms: INTERVIEWD_SMS_URL takes no #fragment")
	}
	t := &twilio{client: &http.Client{Timeout: DefaultTimeout}}
	if u.User != nil {
		t.account = u.User.Username()
		t.token, _ = u.User.Password()
	}
	if t.account == "" || t.token == "" {
		return nil, errors.New("sms: INTERVIEWD_SMS_URL needs the account's credentials as ACCOUNT_SID:AUTH_TOKEN@host")
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return nil, errors.New("sms: INTERVIEWD_SMS_URL has a query that does not parse")
	}
	for k, v := range q {
		switch {
		case k != "From" && k != "MessagingServiceSid":
			return nil, fmt.Errorf("sms: INTERVIEWD_SMS_URL takes only From or MessagingServiceSid in its query, not %q", k)
		case len(v) != 1 || strings.TrimSpace(v[0]) == "":
			return nil, fmt.Errorf("sms: INTERVIEWD_SMS_URL has %s more than once or empty", k)
		}
	}
	t.from, t.service = strings.TrimSpace(q.Get("From")), strings.TrimSpace(q.Get("MessagingServiceSid"))
	if (t.from == "") == (t.service == "") {
		return nil, errors.New("sms: INTERVIEWD_SMS_URL needs exactly one sender in its query: ?From=%2B15005550006 or ?MessagingServiceSid=MG...")
	}
	t.redacted = u.Redacted()
	u.User, u.RawQuery, u.ForceQuery = nil, "", false
	t.endpoint = u.String()
	return t, nil
}

// loopback reports whether host is this machine.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// String is the configured URL with the token masked, for logs.
func (t *twilio) String() string { return t.redacted }

// Error is a provider's refusal, carrying the Twilio error document when the provider
// sent one (https://www.twilio.com/docs/api/errors): Code 21211 is an invalid To
// number, 20003 refused credentials, 21610 a number that opted out.
type Error struct {
	HTTPStatus int    // the response's status
	Code       int    // the provider's error code, 0 when it sent none
	Message    string // the provider's message, or the start of an unparsed body
	MoreInfo   string // a link explaining Code
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "sms: the provider refused the message (HTTP %d", e.HTTPStatus)
	if e.Code != 0 {
		fmt.Fprintf(&b, ", error %d", e.Code)
	}
	b.WriteString(")")
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.MoreInfo != "" {
		b.WriteString(" (" + e.MoreInfo + ")")
	}
	return b.String()
}

// BadNumber reports whether the provider refused the number itself (not a valid
// number, not one that can take texts, or one that opted out) rather than the account
// or the service: something the person can fix by giving another number.
func (e *Error) BadNumber() bool {
	switch e.Code {
	case 21211, 21214, 21217, 21408, 21610, 21612, 21614:
		return true
	}
	return false
}

// Send posts one message and returns nil once the provider accepted it (a 2xx answer),
// an *Error when it refused it, and another error when it could not be reached in
// DefaultTimeout or ctx ended first. No error carries the token.
func (t *twilio) Send(ctx context.Context, to, body string) error {
	if !ValidNumber(to) {
		return fmt.Errorf("sms: %q is not an E.164 number", to)
	}
	if body == "" || len([]rune(body)) > maxBody {
		return fmt.Errorf("sms: a message must hold 1 to %d characters", maxBody)
	}
	form := url.Values{"To": {to}, "Body": {body}}
	if t.service != "" {
		form.Set("MessagingServiceSid", t.service)
	} else {
		form.Set("From", t.from)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return fmt.Errorf("sms: %w", err)
	}
	req.SetBasicAuth(t.account, t.token)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "interviewd")
	resp, err := t.client.Do(req)
	if err != nil {
		// The request's URL holds no credentials, so neither does this error.
		return fmt.Errorf("sms: send: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return fmt.Errorf("sms: read the provider's answer: %w", err)
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	return t.refusal(resp.StatusCode, raw)
}

// refusal reads a Twilio error document ({"code", "message", "more_info", "status"});
// a body that is not one is kept as its first line, with the token masked should a
// gateway echo it.
func (t *twilio) refusal(status int, raw []byte) *Error {
	e := &Error{HTTPStatus: status}
	var doc struct {
		Code     int    `json:"code"`
		Message  string `json:"message"`
		MoreInfo string `json:"more_info"`
		Status   int    `json:"status"`
	}
	if json.Unmarshal(raw, &doc) == nil && (doc.Code != 0 || doc.Message != "") {
		e.Code, e.Message, e.MoreInfo = doc.Code, clip(doc.Message, 300), clip(doc.MoreInfo, 200)
	} else {
		line, _, _ := strings.Cut(strings.TrimSpace(string(raw)), "\n")
		e.Message = clip(line, 200)
	}
	e.Message = strings.ReplaceAll(e.Message, t.token, "xxxxx")
	e.MoreInfo = strings.ReplaceAll(e.MoreInfo, t.token, "xxxxx")
	return e
}

func clip(s string, n int) string {
	if len(s) > n {
		s = s[:n]
	}
	return strings.ToValidUTF8(s, "")
}

// ValidNumber reports whether s is an E.164 number as stored: "+", a first digit that
// is not 0, and 7 to 15 digits in all.
func ValidNumber(s string) bool {
	if len(s) < 8 || len(s) > 16 || s[0] != '+' || s[1] == '0' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
