package server

import (
	"bytes"
	"context"
	stdjson "encoding/json"
	"testing"

	"interviewd/kv"
)

// answeredTask is the task of a SendMessage answer as it came over the wire.
type answeredTask struct {
	ID     string `json:"id"`
	Status struct {
		State string `json:"state"`
	} `json:"status"`
	Artifacts []struct {
		ArtifactID string               `json:"artifactId"`
		Parts      []stdjson.RawMessage `json:"parts"`
	} `json:"artifacts"`
}

// mustSendRaw posts a SendMessage body and returns the task it answered with.
func (e *testEnv) mustSendRaw(t *testing.T, key, body string) answeredTask {
	t.Helper()
	a := e.rpc(key, body)
	if a.status != 200 || a.Error != nil {
		t.Fatalf("send: %d %+v", a.status, a.Error)
	}
	var res struct {
		Task answeredTask `json:"task"`
	}
	if err := stdjson.Unmarshal(a.Result, &res); err != nil || res.Task.ID == "" {
		t.Fatalf("answer %s: %v", a.Result, err)
	}
	return res.Task
}

func sendMessageBody(messageID, parts, config string) string {
	params := `{"message":{"messageId":"` + messageID + `","role":"ROLE_USER","parts":` + parts + `}`
	if config != "" {
		params += `,"configuration":` + config
	}
	return rpcCall("SendMessage", params+"}")
}

// A message sent again with its messageId (a retry after a lost answer) is answered
// with the task the first one made, whatever the skill and whichever path answered it,
// and that task is in the store when the first answer arrives. Nothing runs twice: a
// resent link creation mints no second link.
func TestA2AResentMessageReturnsFirstTask(t *testing.T) {
	e := mustServe(t)
	e.mustKey("agent", e.orgA.ID, kv.EnvLive, allScopes)
	st := e.mustStudy(e.orgA.ID, kv.EnvLive, "Churn")
	p := kv.Partition{Org: e.orgA.ID, Env: kv.EnvLive}
	study := `"study_id":"` + st.ID.String() + `"`
	immediately := `{"returnImmediately":true}`
	for _, tc := range []struct {
		name, parts, config, state string
	}{
		{"OK_LinkFastPath", `[{"data":{"skill":"create_participant_link","arguments":{` + study + `,"context":{"ref":"r1"}}}}]`, "", "TASK_STATE_COMPLETED"},
		{"OK_LinkSDKPath", `[{"data":{"skill":"create_participant_link","arguments":{` + study + `,"context":{"ref":"r2"}}}}]`, immediately, "TASK_STATE_COMPLETED"},
		{"OK_ModeFastPath", `[{"data":{"skill":"set_study_mode","arguments":{` + study + `,"mode":"test"}}}]`, "", "TASK_STATE_COMPLETED"},
		{"OK_ReadFastPath", `[{"data":{"skill":"get_study","arguments":{` + study + `}}}]`, "", "TASK_STATE_COMPLETED"},
		{"OK_ReadSDKPath", `[{"data":{"skill":"whoami"}}]`, immediately, "TASK_STATE_COMPLETED"},
		{"OK_FailedTask", `[{"data":{"skill":"get_study","arguments":{"study_id":"` + kv.NewV4().String() + `"}}}]`, "", "TASK_STATE_FAILED"},
		{"OK_AskBack", `[{"text":"Tell me a joke"}]`, "", "TASK_STATE_INPUT_REQUIRED"},
		{"OK_Job", `[{"data":{"skill":"create_study","arguments":{"guidance":"Learn why people leave their gym in the first month."}}}]`, immediately, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := sendMessageBody("resend-"+tc.name, tc.parts, tc.config)
			first := e.mustSendRaw(t, "agent", body)
			if tc.state != "" && first.Status.State != tc.state {
				t.Fatalf("first answer: %s, want %s", first.Status.State, tc.state)
			}
			id, ok := kv.ParseID(first.ID)
			if !ok {
				t.Fatalf("task id %q", first.ID)
			}
			// Answered only once recorded: the store has the task already.
			if _, err := e.db.FindAgentTask(context.Background(), p, id); err != nil {
				t.Fatalf("task %s is not in the store when its answer arrives: %v", id, err)
			}
			again := e.mustSendRaw(t, "agent", body)
			if again.ID != first.ID {
				t.Fatalf("the resent message made task %s; the first made %s", again.ID, first.ID)
			}
			if len(first.Artifacts) > 0 && (len(again.Artifacts) == 0 || !bytes.Equal(first.Artifacts[0].Parts[0], again.Artifacts[0].Parts[0])) {
				t.Fatalf("the resent message's answer differs: %+v, first %+v", again.Artifacts, first.Artifacts)
			}
		})
	}

	// One link for the two sends of each link message.
	links, err := e.db.FindParticipantLinks(context.Background(), p, st.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(links) != 2 {
		t.Fatalf("%d links for two link messages sent twice each", len(links))
	}

	// A messageId is one message: sent with another request it is refused, and the
	// task it made stays as it was.
	for _, tc := range []struct{ name, parts string }{
		{"ErrReusedForOtherWrite", `[{"data":{"skill":"create_participant_link","arguments":{` + study + `,"context":{"ref":"other"}}}}]`},
		{"ErrReusedForRead", `[{"data":{"skill":"whoami"}}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := e.rpc("agent", sendMessageBody("resend-OK_LinkFastPath", tc.parts, ""))
			if a.Error == nil || a.Error.Code != -32602 || a.errorCode() != "idempotency_key_reused" {
				t.Fatalf("reused messageId: %d %+v %s", a.status, a.Error, a.Result)
			}
		})
	}
}
