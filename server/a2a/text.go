package a2a

import (
	"bytes"
	"interviewd/server/pipeline"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/a2aproject/a2a-go/v2/a2a"
	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"
)

// rpcEnvelope is what the A2A endpoint reads of a JSON-RPC body before the binding
// does: the method, the id to answer with, and a message's parts as sent.
type rpcEnvelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Message struct {
			Parts []json.RawMessage `json:"parts"`
		} `json:"message"`
	} `json:"params"`
}

// PeekRPC reads body's envelope; a body that is not one leaves it empty (the binding
// answers it).
func PeekRPC(body []byte) rpcEnvelope {
	var env rpcEnvelope
	if json.Unmarshal(body, &env) != nil {
		return rpcEnvelope{}
	}
	return env
}

// streaming reports whether the body calls a method answered with a stream.
func (env *rpcEnvelope) streaming() bool {
	return env.Method == "SendStreamingMessage" || env.Method == "SubscribeToTask"
}

// CheckMessageText applies the text rule every surface follows (checkText: valid UTF-8,
// no NUL) to each part of the message a SendMessage or SendStreamingMessage carries. It
// reads the parts as sent: a JSON decoder, the binding's included, turns invalid bytes
// and unpaired UTF-16 surrogate escapes into U+FFFD, after which nothing can tell them
// from text sent as U+FFFD, and a study would be authored from replaced text. It
// returns the INVALID_PARAMS refusal naming the first part member that breaks the
// rule, or nil.
func (env *rpcEnvelope) CheckMessageText() error {
	if env.Method != "SendMessage" && env.Method != "SendStreamingMessage" {
		return nil
	}
	for i, part := range env.Params.Message.Parts {
		if PlainPart(part) {
			continue
		}
		loc := "message.parts[" + strconv.Itoa(i) + "]"
		var members map[string]json.RawMessage
		if json.Unmarshal(part, &members) == nil {
			for _, name := range pipeline.SortedKeys(members) {
				if err := checkPartMember(loc+"."+name, name, members[name]); err != nil {
					return err
				}
			}
		}
		if !utf8.Valid(part) || pipeline.LoneSurrogate(part) { // a member's name
			return textRefusal(loc, "Input should be valid UTF-8.", "string_unicode")
		}
	}
	return nil
}

// PlainPart reports whether a part needs no closer look: valid UTF-8 with no \u escape
// (so no surrogate, no NUL, and no member name written in escapes) and no text member.
// A skill's data part usually is.
func PlainPart(part json.RawMessage) bool {
	if !utf8.Valid(part) || bytes.Contains(part, []byte(`\u`)) {
		return false
	}
	for i := 0; i+6 <= len(part); i++ {
		if part[i] == '"' && bytes.EqualFold(part[i:i+6], []byte(`"text"`)) { // as decoders match names
			return false
		}
	}
	return true
}

// checkPartMember checks one member of a part: any text in it is valid UTF-8, and a
// text part's text follows the whole rule.
func checkPartMember(loc, name string, raw json.RawMessage) error {
	if !utf8.Valid(raw) || pipeline.LoneSurrogate(raw) {
		return textRefusal(loc, "Input should be valid UTF-8.", "string_unicode")
	}
	if !strings.EqualFold(name, "text") { // as JSON decoders match member names
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return nil // not a string: the binding refuses the part
	}
	if fe := pipeline.CheckText(s, nil); fe != nil {
		return textRefusal(loc, fe.Msg, fe.Type)
	}
	return nil
}

// textRefusal is INVALID_PARAMS for text at loc breaking rule typ, as REST's 422 would
// locate and word it.
func textRefusal(loc, msg, typ string) error {
	return a2a.NewError(a2a.ErrInvalidParams, loc+": "+msg).
		WithErrorInfoMeta(map[string]string{"code": "validation_error", "field": loc, "type": typ})
}

// writeRPCRefusal answers the request of env with err, as the binding would: a JSON-RPC
// error, or for a streaming method a stream whose one event is that error (A2A clients
// read a streaming method's answer as events).
func writeRPCRefusal(c *fasthttp.RequestCtx, env *rpcEnvelope, err error) {
	id := env.ID
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	writeRPCResponse(c, id, "error", pipeline.MustRawJSON(rpcErrorOf(err)))
	if env.streaming() {
		c.SetContentType("text/event-stream")
		c.Response.Header.Set("Cache-Control", "no-cache")
		c.SetBody(append(append([]byte("data: "), bytes.TrimSpace(c.Response.Body())...), "\n\n"...))
	}
}
