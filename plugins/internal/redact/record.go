package redact

import (
	"bufio"
	"errors"
	"io"
	"strconv"

	"interviewd/plugins/internal/jsontext"
)

// MaxLine bounds one NDJSON line (the configuration or a record) the redactor reads.
const MaxLine = 32 << 20

// Record appends the redacted form of one NDJSON record to dst and returns it. A record
// is a JSON object; every string anywhere inside its "cells" member is redacted, while
// member names and every other member ("id", ...) are copied unchanged. The output is
// compact JSON on one line. It returns an error if line is not exactly one JSON object.
func (r *Redactor) Record(dst, line []byte) ([]byte, error) {
	i, err := jsontext.Expect(line, 0, '{')
	if err != nil {
		return dst, errors.New("record is not a JSON object")
	}
	dst = append(dst, '{')
	i = jsontext.SkipSpace(line, i)
	if i < len(line) && line[i] == '}' {
		return append(dst, '}'), jsontext.EndOfLine(line, i+1)
	}
	for first := true; ; first = false {
		if !first {
			dst = append(dst, ',')
		}
		i = jsontext.SkipSpace(line, i)
		if r.cell, i, err = jsontext.DecodeString(r.cell[:0], line, i); err != nil {
			return dst, err
		}
		dst = jsontext.AppendString(dst, r.cell)
		isCells := string(r.cell) == "cells"
		if i, err = jsontext.Expect(line, i, ':'); err != nil {
			return dst, err
		}
		dst = append(dst, ':')
		if isCells {
			dst, i, err = r.value(dst, line, i, 0)
		} else {
			start := jsontext.SkipSpace(line, i)
			i, err = jsontext.SkipValue(line, start)
			dst = append(dst, line[start:i]...)
		}
		if err != nil {
			return dst, err
		}
		i = jsontext.SkipSpace(line, i)
		switch {
		case i >= len(line):
			return dst, jsontext.ErrEnd
		case line[i] == ',':
			i++
		case line[i] == '}':
			return append(dst, '}'), jsontext.EndOfLine(line, i+1)
		default:
			return dst, jsontext.Syntax(i, "want ',' or '}'")
		}
	}
}

// value copies the JSON value at s[i] to dst with every string in it redacted, and
// returns dst and the index after the value.
func (r *Redactor) value(dst, s []byte, i, depth int) ([]byte, int, error) {
	i = jsontext.SkipSpace(s, i)
	if i >= len(s) {
		return dst, i, jsontext.ErrEnd
	}
	var err error
	switch s[i] {
	case '"':
		if len(r.patterns) == 0 {
			if out, end, ok := r.rawString(dst, s, i); ok {
				return out, end, nil
			}
		}
		if r.cell, i, err = jsontext.DecodeString(r.cell[:0], s, i); err != nil {
			return dst, i, err
		}
		r.red = r.Text(r.red[:0], r.cell)
		return jsontext.AppendString(dst, r.red), i, nil
	case '{', '[':
		if depth >= jsontext.MaxDepth {
			return dst, i, jsontext.TooDeep(i)
		}
		return r.container(dst, s, i, depth+1)
	}
	start := i
	if i, err = jsontext.SkipValue(s, i); err != nil {
		return dst, i, err
	}
	return append(dst, s[start:i]...), i, nil
}

// rawString redacts the JSON string at s[i] without decoding it, when that gives the
// same result: its only escapes are the two-byte ones (\n, \", ...), and there are no
// custom patterns (a regular expression could match inside an escape). The built-in
// scanners then run over a copy in which each escape is two 0x01 bytes, which no class
// continues through, just as none continues through the decoded newline or quote; the
// copy has the raw string's length, so the raw bytes are written out around the
// matches. That saves decoding and re-encoding each cell. It returns false, having
// written nothing, for a string that needs the decoding path, including a malformed
// one (whose error that path reports).
func (r *Redactor) rawString(dst, s []byte, i int) ([]byte, int, bool) {
	start := i + 1
	end, esc, ok := jsontext.RawString(s, start, r.esc[:0])
	r.esc = esc
	if !ok {
		return dst, i, false
	}
	raw := s[start:end]
	dst = append(dst, '"')
	changed := false
	if r.email || r.phone || r.card || r.ip {
		scan := raw
		if len(esc) > 0 {
			r.cell = append(r.cell[:0], raw...)
			for _, k := range esc {
				r.cell[k-start], r.cell[k-start+1] = 1, 1
			}
			scan = r.cell
		}
		dst, changed = r.builtins(dst, scan, raw)
	}
	if !changed {
		dst = append(dst, raw...)
	}
	return append(dst, '"'), end + 1, true
}

// container copies the object or array at s[i], redacting the strings among its values.
func (r *Redactor) container(dst, s []byte, i, depth int) ([]byte, int, error) {
	obj := s[i] == '{'
	closing := byte(']')
	if obj {
		closing = '}'
	}
	dst = append(dst, s[i])
	i = jsontext.SkipSpace(s, i+1)
	if i < len(s) && s[i] == closing {
		return append(dst, closing), i + 1, nil
	}
	var err error
	for {
		if obj {
			i = jsontext.SkipSpace(s, i)
			start := i
			// Validate the member name without redacting it.
			if r.cell, i, err = jsontext.DecodeString(r.cell[:0], s, i); err != nil {
				return dst, i, err
			}
			dst = append(dst, s[start:i]...)
			if i, err = jsontext.Expect(s, i, ':'); err != nil {
				return dst, i, err
			}
			dst = append(dst, ':')
		}
		if dst, i, err = r.value(dst, s, i, depth); err != nil {
			return dst, i, err
		}
		i = jsontext.SkipSpace(s, i)
		switch {
		case i >= len(s):
			return dst, i, jsontext.ErrEnd
		case s[i] == ',':
			dst = append(dst, ',')
			i++
		case s[i] == closing:
			return append(dst, closing), i + 1, nil
		default:
			return dst, i, jsontext.Syntax(i, "want ',' or closing bracket")
		}
	}
}

// Run speaks the redactor side of the plugin ABI: it reads the {"config": ...} line and
// then one record per line from stdin, and writes one redacted record per line to
// stdout, in order. It returns an error (for the plugin to print before exiting
// non-zero) for an invalid configuration or custom pattern, a malformed record or a
// failed write.
func Run(stdin io.Reader, stdout io.Writer) error {
	lines := jsontext.NewLineReader(stdin, MaxLine)
	line, err := lines.Next()
	if errors.Is(err, io.EOF) {
		return ErrConfigLine
	}
	if err != nil {
		return err
	}
	raw, found, err := jsontext.Member(line, "config")
	if err != nil || !found {
		return ErrConfigLine
	}
	cfg, err := ParseConfig(raw)
	if err != nil {
		return err
	}
	red, err := New(cfg)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(stdout, 64<<10)
	var out []byte
	for {
		line, err := lines.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if out, err = red.Record(out[:0], line); err != nil {
			return jsontext.Prefix("line "+strconv.Itoa(lines.Line()), err)
		}
		out = append(out, '\n')
		if _, err := w.Write(out); err != nil {
			return err
		}
	}
	return w.Flush()
}
