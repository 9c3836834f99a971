// Package sms sends text messages (two-step codes) through a provider. Many providers
// and gateways accept the Twilio Messages API form, so that is the one protocol spoken.
package sms

import "context"

// Sender delivers one text message. A nil Sender means no provider is configured: text
// messages are then not offered anywhere.
type Sender interface {
	// Send delivers body to the E.164 number to (e.g. "+447700900123").
	Send(ctx context.Context, to, body string) error
}
