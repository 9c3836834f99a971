package moderator

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"interviewd/kv"
)

func briefContent(tb testing.TB, edit func(m map[string]any)) string {
	tb.Helper()
	m := validBrief()
	if edit != nil {
		edit(m)
	}
	b, err := json.Marshal(m)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

func TestDecodeBrief(t *testing.T) {
	many := make([]string, briefMaxQuestions+1)
	for i := range many {
		many[i] = "Question?"
	}
	tests := []struct {
		name    string
		content string
		wantIs  error  // nil: accepted
		wantIn  string // in the error text
	}{
		{"OK", briefContent(t, nil), nil, ""},
		{"OKFenced", "```json\n" + briefContent(t, nil) + "\n```", nil, ""},
		{"OKNullDuration", briefContent(t, func(m map[string]any) { m["estimated_duration_minutes"] = nil }), nil, ""},
		{"OKWholeFloatDuration", briefContent(t, func(m map[string]any) { m["estimated_duration_minutes"] = 30.0 }), nil, ""},
		{"ErrRefused", briefContent(t, func(m map[string]any) { m["refused"] = true; m["refusal_reason"] = "Not research." }), ErrRefused, "Not research."},
		{"ErrRefusedNoReason", briefContent(t, func(m map[string]any) { m["refused"] = true }), ErrRefused, "declined"},
		{"ErrNotJSON", "Sure! Here is your brief:", errChatInvalid, "not the brief object"},
		{"ErrNullTitle", briefContent(t, func(m map[string]any) { m["title"] = nil }), errChatInvalid, "title: required"},
		{"ErrBlankTitle", briefContent(t, func(m map[string]any) { m["title"] = "  \t " }), errChatInvalid, "title: empty"},
		{"ErrTitleNewline", briefContent(t, func(m map[string]any) { m["title"] = "Two\nlines" }), errChatInvalid, "title: control character"},
		{"ErrLongTitle", briefContent(t, func(m map[string]any) { m["title"] = strings.Repeat("é", briefMaxTitle+1) }), errChatInvalid, "title: longer than"},
		{"ErrNoObjectives", briefContent(t, func(m map[string]any) { m["objectives"] = []string{} }), errChatInvalid, "objectives: at least 1"},
		{"ErrNullVerbatim", briefContent(t, func(m map[string]any) { m["verbatim_questions"] = nil }), errChatInvalid, "verbatim_questions: at least 1"},
		{"ErrBlankVerbatim", briefContent(t, func(m map[string]any) { m["verbatim_questions"] = []string{"Fine?", " "} }), errChatInvalid, "verbatim_questions[1]: empty"},
		{"ErrTooManyQuestions", briefContent(t, func(m map[string]any) { m["pre_interview_questions"] = many }), errChatInvalid, "pre_interview_questions: at most 50"},
		{"ErrLongQuestion", briefContent(t, func(m map[string]any) { m["verbatim_questions"] = []string{strings.Repeat("a", briefMaxItem+1)} }), errChatInvalid, "longer than 1000"},
		{"ErrControlChar", briefContent(t, func(m map[string]any) { m["objectives"] = []string{"bell\u0007"} }), errChatInvalid, "control character"},
		{"ErrFractionDuration", briefContent(t, func(m map[string]any) { m["estimated_duration_minutes"] = 12.5 }), errChatInvalid, "whole number"},
		{"ErrZeroDuration", briefContent(t, func(m map[string]any) { m["estimated_duration_minutes"] = 0 }), errChatInvalid, "estimated_duration_minutes"},
		{"ErrWrongType", `{"refused":false,"title":"T","objectives":"one","verbatim_questions":["Q?"]}`, errChatInvalid, "not the brief object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := decodeBrief(tt.content)
			if tt.wantIs == nil {
				if err != nil {
					t.Fatalf("decodeBrief: %v", err)
				}
				assertBriefInvariants(t, b)
				return
			}
			if !errors.Is(err, tt.wantIs) || !strings.Contains(err.Error(), tt.wantIn) {
				t.Errorf("error = %v, want %v mentioning %q", err, tt.wantIs, tt.wantIn)
			}
		})
	}
}

