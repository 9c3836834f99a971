package server

import (
	"context"
	stdjson "encoding/json"
	"strings"
	"testing"
	"time"

	"interviewd/kv"
	"interviewd/server/pipeline"
)

// rpcAnswer is one JSON-RPC answer as it came over the wire.
type rpcAnswer struct {
	status int
	header map[string][]string
	ID     any                `json:"id"`
	Result stdjson.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    []struct {
			Type     string            `json:"@type"`
			Reason   string            `json:"reason"`
			Metadata map[string]string `json:"metadata"`
		} `json:"data"`
	} `json:"error"`
}

// errorCode is the REST error code an A2A error carries in its ErrorInfo metadata.
func (a rpcAnswer) errorCode() string {
	if a.Error == nil {
		return ""
	}
	for _, d := range a.Error.Data {
		if d.Metadata["code"] != "" {
			return d.Metadata["code"]
		}
	}
	return ""
}

// rpc posts a raw JSON-RPC body to the A2A endpoint; auth is as testEnv.do takes it.
func (e *testEnv) rpc(auth, body string, headers ...string) rpcAnswer {
	e.t.Helper()
	r := e.do("POST", "/v1/a2a", auth, body, headers...)
	a := rpcAnswer{status: r.status, header: r.header}
	if err := stdjson.Unmarshal(r.body, &a); err != nil {
		e.t.Fatalf("not JSON-RPC (%d): %s", r.status, r.body)
	}
	return a
}

func rpcCall(method, params string) string {
	return `{"jsonrpc":"2.0","id":"req-1","method":"` + method + `","params":` + params + `}`
}

func sendBody(data string) string {
	return rpcCall("SendMessage", `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"data":`+data+`}]}}`)
}

