package server

import (
	"context"
	stdjson "encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"interviewd/kv"
	a2asurface "interviewd/server/a2a"
	"interviewd/server/pipeline"
)

// A message part holding text that is not valid UTF-8 (raw bytes that are not UTF-8, or
// a \u escape of an unpaired UTF-16 surrogate, which a JSON decoder turns into U+FFFD)
// or a NUL character is refused as REST refuses such text: INVALID_PARAMS naming the
// part, on the fast path, through the SDK's binding and for streams alike, and nothing
// runs (no task, no study authored from replaced text).
func TestA2ARefusesInvalidText(t *testing.T) {
	e := mustServe(t)
	e.mustKey("agent", e.orgB.ID, kv.EnvLive, allScopes)
	p := kv.Partition{Org: e.orgB.ID, Env: kv.EnvLive}
	create := `Create a study about why nurses leave `
	immediately := `{"returnImmediately":true}`
	for _, tc := range []struct {
		name, method, parts, config, field, rule string
	}{
		{"ErrLoneLowSurrogate", "SendMessage", `[{"text":"` + create + `\udc00 night shifts"}]`, "", "message.parts[0].text", "valid UTF-8"},
		{"ErrLoneHighSurrogate", "SendMessage", `[{"text":"` + create + `\ud800x"}]`, "", "message.parts[0].text", "valid UTF-8"},
		{"ErrRawInvalidBytes", "SendMessage", `[{"text":"` + create + "\xff\xfe" + `"}]`, "", "message.parts[0].text", "valid UTF-8"},
		{"ErrNUL", "SendMessage", `[{"text":"` + create + `\u0000"}]`, "", "message.parts[0].text", "NUL"},
		{"ErrNULEscapedMemberName", "SendMessage", `[{"\u0074ext":"` + create + `\u0000"}]`, "", "message.parts[0].text", "NUL"},
		{"ErrNULMemberNameInCapitals", "SendMessage", `[{"TEXT":"` + create + `\u0000"}]`, "", "message.parts[0].TEXT", "NUL"},
		{"ErrSecondPart", "SendMessage", `[{"text":"hello"},{"text":"\udfff"}]`, "", "message.parts[1].text", "valid UTF-8"},
		{"ErrDataPartFastPath", "SendMessage", `[{"data":{"skill":"create_participant_link","arguments":{"study_id":"` + kv.NewV4().String() + `","note":"` + "\xff" + `"}}}]`, "", "message.parts[0].data", "valid UTF-8"},
		{"ErrDataPartSDKPath", "SendMessage", `[{"data":{"skill":"create_study","arguments":{"guidance":"` + create + `\udc00"}}}]`, immediately, "message.parts[0].data", "valid UTF-8"},
		{"ErrStreaming", "SendStreamingMessage", `[{"text":"` + create + `\udc00"}]`, "", "message.parts[0].text", "valid UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			params := `{"message":{"messageId":"` + tc.name + `","role":"ROLE_USER","parts":` + tc.parts + `}`
			if tc.config != "" {
				params += `,"configuration":` + tc.config
			}
			body := rpcCall(tc.method, params+"}")
			var a rpcAnswer
			if tc.method == "SendStreamingMessage" {
				a = e.streamRefusal(t, body)
			} else {
				a = e.rpc("agent", body)
			}
			if a.status != 200 || a.Error == nil || a.Error.Code != -32602 || a.ID != "req-1" {
				t.Fatalf("%d %+v %s", a.status, a.Error, a.Result)
			}
			if !strings.HasPrefix(a.Error.Message, tc.field+": ") || !strings.Contains(a.Error.Message, tc.rule) || a.errorCode() != "validation_error" {
				t.Fatalf("message %q (code %q), want it to name %s and say %q", a.Error.Message, a.errorCode(), tc.field, tc.rule)
			}
		})
	}
	page, total, err := e.db.FindAgentTasks(context.Background(), kv.AgentTaskFilter{Partition: p, Limit: 10})
	if err != nil || total != 0 {
		t.Fatalf("refused messages made %d tasks: %v %+v", total, err, page.Items)
	}

	// Valid text, a surrogate pair for an emoji included, is taken.
	a := e.rpc("agent", rpcCall("SendMessage", `{"message":{"messageId":"ok","role":"ROLE_USER","parts":[{"text":"Tell me a joke \ud83d\ude00 caf\u00e9"}]}}`))
	if a.Error != nil || !strings.Contains(string(a.Result), "TASK_STATE_INPUT_REQUIRED") || !strings.Contains(string(a.Result), "😀 café") {
		t.Fatalf("valid text: %+v %s", a.Error, a.Result)
	}
}