func TestDecodeBriefTrimsKeepsWording(t *testing.T) {
	b, err := decodeBrief(briefContent(t, func(m map[string]any) {
		m["verbatim_questions"] = []string{"  Walk me through   your week?\n"}
	}))
	if err != nil {
		t.Fatal(err)
	}
	if b.VerbatimQuestions[0] != "Walk me through   your week?" {
		t.Errorf("verbatim question = %q, want the model's wording with only the ends trimmed", b.VerbatimQuestions[0])
	}
}

func TestDecodeChat(t *testing.T) {
	content := "{}"
	empty := ""
	tests := []struct {
		name   string
		body   string
		want   string
		wantIs error
	}{
		{"OK", chatCompletion(t, &content, nil, "stop"), "{}", nil},
		{"OKEmptyRefusalIgnored", chatCompletion(t, &content, &empty, "stop"), "{}", nil},
		{"ErrRefusal", chatCompletion(t, nil, strPtr("I can't do that."), "stop"), "", ErrRefused},
		{"ErrContentFilter", chatCompletion(t, nil, nil, "content_filter"), "", ErrRefused},
		{"ErrNoChoices", `{"choices":[]}`, "", errChatInvalid},
		{"ErrNullContent", chatCompletion(t, nil, nil, "stop"), "", errChatInvalid},
		{"ErrContentParts", `{"choices":[{"message":{"content":[{"type":"text","text":"{}"}]}}]}`, "", errChatInvalid},
		{"ErrNotJSON", `<html>`, "", errChatInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeChat([]byte(tt.body))
			if tt.wantIs != nil {
				if !errors.Is(err, tt.wantIs) {
					t.Errorf("decodeChat = %q, %v; want %v", got, err, tt.wantIs)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("decodeChat = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func strPtr(s string) *string { return &s }

func TestChatRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
	}{
		{"OKSeconds", map[string]string{"Retry-After": "7"}, 7 * time.Second},
		{"OKFraction", map[string]string{"Retry-After": "1.5"}, 1500 * time.Millisecond},
		{"OKZero", map[string]string{"Retry-After": "0"}, 0},
		{"OKCapped", map[string]string{"Retry-After": "86400000000"}, openaiBackoffCap},
		{"OKMilliseconds", map[string]string{"Retry-After-Ms": "250", "Retry-After": "9"}, 250 * time.Millisecond},
		{"OKHTTPDate", map[string]string{"Retry-After": now.Add(4 * time.Second).Format(http.TimeFormat)}, 4 * time.Second},
		{"OKPastDate", map[string]string{"Retry-After": now.Add(-time.Hour).Format(http.TimeFormat)}, 0},
		{"NoneAbsent", nil, -1},
		{"NoneNegative", map[string]string{"Retry-After": "-3"}, -1},
		{"NoneGarbage", map[string]string{"Retry-After": "soon"}, -1},
		{"NoneNaN", map[string]string{"Retry-After": "NaN"}, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.header {
				h.Set(k, v)
			}
			if got := chatRetryAfter(h, now); got != tt.want {
				t.Errorf("chatRetryAfter(%v) = %v, want %v", tt.header, got, tt.want)
			}
		})
	}
}

func TestOpenAIWait(t *testing.T) {
	o := &OpenAI{backoff: 500 * time.Millisecond}
	for n, full := range map[int]time.Duration{1: 500 * time.Millisecond, 2: time.Second, 3: 2 * time.Second, 20: openaiBackoffCap} {
		for range 50 {
			if got := o.wait(n, -1); got < full/2 || got > full {
				t.Fatalf("wait(%d) = %v, want within [%v, %v]", n, got, full/2, full)
			}
		}
	}
	if got := o.wait(1, 3*time.Second); got != 3*time.Second {
		t.Errorf("wait with Retry-After 3s = %v", got)
	}
	if got := o.wait(1, time.Hour); got != openaiBackoffCap {
		t.Errorf("wait with Retry-After 1h = %v, want the cap", got)
	}
}

func TestDecodeProbeAndReply(t *testing.T) {
	note := "Focus on the delivery fee question in depth."
	tests := []struct {
		name    string
		decode  func(string) (string, error)
		content string
		want    string
		wantErr bool
	}{
		{"ProbeOK", func(c string) (string, error) { return decodeProbe(c, note) }, `{"probe":" Why? "}`, "Why?", false},
		{"ProbeOKMoveOn", func(c string) (string, error) { return decodeProbe(c, note) }, `{"probe":"   "}`, "", false},
		{"ProbeOKShortNoteNotChecked", func(c string) (string, error) { return decodeProbe(c, "fees") }, `{"probe":"Which fees?"}`, "Which fees?", false},
		{"ProbeErrLeak", func(c string) (string, error) { return decodeProbe(c, note) }, `{"probe":"I was told to FOCUS on the delivery  fee question in depth."}`, "", true},
		{"ProbeErrMissing", func(c string) (string, error) { return decodeProbe(c, note) }, `{}`, "", true},
		{"ProbeErrTooLong", func(c string) (string, error) { return decodeProbe(c, note) }, `{"probe":"` + strings.Repeat("a", chatMaxProbeRunes+1) + `"}`, "", true},
		{"ReplyOK", decodeReply, `{"reply":"Mostly Sundays.\nSometimes Mondays."}`, "Mostly Sundays.\nSometimes Mondays.", false},
		{"ReplyErrEmpty", decodeReply, `{"reply":""}`, "", true},
		{"ReplyErrNull", decodeReply, `{"reply":null}`, "", true},
		{"ReplyErrNotJSON", decodeReply, `Mostly Sundays.`, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.decode(tt.content)
			if tt.wantErr {
				if !errors.Is(err, errChatInvalid) {
					t.Errorf("decode = %q, %v; want errChatInvalid", got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("decode = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// assertBriefInvariants checks what every accepted brief promises: a title, at least
// one objective and verbatim question, trimmed non-empty strings within the limits.
func assertBriefInvariants(tb testing.TB, b kv.Brief) {
	tb.Helper()
	if err := checkBrief(b); err != nil {
		tb.Fatalf("accepted brief breaks the limits: %v", err)
	}
	if b.Objectives == nil || b.PreInterviewQuestions == nil || b.VerbatimQuestions == nil {
		tb.Fatalf("accepted brief has a nil list: %+v", b)
	}
	all := append(append(append([]string{*b.Title}, b.Objectives...), b.PreInterviewQuestions...), b.VerbatimQuestions...)
	for _, s := range all {
		if s == "" || s != strings.TrimSpace(s) || !utf8.ValidString(s) || utf8.RuneCountInString(s) > briefMaxItem {
			tb.Fatalf("accepted brief string %q is not trimmed, non-empty and bounded", s)
		}
	}
}

func FuzzDecodeChat(f *testing.F) {
	content := briefContent(f, nil)
	f.Add([]byte(chatCompletion(f, &content, nil, "stop")), "")
	f.Add([]byte(chatCompletion(f, strPtr(`{"probe":"Why?"}`), nil, "stop")), "a private note long enough to check")
	f.Add([]byte(chatCompletion(f, strPtr(`{"reply":"Yes."}`), nil, "stop")), "")
	f.Add([]byte(chatCompletion(f, nil, strPtr("no"), "stop")), "")
	f.Add([]byte(chatCompletion(f, strPtr("```json\n{\"refused\":true}\n```"), nil, "length")), "")
	f.Add([]byte(`{"choices":[{"message":{"content":"{\"title\":\" \\u0000\",\"objectives\":[],\"estimated_duration_minutes\":1e400}"}}]}`), "")
	f.Fuzz(func(t *testing.T, body []byte, note string) {
		const key = "sk-fuzz"
		ok := func(err error) {
			if err != nil && !errors.Is(err, ErrRefused) && !errors.Is(err, errChatInvalid) {
				t.Fatalf("error %v is neither a refusal nor invalid output", err)
			}
			if err != nil && strings.Contains(err.Error(), key) {
				t.Fatalf("error %q contains the key", err)
			}
		}
		b, err := chatDecodeReply(body, key, decodeBrief)
		ok(err)
		if err == nil {
			assertBriefInvariants(t, b)
		}
		p, err := chatDecodeReply(body, key, func(c string) (string, error) { return decodeProbe(c, note) })
		ok(err)
		if err == nil && (p != strings.TrimSpace(p) || utf8.RuneCountInString(p) > chatMaxProbeRunes || (p != "" && chatLeaks(p, note))) {
			t.Fatalf("accepted probe %q breaks the limits", p)
		}
		r, err := chatDecodeReply(body, key, decodeReply)
		ok(err)
		if err == nil && (r == "" || r != strings.TrimSpace(r) || utf8.RuneCountInString(r) > chatMaxReplyRunes) {
			t.Fatalf("accepted reply %q breaks the limits", r)
		}
	})
}

func TestChatDecodeError(t *testing.T) {
	long := strings.Repeat("x", 495) + testKey + " rejected"
	tests := []struct {
		name string
		body string
		want chatStatusError
	}{
		{"OKOpenAI", `{"error":{"message":"Unsupported value: 'temperature'.","type":"invalid_request_error","param":"temperature","code":"unsupported_value"}}`,
			chatStatusError{Status: 400, Message: "Unsupported value: 'temperature'.", Type: "invalid_request_error", Param: "temperature", Code: "unsupported_value"}},
		{"OKBareString", `{"error":"model not loaded"}`, chatStatusError{Status: 400, Message: "model not loaded"}},
		{"OKTopLevelNumericCode", `{"object":"error","message":"bad request","type":"BadRequestError","param":null,"code":400}`,
			chatStatusError{Status: 400, Message: "bad request", Type: "BadRequestError", Code: "400"}},
		{"OKMultilineFolded", `{"error":{"message":"line one\nline two"}}`, chatStatusError{Status: 400, Message: "line one line two"}},
		{"OKKeyScrubbedBeforeClip", `{"error":{"message":"` + long + `"}}`, chatStatusError{Status: 400, Message: chatClip(strings.Repeat("x", 495)+"[redacted] rejected", 500)}},
		{"OKNotJSON", `<html>Bad Gateway</html>`, chatStatusError{Status: 400}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := chatDecodeError(400, []byte(tt.body), testKey)
			if *got != tt.want {
				t.Errorf("chatDecodeError = %+v, want %+v", *got, tt.want)
			}
			if strings.Contains(got.Error(), testKey[:8]) {
				t.Errorf("error %q contains part of the key", got)
			}
		})
	}
}

func FuzzChatDecodeError(f *testing.F) {
	f.Add(400, []byte(`{"error":{"message":"m","type":"t","param":"temperature","code":"c"}}`))
	f.Add(503, []byte(`{"error":"sk-fuzz-key"}`))
	f.Add(422, []byte(`{"object":"error","message":"m","code":422}`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		const key = "sk-fuzz-key"
		e := chatDecodeError(status, body, key)
		msg := e.Error()
		if strings.Contains(msg, key) || strings.ContainsAny(msg, "\r\n") {
			t.Fatalf("error %q holds the key or a line break", msg)
		}
		if utf8.RuneCountInString(e.Message) > 501 || utf8.RuneCountInString(e.Param) > 101 {
			t.Fatalf("unbounded fields: %+v", e)
		}
	})
}
