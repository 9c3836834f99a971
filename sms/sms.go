// Package sms sends text messages (two-step codes) through a provider. Many providers
// and gateways accept the Twilio Messages API form, so that is the one protocol spoken.
// It is its own package because it is the one place that talks to an SMS provider:
// the web app and the account-access API both send through a Sender, and sms/smstest
// runs a local server speaking the same protocol for their tests.
package sms

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Sender delivers one text message. A nil Sender means no provider is configured: text
// messages are then not offered anywhere.
type Sender interface {
	// Send delivers body to the E.164 number to (e.g. "+447700900123").
	Send(ctx context.Context, to, body string) error
}

// CodeText is the text that carries a six-digit code: the code first (a lock screen
// shows it), how long it lasts, and a last line in the origin-bound one-time code
// form ("@host #code", the host without a port) so a phone's browser can offer it on baseURL's pages only.
func CodeText(code string, ttl time.Duration, baseURL string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Your interviewd code is %s. It expires in %d minutes. Never share it: we will not ask you for it.", code, int(ttl/time.Minute))
	if u, err := url.Parse(baseURL); err == nil && u.Hostname() != "" {
		fmt.Fprintf(&b, "\n\n@%s #%s", u.Hostname(), code)
	}
	return b.String()
}