func TestA2ARefusals(t *testing.T) {
	e := mustServe(t)
	e.mustKey("agent", e.orgA.ID, kv.EnvLive, allScopes)
	e.mustKey("agent_links", e.orgA.ID, kv.EnvLive, []string{"agent:run", "links:read"})
	e.mustKey("agent_write", e.orgA.ID, kv.EnvLive, []string{"agent:run", "studies:write", "studies:read"})
	e.mustKey("agent_b", e.orgB.ID, kv.EnvLive, allScopes)
	e.mustKey("agent_a_test", e.orgA.ID, kv.EnvTest, allScopes)
	st := e.mustStudy(e.orgA.ID, kv.EnvLive, "Churn")
	getStudy := sendBody(`{"skill":"get_study","arguments":{"study_id":"` + st.ID.String() + `"}}`)

	// A task of org A's live partition, for the tenancy rows.
	own := e.rpc("agent", getStudy)
	var task struct {
		Task struct {
			ID     string `json:"id"`
			Status struct {
				State string `json:"state"`
			} `json:"status"`
		} `json:"task"`
	}
	if err := stdjson.Unmarshal(own.Result, &task); err != nil || task.Task.Status.State != "TASK_STATE_COMPLETED" {
		t.Fatalf("own task: %v %s", err, own.Result)
	}
	getTask := rpcCall("GetTask", `{"id":"`+task.Task.ID+`"}`)

	for _, tc := range []struct {
		name       string
		auth, body string
		headers    []string
		status     int    // HTTP status
		rpcCode    int    // JSON-RPC error code
		code       string // REST code in the error's metadata
		check      func(t *testing.T, a rpcAnswer)
	}{
		{name: "ErrNoKey", body: getStudy, status: 401, rpcCode: -31401, code: "missing_token", check: func(t *testing.T, a rpcAnswer) {
			if w := strings.Join(a.header["Www-Authenticate"], ""); !strings.HasPrefix(w, `Bearer realm="`+testBaseURL+`/v1/a2a"`) || strings.Contains(w, "invalid_token") {
				t.Fatalf("WWW-Authenticate %q", w)
			}
		}},
		{name: "ErrUnknownKey", auth: "Bearer jsk_live_nope", body: getStudy, status: 401, rpcCode: -31401, code: "invalid_token", check: func(t *testing.T, a rpcAnswer) {
			if w := strings.Join(a.header["Www-Authenticate"], ""); !strings.Contains(w, `error="invalid_token"`) {
				t.Fatalf("WWW-Authenticate %q", w)
			}
		}},
		// OAuth-shaped tokens are looked up like any credential: unknown ones are not
		// credentials at all.
		{name: "ErrUnknownOAuthToken", auth: "Bearer svca_0123456789abcdef", body: getStudy, status: 401, rpcCode: -31401, code: "invalid_token", check: wantInvalidToken},
		{name: "ErrUnknownOAuthTokenAsAPIKeyHeader", headers: []string{"X-API-Key", "svca_0123456789abcdef"}, body: getStudy, status: 401, rpcCode: -31401, code: "invalid_token", check: wantInvalidToken},
		{name: "ErrUnknownRefreshToken", auth: "Bearer svcr_0123456789abcdef", body: getStudy, status: 401, rpcCode: -31401, code: "invalid_token", check: wantInvalidToken},
		{name: "ErrKeyWithoutAgentRun", auth: "a_live", body: getStudy, status: 403, rpcCode: -31403, code: "insufficient_scope", check: func(t *testing.T, a rpcAnswer) {
			if w := strings.Join(a.header["Www-Authenticate"], ""); w != `Bearer error="insufficient_scope", scope="agent:run"` {
				t.Fatalf("WWW-Authenticate %q", w)
			}
		}},
		{name: "ErrKeyWithoutSkillScope", auth: "agent_links", body: getStudy, status: 200, rpcCode: -31403, code: "insufficient_scope", check: func(t *testing.T, a rpcAnswer) {
			if a.Error.Data[0].Metadata["scope"] != "studies:read" || a.ID != "req-1" {
				t.Fatalf("scope refusal: %+v", a.Error)
			}
		}},
		{name: "ErrInputScope", auth: "agent_write", body: sendBody(`{"skill":"set_study_mode","arguments":{"study_id":"` + st.ID.String() + `","mode":"live"}}`),
			status: 200, rpcCode: -31403, code: "insufficient_scope"},
		{name: "ErrOtherOrgTask", auth: "agent_b", body: getTask, status: 200, rpcCode: -32001, code: "task_not_found"},
		{name: "ErrOtherEnvironmentTask", auth: "agent_a_test", body: getTask, status: 200, rpcCode: -32001, code: "task_not_found"},
		{name: "ErrTaskIDNotUUID", auth: "agent", body: rpcCall("GetTask", `{"id":"nope"}`), status: 200, rpcCode: -32001, code: "task_not_found"},
		{name: "ErrMalformedJSON", auth: "agent", body: `{"jsonrpc":"2.0",`, status: 200, rpcCode: -32700},
		{name: "ErrNotJSONRPC", auth: "agent", body: `{"jsonrpc":"1.0","id":1,"method":"GetTask"}`, status: 200, rpcCode: -32600},
		{name: "ErrNoMethod", auth: "agent", body: `{"jsonrpc":"2.0","id":1}`, status: 200, rpcCode: -32600},
		{name: "ErrUnknownMethod", auth: "agent", body: rpcCall("message/send", `{}`), status: 200, rpcCode: -32601},
		{name: "ErrParamsWrongType", auth: "agent", body: rpcCall("GetTask", `{"id":7}`), status: 200, rpcCode: -32602},
		{name: "ErrUnknownSkill", auth: "agent", body: sendBody(`{"skill":"delete_everything"}`), status: 200, rpcCode: -32602, code: "unknown_skill", check: func(t *testing.T, a rpcAnswer) {
			if !strings.Contains(a.Error.Message, "get_study") {
				t.Fatalf("unknown skill message names no skills: %q", a.Error.Message)
			}
		}},
		{name: "ErrArgumentsNotObject", auth: "agent", body: sendBody(`{"skill":"get_study","arguments":[1]}`), status: 200, rpcCode: -32602, code: "validation_error"},
		{name: "ErrNoParts", auth: "agent", body: rpcCall("SendMessage", `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[]}}`), status: 200, rpcCode: -32602},
		{name: "ErrVersion", auth: "agent", body: getStudy, headers: []string{"A2A-Version", "0.3"}, status: 200, rpcCode: -32009},
		{name: "ErrPushNotifications", auth: "agent", body: rpcCall("CreateTaskPushNotificationConfig", `{"taskId":"`+task.Task.ID+`","url":"http://127.0.0.1:1/"}`), status: 200, rpcCode: -32003},
		{name: "OKVersion", auth: "agent", body: getStudy, headers: []string{"A2A-Version", "1.0"}, status: 200},
		{name: "OKAPIKeyHeader", headers: []string{"X-API-Key", e.keys["agent"]}, body: getStudy, status: 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := e.rpc(tc.auth, tc.body, tc.headers...)
			if a.status != tc.status {
				t.Fatalf("status %d, want %d: %+v", a.status, tc.status, a.Error)
			}
			switch {
			case tc.rpcCode == 0 && a.Error != nil:
				t.Fatalf("error %+v", a.Error)
			case tc.rpcCode == 0 && len(a.Result) == 0:
				t.Fatal("no result")
			case tc.rpcCode != 0 && (a.Error == nil || a.Error.Code != tc.rpcCode):
				t.Fatalf("error %+v, want code %d", a.Error, tc.rpcCode)
			case tc.code != "" && a.errorCode() != tc.code:
				t.Fatalf("code %q, want %q (%+v)", a.errorCode(), tc.code, a.Error)
			}
			if tc.check != nil {
				tc.check(t, a)
			}
		})
	}

	if r := e.do("GET", "/v1/a2a", "agent", ""); r.status != 405 {
		t.Fatalf("GET /v1/a2a: %d %s", r.status, r.body)
	}
}

