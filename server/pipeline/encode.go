package pipeline

import (
	"time"

	json "github.com/goccy/go-json"
)

// Time is a timestamp on the wire: RFC 3339 in UTC with milliseconds
// ("2026-11-21T10:00:00.123Z"). It is formatted once, when a response is built, so
// encoding is a plain string copy.
type Time string

const wireTimeLayout = "2006-01-02T15:04:05.000Z07:00"

// WireTime is t on the wire.
func WireTime(t time.Time) Time { return Time(t.UTC().Format(wireTimeLayout)) }

// Parse returns the instant t names.
func (t Time) Parse() (time.Time, error) { return time.Parse(time.RFC3339Nano, string(t)) }

// WireTimePtr is *t on the wire, nil for nil.
func WireTimePtr(t *time.Time) *Time {
	if t == nil {
		return nil
	}
	w := WireTime(*t)
	return &w
}

// preEncoded is an output that may carry its JSON already: encoders send those bytes
// instead of encoding the value again.
type preEncoded interface{ EncodedJSON() []byte }

// EncodeOutput returns out's JSON, without HTML escaping.
func EncodeOutput(out any) ([]byte, error) {
	if e, ok := out.(preEncoded); ok {
		if raw := e.EncodedJSON(); raw != nil {
			return raw, nil
		}
	}
	return json.MarshalNoEscape(out)
}

// LinkURL is the absolute URL of an invite link token.
func (s *Core) LinkURL(token string) string { return s.BaseURL + "/i/" + token }