// streamRefusal sends a streaming request and returns the one event its stream holds,
// which must be a JSON-RPC error.
func (e *testEnv) streamRefusal(t *testing.T, body string) rpcAnswer {
	t.Helper()
	r := e.do("POST", "/v1/a2a", "agent", body, "Accept", "text/event-stream")
	data, ok := strings.CutPrefix(string(r.body), "data: ")
	if !ok || !strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") || strings.Count(string(r.body), "data: ") != 1 {
		t.Fatalf("not one event (%d %s): %s", r.status, r.header.Get("Content-Type"), r.body)
	}
	a := rpcAnswer{status: r.status, header: r.header}
	if err := stdjson.Unmarshal([]byte(data), &a); err != nil {
		t.Fatalf("event %q: %v", data, err)
	}
	return a
}

// FuzzA2AMessageText: whatever the body, the text check refuses with INVALID_PARAMS
// naming a part, or lets through only parts whose text decodes as sent: no character
// replaced by U+FFFD, and none the text rule refuses.
func FuzzA2AMessageText(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"parts":[{"text":"hi \ud83d\ude00"}]}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"parts":[{"text":"\udc00"}]}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"parts":[{"data":{"skill":"whoami"}},{"text":"a\u0000"}]}}}`,
		"{\"method\":\"SendMessage\",\"params\":{\"message\":{\"parts\":[{\"text\":\"\xff\"}]}}}",
		`{"method":"SendMessage","params":{"message":{"parts":[{"\u0074ext":"\ufffd"}]}}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		env := a2asurface.PeekRPC([]byte(body))
		err := env.CheckMessageText()
		if err != nil {
			var ae *a2a.Error
			if !errors.As(err, &ae) || !errors.Is(err, a2a.ErrInvalidParams) || !strings.HasPrefix(ae.Message, "message.parts[") {
				t.Fatalf("refusal %v", err)
			}
			return
		}
		if env.Method != "SendMessage" && env.Method != "SendStreamingMessage" {
			return // no message: the binding answers whatever it is
		}
		for _, part := range env.Params.Message.Parts {
			var p struct {
				Text *string `json:"text"` // matched as the binding matches it
			}
			if stdjson.Unmarshal(part, &p) != nil || p.Text == nil {
				continue
			}
			text := *p.Text
			sent := string(part)
			if pipeline.CheckText(text, nil) != nil || (strings.ContainsRune(text, utf8.RuneError) && !strings.Contains(sent, "\uFFFD") && !strings.Contains(strings.ToLower(sent), `\ufffd`)) {
				t.Fatalf("let through %q (decoded %q)", sent, text)
			}
		}
	})
}

// Only a part with no text member (under any case of its name), no \u escape and
// valid UTF-8 skips the member-by-member check.
func TestA2APlainPart(t *testing.T) {
	for part, plain := range map[string]bool{
		`{"data":{"skill":"whoami","arguments":{"study_id":"x"}}}`:      true,
		`{"data":{"skill":"get_study"},"mediaType":"application/json"}`: true,
		`{"text":"hello"}`:               false,
		`{"TEXT":"hello"}`:               false,
		`{"data":{},"Text":"hello"}`:     false,
		`{"data":{"note":"caf\u00e9"}}`:  false,
		"{\"data\":{\"note\":\"\xff\"}}": false,
	} {
		if got := a2asurface.PlainPart([]byte(part)); got != plain {
			t.Errorf("%s: plain %v, want %v", part, got, plain)
		}
	}
}