// What the operation itself refuses ends the task failed with the REST error, as a
// data part of its status message; the task is kept and can be read back.
func TestA2AOperationRefusalFailsTask(t *testing.T) {
	e := mustServe(t)
	e.mustKey("agent", e.orgA.ID, kv.EnvLive, allScopes)
	c := e.mustA2A(t, "agent")
	for _, tc := range []struct {
		name        string
		args        map[string]any
		skill, code string
	}{
		{"ErrValidation", map[string]any{"guidance": " "}, "create_study", "validation_error"},
		{"ErrUnknownArgument", map[string]any{"study_id": kv.NewV4().String(), "extra": 1}, "get_study", "validation_error"},
		{"ErrNotFound", map[string]any{"study_id": kv.NewV4().String()}, "get_study", "not_found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			task := mustSend(t, c, skillMessage(tc.skill, tc.args), false)
			if task.Status.State != "TASK_STATE_FAILED" || task.Status.Message == nil || len(task.Status.Message.Parts) != 2 {
				t.Fatalf("task: %+v", task.Status)
			}
			body, _ := task.Status.Message.Parts[1].Data().(map[string]any)
			if body["code"] != tc.code || body["detail"] == "" {
				t.Fatalf("error body %v", body)
			}
		})
	}
}

func wantInvalidToken(t *testing.T, a rpcAnswer) {
	t.Helper()
	if w := strings.Join(a.header["Www-Authenticate"], ""); !strings.HasPrefix(w, `Bearer realm="`+testBaseURL+`/v1/a2a"`) || !strings.Contains(w, `error="invalid_token"`) {
		t.Fatalf("WWW-Authenticate %q", w)
	}
}

