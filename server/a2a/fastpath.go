package a2a

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"

	"interviewd/kv"
	"interviewd/server/pipeline"
)

// The SendMessage fast path.
//
// Most of an agent's messages run a quick skill (get_study, list_interviews, ...) from
// one data part, and through the SDK's binding each costs several reflective
// encoding/json passes over the protocol's types (decode the request, encode the task
// for the store, encode it again for the answer): several times the cost of the same
// operation over REST. serveSendFast answers a SendMessage of that exact shape itself,
// running the skill through the same runSkill as the SDK path and writing the same
// task, encoded once. Anything else (text, several parts, a task to continue, a
// configuration, a skill that starts a background job, a protocol version header it
// does not accept) goes to the SDK, which stays the reference:
// TestA2AFastPathMatchesSDK sends the same messages both ways and compares the tasks.

// ServeSendFast answers c when it holds a SendMessage the fast path recognises, and
// reports whether it did; when it returns false it has written and run nothing.
func (e *Endpoint) ServeSendFast(c *fasthttp.RequestCtx, ctx context.Context, call *Call) bool {
	if v := c.Request.Header.Peek(a2a.SvcParamVersion); len(v) > 0 && strings.TrimSpace(string(v)) != string(a2a.Version) {
		return false
	}
	body := bytes.TrimSpace(c.PostBody())
	if len(body) == 0 || body[0] != '{' {
		return false
	}
	// One strict decode: a member the fast path does not know sends the message to
	// the SDK, which knows them all.
	var req fastSend
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if dec.Decode(&req) != nil || dec.More() || req.JSONRPC != "2.0" || req.Method != "SendMessage" || !pipeline.PlainID(req.ID) {
		return false
	}
	msg := req.Params.Message
	if msg == nil || msg.MessageID == "" || msg.Role != string(a2a.MessageRoleUser) || len(msg.Parts) != 1 || msg.Parts[0].Data == nil || msg.Parts[0].Data.Skill == nil {
		return false
	}
	data := msg.Parts[0].Data
	intent := a2aIntent{Skill: *data.Skill}
	if args := bytes.TrimSpace(data.Arguments); len(args) > 0 && !pipeline.IsJSONNull(args) {
		if args[0] != '{' {
			return false
		}
		intent.Arguments = args
	}
	o := e.s.OpByName(intent.Skill)
	if o == nil || o.Awaits != "" {
		return false
	}

	id := e.s.DB.NewID()
	ctxID := msg.ContextID
	if ctxID == "" {
		ctxID = a2a.NewContextID()
	}
	p := call.P
	rec, err := e.handler.runSkill(ctx, call, intent, a2aMessageRef{key: messageIdemKey(msg.MessageID)}, func(run skillRun) (kv.AgentTaskWrite, error) {
		raw, state, err := fastTaskBody(o, run, id, ctxID, msg.MessageID, msg.Role, intent.Skill, data.Arguments, e.s.Now())
		if err != nil {
			return kv.AgentTaskWrite{}, err
		}
		return kv.AgentTaskWrite{New: &kv.AgentTask{ID: id, OrgID: p.Partition.Org, Env: p.Partition.Env, ContextID: ctxID,
			Skill: o.Name, Scopes: run.scopes, CreatedBy: p.KeyID, State: state, Final: true, Body: raw}}, nil
	})
	if err != nil {
		writeRPCResponse(c, req.ID, "error", pipeline.MustRawJSON(rpcErrorOf(err)))
		return true
	}
	writeRPCResponse(c, req.ID, "result", append(append([]byte(`{"task":`), rec.Body...), '}'))
	return true
}

// fastTaskBody is the task of a quick skill's run as A2A's JSON binding writes it, and
// its state: completed with the answer as its result artifact, or failed with the REST
// error.
func fastTaskBody(o *pipeline.Operation, run skillRun, id kv.ID, ctxID, messageID, role, skill string, args json.RawMessage, now time.Time) ([]byte, string, error) {
	t := wireTask{ID: id.String(), ContextID: ctxID}
	t.History = []wireMessage{{MessageID: messageID, ContextID: t.ContextID, TaskID: t.ID, Role: role, Parts: []wirePart{{Data: dataPart(skill, args)}}}}
	status := wireMessage{MessageID: a2a.NewMessageID(), ContextID: t.ContextID, TaskID: t.ID, Role: string(a2a.MessageRoleAgent)}
	t.Status = wireStatus{Timestamp: now.UTC().Format(time.RFC3339Nano), Message: &status}
	if run.failed != nil {
		t.Status.State = string(a2a.TaskStateFailed)
		detail := run.failed.Detail
		status.Parts = []wirePart{{Text: &detail}, {Data: pipeline.MustRawJSON(run.failed)}}
	} else {
		t.Status.State = string(a2a.TaskStateCompleted)
		text := completedText(o)
		status.Parts = []wirePart{{Text: &text}}
		t.Artifacts = []wireArtifact{{ArtifactID: artifactResult, Name: o.Name, Parts: []wirePart{{Data: run.raw, MediaType: "application/json"}}}}
	}
	raw, err := json.MarshalNoEscape(t)
	return raw, t.Status.State, err
}

