package plugins

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"interviewd/plugins/internal/jsontext"
)

// Plugin is a loaded plugin: its bytes, hash and descriptor. Each call runs it in a
// fresh instance; a Plugin is safe for concurrent use and stays usable for the life of
// its Host (its compiled code may be dropped and recompiled meanwhile).
type Plugin struct {
	host  *Host
	wasm  []byte
	hash  [32]byte
	desc  Descriptor
	label string // for errors: the name, or the hash before the name is known
}

// Descriptor returns what the plugin said about itself.
func (p *Plugin) Descriptor() Descriptor { return p.desc }

// Hash returns the hex SHA-256 of the plugin's bytes.
func (p *Plugin) Hash() string { return hex.EncodeToString(p.hash[:]) }

// fail returns an *Error about p.
func (p *Plugin) fail(op string, reason Reason, msg string, cause error) *Error {
	return &Error{Plugin: p.label, Op: op, Reason: reason, Message: msg, Err: cause}
}

// Redact runs a redactor over records with the given configuration (any value that
// encodes as a JSON object, or nil for {}), and returns the redacted records, one per
// input record and in the same order, each a compact JSON object. The returned records
// share one buffer. It returns a plain error if config or a record is not a JSON
// object, and an *Error if the plugin is not a redactor, fails, or prints anything but
// one JSON object per record.
func (p *Plugin) Redact(ctx context.Context, config any, records []json.RawMessage) ([]json.RawMessage, error) {
	if p.desc.Kind != KindRedactor {
		return nil, p.fail("redact", ReasonInvalid, fmt.Sprintf("is a %s, not a redactor", p.desc.Kind), nil)
	}
	in, err := encodeInput(config, records)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := p.call(ctx, "redact", bytes.NewReader(in), &out); err != nil {
		return nil, err
	}
	return p.splitRecords(out.Bytes(), len(records))
}

// splitRecords checks a redactor's output, one JSON object per line and n lines, and
// returns the lines.
func (p *Plugin) splitRecords(out []byte, n int) ([]json.RawMessage, error) {
	recs := make([]json.RawMessage, 0, n)
	for len(out) > 0 {
		line := out
		if i := bytes.IndexByte(out, '\n'); i >= 0 {
			line, out = out[:i], out[i+1:]
		} else {
			out = nil
		}
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if len(recs) == n {
			if len(bytes.TrimSpace(line)) == 0 {
				continue // trailing blank lines are harmless
			}
			return nil, p.fail("redact", ReasonOutput, fmt.Sprintf("printed more than the %d records it was given", n), nil)
		}
		if err := checkRecord(line); err != nil {
			return nil, p.fail("redact", ReasonOutput,
				fmt.Sprintf("output line %d is %s: %.60q", len(recs)+1, err, line), nil)
		}
		recs = append(recs, json.RawMessage(line))
	}
	if len(recs) != n {
		return nil, p.fail("redact", ReasonOutput, fmt.Sprintf("printed %d records for the %d it was given", len(recs), n), nil)
	}
	return recs, nil
}

// Format runs a formatter over records with the given configuration (any value that
// encodes as a JSON object, or nil for {}) and streams the artifact to w. If it fails,
// w may have received part of the artifact, so callers write to a temporary place. It
// returns a plain error if config or a record is not a JSON object, and an *Error if
// the plugin is not a formatter, fails, writes more than Config.MaxOutput, or writing
// to w fails (ReasonWrite, wrapping w's error).
func (p *Plugin) Format(ctx context.Context, config any, records []json.RawMessage, w io.Writer) error {
	if p.desc.Kind != KindFormatter {
		return p.fail("format", ReasonInvalid, fmt.Sprintf("is a %s, not a formatter", p.desc.Kind), nil)
	}
	in, err := encodeInput(config, records)
	if err != nil {
		return err
	}
	return p.call(ctx, "format", bytes.NewReader(in), w)
}

// call runs the plugin once without arguments.
func (p *Plugin) call(ctx context.Context, op string, stdin io.Reader, stdout io.Writer) error {
	e, err := p.host.acquire(ctx, p, false)
	if err != nil {
		return err
	}
	defer p.host.release(e)
	return p.host.run(ctx, p, e, op, p.host.cfg.Timeout, nil, stdin, stdout)
}

// encodeInput writes the ABI's stdin: the {"config": ...} line, then each record
// compacted onto one line. It returns an error if config does not encode as a JSON
// object (or null) or a record is not a JSON object.
func encodeInput(config any, records []json.RawMessage) ([]byte, error) {
	cfg := []byte("{}")
	if config != nil {
		var err error
		if cfg, err = json.Marshal(config); err != nil {
			return nil, fmt.Errorf("plugins: config: %w", err)
		}
		if string(cfg) == "null" {
			cfg = []byte("{}")
		}
		if !isJSONObject(cfg) {
			return nil, fmt.Errorf("plugins: config is not a JSON object")
		}
	}
	size := len(cfg) + 12
	for _, r := range records {
		size += len(r) + 1
	}
	buf := bytes.NewBuffer(make([]byte, 0, size))
	buf.WriteString(`{"config":`)
	buf.Write(cfg)
	buf.WriteString("}\n")
	for i, r := range records {
		if err := checkRecord(r); err != nil {
			return nil, fmt.Errorf("plugins: record %d: %w", i+1, err)
		}
		if bytes.IndexByte(r, '\n') < 0 {
			buf.Write(r) // already one line: json.Marshal output, typically
		} else if err := json.Compact(buf, r); err != nil {
			return nil, fmt.Errorf("plugins: record %d: %w", i+1, err)
		}
		buf.WriteByte('\n')
	}
	return buf.Bytes(), nil
}

// checkRecord returns an error unless r is one JSON object in valid UTF-8. It uses the
// built-in plugins' own scanner rather than encoding/json: records are mostly long
// strings, which it crosses 64 bytes at a time, and this check runs on every record
// going into and coming out of every plugin.
func checkRecord(r []byte) error {
	if err := checkObject(r); err != nil {
		return err
	}
	if !utf8.Valid(r) {
		return errors.New("not valid UTF-8")
	}
	return nil
}

// isJSONObject reports whether b is exactly one valid JSON object.
func isJSONObject(b []byte) bool { return checkObject(b) == nil }

// checkObject returns an error unless b is exactly one valid JSON object, nested at
// most jsontext.MaxDepth deep.
func checkObject(b []byte) error {
	i := jsontext.SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return errors.New("not a JSON object")
	}
	end, err := jsontext.SkipValue(b, i)
	if err == nil {
		err = jsontext.EndOfLine(b, end)
	}
	if err != nil {
		return fmt.Errorf("not a JSON object (%w)", err)
	}
	return nil
}