// A real OAuth token, access or refresh, is refused by the A2A surface with 403:
// agent:run is for API keys only. Once its connection has ended it is no credential:
// 401, as an unknown one.
func TestA2ARefusesRealOAuthToken(t *testing.T) {
	e := mustServe(t)
	owner := e.mustAppClient(t, "a@example.com", e.orgA.ID, kv.EnvLive, "")
	conn := e.mustConnect(t, owner, pipeline.ResourceAPI, e.orgA.ID, kv.EnvLive, "studies:read")
	if me := e.do("GET", "/v1/api/me", "Bearer "+conn.access, ""); me.status != 200 {
		t.Fatalf("the token does not work on REST: %d %s", me.status, me.body)
	}
	whoami := sendBody(`{"skill":"whoami"}`)
	for _, tok := range []string{conn.access, conn.refresh} {
		for _, auth := range [][]string{{"Bearer " + tok}, {"", "X-API-Key", tok}} {
			a := e.rpc(auth[0], whoami, auth[1:]...)
			if a.status != 403 || a.Error == nil || a.Error.Code != -31403 || a.errorCode() != "oauth_token_not_accepted" {
				t.Fatalf("%v: %d %+v", auth, a.status, a.Error)
			}
		}
	}
	if err := e.db.RevokeToken(context.Background(), conn.refresh, conn.clientID); err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{conn.access, conn.refresh} {
		a := e.rpc("Bearer "+tok, whoami)
		if a.status != 401 || a.Error == nil || a.Error.Code != -31401 || a.errorCode() != "invalid_token" {
			t.Fatalf("ended token %.5s: %d %+v", tok, a.status, a.Error)
		}
		wantInvalidToken(t, a)
	}
}

// OAuth-shaped tokens that are no credential count toward the failed-credential limit
// like wrong API keys: past the budget the address is answered 429 with the wait.
func TestA2AUnknownOAuthTokensCountAsFailures(t *testing.T) {
	limits := pipeline.RateLimits{Read: 1000, Write: 1000, OrgRead: 1000, OrgWrite: 1000, IP: 1000, FailedAuth: 3, Window: time.Minute}
	e := mustServe(t, withRateLimits(limits))
	e.mustKey("agent", e.orgA.ID, kv.EnvLive, allScopes)
	whoami := sendBody(`{"skill":"whoami"}`)
	for i, tok := range []string{"svca_" + strings.Repeat("x", 40), "svcr_" + strings.Repeat("y", 40), "svca_short"} {
		if a := e.rpc("Bearer "+tok, whoami); a.status != 401 || a.errorCode() != "invalid_token" {
			t.Fatalf("failure %d: %d %+v", i+1, a.status, a.Error)
		}
	}
	a := e.rpc("Bearer svca_"+strings.Repeat("z", 40), whoami)
	if a.status != 429 || a.errorCode() != "rate_limited" || a.header["Retry-After"] == nil {
		t.Fatalf("over budget: %d %v %+v", a.status, a.header["Retry-After"], a.Error)
	}
	if a := e.rpc("agent", whoami); a.status != 200 || a.Error != nil {
		t.Fatalf("a valid key from the same address: %d %+v", a.status, a.Error)
	}
}

// Messages count against the same budgets as REST requests: a key that spent half its
// reads over REST has the other half over A2A, then is refused with the wait, and the
// answers carry the rate-limit headers.
func TestA2ARateLimited(t *testing.T) {
	clock := &testClock{now: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)}
	e := mustServe(t, withClock(clock), withRateLimits(pipeline.DefaultRateLimits()))
	e.mustKey("agent", e.orgA.ID, kv.EnvLive, allScopes)
	for i := 0; i < 60; i++ {
		if r := e.do("GET", "/v1/api/me", "agent", ""); r.status != 200 {
			t.Fatalf("REST read %d: %d", i, r.status)
		}
	}
	whoami := sendBody(`{"skill":"whoami"}`)
	for i := 0; i < 60; i++ {
		a := e.rpc("agent", whoami)
		if a.Error != nil || a.header["Ratelimit"] == nil || a.header["Ratelimit-Policy"] == nil {
			t.Fatalf("message %d: %+v %v", i, a.Error, a.header)
		}
	}
	a := e.rpc("agent", whoami)
	if a.status != 200 || a.Error == nil || a.Error.Code != -32000 || a.errorCode() != "rate_limited" || a.Error.Data[0].Metadata["retry_after_seconds"] == "" {
		t.Fatalf("message 121: %d %+v", a.status, a.Error)
	}
}
