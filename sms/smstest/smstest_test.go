package smstest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// post sends form to the server's Messages resource (path overrides it) as Twilio's
// clients do, and returns the status and decoded body.
func post(t *testing.T, s *Server, method, path, user, pass string, form url.Values) (int, map[string]any) {
	t.Helper()
	u, _ := url.Parse(s.URL)
	u.User, u.RawQuery = nil, ""
	if path != "" {
		u.Path = path
	}
	req, err := http.NewRequest(method, u.String(), strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(user, pass)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("%s %s: the body is not JSON: %v", method, u.Path, err)
	}
	return resp.StatusCode, body
}

// TestServerSpeaksTwilio: the server answers as Twilio's Messages resource does, and
// refuses what Twilio refuses with Twilio's error codes.
func TestServerSpeaksTwilio(t *testing.T) {
	s := Start(t)
	ok := url.Values{"To": {"+447700900123"}, "From": {From}, "Body": {"Your code is 123456"}}
	status, body := post(t, s, "POST", "", AccountSID, AuthToken, ok)
	if status != 201 || body["status"] != "queued" || body["to"] != "+447700900123" || !strings.HasPrefix(body["sid"].(string), "SM") {
		t.Fatalf("accepted: %d %v", status, body)
	}
	if m := s.Next(t, "+447700900123"); m.Code() != "123456" || m.SID != body["sid"] {
		t.Fatalf("message %+v", m)
	}
	with := func(k, v string) url.Values {
		f := url.Values{}
		for kk, vv := range ok {
			f[kk] = vv
		}
		f.Set(k, v)
		return f
	}
	for _, c := range []struct {
		name, method, path, pass string
		form                     url.Values
		status, code             int
	}{
		{"WrongPath", "POST", "/2010-04-01/Accounts/ACX/Messages.json", AuthToken, ok, 404, 20404},
		{"WrongMethod", "GET", "", AuthToken, ok, 405, 20004},
		{"WrongToken", "POST", "", "nope", ok, 401, 20003},
		{"NoTo", "POST", "", AuthToken, with("To", ""), 400, 21604},
		{"BadTo", "POST", "", AuthToken, with("To", "07700900123"), 400, 21211},
		{"NoBody", "POST", "", AuthToken, with("Body", ""), 400, 21602},
		{"LongBody", "POST", "", AuthToken, with("Body", strings.Repeat("x", 1601)), 400, 21617},
		{"WrongFrom", "POST", "", AuthToken, with("From", "+15550000000"), 400, 21212},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, body := post(t, s, c.method, c.path, AccountSID, c.pass, c.form)
			if status != c.status || body["code"] != float64(c.code) || body["message"] == "" || body["more_info"] == nil || body["status"] != float64(c.status) {
				t.Fatalf("%d %v, want %d with code %d", status, body, c.status, c.code)
			}
		})
	}
	if n := len(s.Messages()); n != 1 || s.Refused() != 8 {
		t.Fatalf("%d accepted, %d refused", n, s.Refused())
	}
}
