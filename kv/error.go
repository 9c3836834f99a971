package kv

import (
	"errors"
	"strings"
)

// Error codes. Every error that leaves kv on purpose carries one of these; anything
// uncoded is an internal failure and reaches clients only as "Internal error.".
const (
	ENOTFOUND     = "ENOTFOUND"     // no such record in the caller's partition
	EINVALID      = "EINVALID"      // input breaks a record invariant (see Error.Fields)
	ECONFLICT     = "ECONFLICT"     // the record is not in a state that allows the change
	EFORBIDDEN    = "EFORBIDDEN"    // the actor may not do this
	ELOCKED       = "ELOCKED"       // the data folder is held by another process
	ELIMIT        = "ELIMIT"        // an admission limit is reached
	EUNAUTHORIZED = "EUNAUTHORIZED" // no valid credential
	EGONE         = "EGONE"         // the record has ended for good (expired, failed): start again
)

// Error is a coded error. Reason is a stable snake_case word the edge puts on the wire
// (for example "study_live"); Fields lists validation failures for EINVALID.
type Error struct {
	Code    string
	Reason  string
	Message string
	Fields  []FieldError
}

func (e *Error) Error() string {
	if len(e.Fields) > 0 {
		parts := make([]string, 0, len(e.Fields))
		for _, f := range e.Fields {
			parts = append(parts, f.String())
		}
		return e.Message + ": " + strings.Join(parts, "; ")
	}
	return e.Message
}

// FieldError is one validation failure, in domain terms: Loc is the path inside the
// operation's input (["context","k"], ["file_ids",2], ["patterns",0,"regex"]; empty for
// the input as a whole), Type the rule it broke (a stable snake_case word) and Ctx the
// limits (it never echoes the input). kv never says where on the wire a value came
// from: each surface adds its own location (REST puts "body", "query" or "path" in
// front, MCP names the argument, a form names its field).
type FieldError struct {
	Loc  []any          `json:"loc"`
	Msg  string         `json:"msg"`
	Type string         `json:"type"`
	Ctx  map[string]any `json:"ctx,omitempty"`
}

func (f FieldError) String() string {
	var b strings.Builder
	for i, l := range f.Loc {
		if i > 0 {
			b.WriteByte('.')
		}
		switch v := l.(type) {
		case string:
			b.WriteString(v)
		case int:
			b.WriteString(itoa(v))
		}
	}
	return b.String() + ": " + f.Msg
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	neg := n < 0
	if neg {
		n = -n
	}
	var buf [20]byte
	i := len(buf)
	for n > 0 {
		i--
		buf[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		buf[i] = '-'
	}
	return string(buf[i:])
}

// Errorf returns a coded error with a reason word and a human message.
func Errorf(code, reason, message string) *Error {
	return &Error{Code: code, Reason: reason, Message: message}
}

// Invalid returns an EINVALID error carrying the given field failures.
func Invalid(fields ...FieldError) *Error {
	return &Error{Code: EINVALID, Reason: "validation_error", Message: "Request validation failed", Fields: fields}
}

// ErrorCode returns the code of a kv.Error anywhere in err's chain, or "" when err is
// uncoded (an internal failure).
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}