// fastSend is the one request shape the fast path takes.
type fastSend struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  struct {
		Message *struct {
			MessageID string `json:"messageId"`
			ContextID string `json:"contextId"`
			Role      string `json:"role"`
			Parts     []struct {
				Data *struct {
					Skill     *string         `json:"skill"`
					Arguments json.RawMessage `json:"arguments"`
				} `json:"data"`
			} `json:"parts"`
		} `json:"message"`
	} `json:"params"`
}

// dataPart is the data part as the message carried it, for the task's history.
func dataPart(skill string, args json.RawMessage) json.RawMessage {
	b := append([]byte(`{"skill":`), pipeline.MustRawJSON(skill)...)
	if len(args) > 0 {
		b = append(append(b, `,"arguments":`...), args...)
	}
	return append(b, '}')
}

// writeRPCResponse writes a JSON-RPC response whose member (result or error) is raw.
func writeRPCResponse(c *fasthttp.RequestCtx, id json.RawMessage, member string, raw []byte) {
	b := make([]byte, 0, len(raw)+len(id)+48)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"`...)
	b = append(b, member...)
	b = append(b, `":`...)
	b = append(b, raw...)
	b = append(b, "}\n"...)
	c.SetStatusCode(fasthttp.StatusOK)
	c.SetContentType("application/json")
	c.SetBody(b)
}

// The task as A2A's JSON binding writes it (the a2a package's own encoding), for the
// fast path's single encode.
type wireTask struct {
	ID        string         `json:"id"`
	Artifacts []wireArtifact `json:"artifacts,omitempty"`
	ContextID string         `json:"contextId"`
	History   []wireMessage  `json:"history,omitempty"`
	Status    wireStatus     `json:"status"`
}

type wireStatus struct {
	Message   *wireMessage `json:"message,omitempty"`
	State     string       `json:"state"`
	Timestamp string       `json:"timestamp,omitempty"`
}

type wireMessage struct {
	MessageID string     `json:"messageId"`
	ContextID string     `json:"contextId,omitempty"`
	Parts     []wirePart `json:"parts"`
	Role      string     `json:"role"`
	TaskID    string     `json:"taskId,omitempty"`
}

type wirePart struct {
	Text      *string         `json:"text,omitempty"`
	Data      json.RawMessage `json:"data,omitempty"`
	MediaType string          `json:"mediaType,omitempty"`
}

type wireArtifact struct {
	ArtifactID string     `json:"artifactId"`
	Name       string     `json:"name,omitempty"`
	Parts      []wirePart `json:"parts"`
}

// a2aErrorCodes are the JSON-RPC codes of the A2A errors the handler returns, as the
// SDK's binding writes them.
var a2aErrorCodes = []struct {
	err  error
	code int
}{
	{a2a.ErrInvalidParams, -32602},
	{a2a.ErrUnauthenticated, -31401},
	{a2a.ErrUnauthorized, -31403},
	{a2a.ErrTaskNotFound, -32001},
	{a2a.ErrVersionNotSupported, -32009},
	{a2a.ErrServerError, -32000},
	{a2a.ErrInternalError, -32603},
}

// rpcErrorOf is an A2A error as the SDK's binding writes it: the code of its kind, its
// message, and an ErrorInfo carrying its metadata and the time.
func rpcErrorOf(err error) map[string]any {
	code := -32603
	for _, c := range a2aErrorCodes {
		if errors.Is(err, c.err) {
			code = c.code
			break
		}
	}
	meta := map[string]any{"timestamp": time.Now().UTC().Format(time.RFC3339)}
	var ae *a2a.Error
	if errors.As(err, &ae) {
		if m, ok := ae.ErrorInfo().Value["metadata"].(map[string]string); ok {
			for k, v := range m {
				meta[k] = v
			}
		}
	}
	return map[string]any{"code": code, "message": err.Error(), "data": []any{map[string]any{
		"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": a2a.ErrorReason(err), "domain": a2a.ProtocolDomain, "metadata": meta,
	}}}
}
