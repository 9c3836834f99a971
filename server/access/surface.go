// Package access is the account access API (/v1/access): an agent signs a person in
// by email and two-step, picks a workspace and is issued an API key, step by step in
// one transaction, each step idempotent. It depends on the shared pipeline alone.
package access

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"time"

	"github.com/fasthttp/router"
	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"

	"interviewd/kv"
	"interviewd/server/pipeline"
	"interviewd/sms"
)

// The account access API (/v1/access): how an agent gets an API key for its person
// without a browser. It is a surface of its own: the caller's jmg_ proof is its
// credential (API keys and OAuth tokens are refused here, and a proof is refused
// everywhere else), each step is one route of the table below, bound like the
// research API and answered as JSON in the contract's error shape, with the
// transaction's state and next action in every answer the proof has earned. The
// steps themselves are kv transactions (kv/access*.go): the proof check, the state
// check and the change commit together.

// accessRoute is one step of the table the routes and the OpenAPI document are built
// from.
type accessRoute struct {
	Method, Path string
	OperationID  string
	Summary      string
	Description  string
	In, Out      reflect.Type // the JSON request and success bodies
	Status       int          // success status
	// Idempotent routes require an Idempotency-Key that is a UUID.
	Idempotent bool
	// PathParam is the route's path parameter (a UUID), if any.
	PathParam string
	Refusals  map[int]string // statuses beyond the ones every step can answer
	handle    func(a *API, r *pipeline.Request) error
	plan      *pipeline.InputPlan
}

// API is what the access routes need beside the server: the text-message
// provider (nil: sms is not offered).
type API struct {
	*pipeline.Core
	sms sms.Sender
}

// accessCall is an access request's state (request.data): the proof presented and,
// once a step has opened the transaction with it, the transaction as it stands.
type accessCall struct {
	proof string
	view  *kv.Access
	// replayed says the output is a replay of the request that issued the key.
	replayed bool
}

func accessOf(r *pipeline.Request) *accessCall {
	c, _ := r.Data.(*accessCall)
	if c == nil {
		c = &accessCall{}
		r.Data = c
	}
	return c
}

// opened records the transaction a step reached with the caller's proof, so even a
// refusal tells the caller its state and next action.
func (c *accessCall) opened(a kv.Access) {
	if !a.ID.IsZero() {
		c.view = &a
	}
}

func (a *API) Routes() []*accessRoute {
	return []*accessRoute{
		{Method: "POST", Path: "/v1/access/transactions", OperationID: "start_transaction", Status: 201,
			Summary:     "Start a transaction: a 6-digit code is emailed to the person",
			Description: "Send your own proof (jmg_ + 32 random bytes, base64url) as the bearer credential here and on every later step. The answer is the same whether or not the address has an account.",
			In:          reflect.TypeFor[accessStartIn](), Out: reflect.TypeFor[AccessStartOut](),
			handle: (*API).handleStart},
		{Method: "POST", Path: "/v1/access/verify-email", OperationID: "verify_email", Status: 200,
			Summary:     "Submit the emailed code",
			Description: "An unknown address gets its account now. next_action is verify_mfa when the person has two-step set up or one of their workspaces requires it, else select_workspace. Five wrong codes (email and two-step together) end the transaction.",
			In:          reflect.TypeFor[accessVerifyEmailIn](), Out: reflect.TypeFor[accessStepOut](),
			handle: (*API).handleVerifyEmail},
		{Method: "POST", Path: "/v1/access/mfa/verify", OperationID: "verify_mfa", Status: 200,
			Summary:     "Request a two-step challenge ({method}), then submit its code ({challenge_id, code})",
			Description: "Methods: totp (the person's authenticator app), email (only where one of the person's organisations accepts codes by email as a second step), and sms when the server has a text-message provider and the person a verified number; mfa_methods lists the ones this person can use. A new challenge replaces the last; at most 5 per transaction.",
			In:          reflect.TypeFor[accessMFAIn](), Out: reflect.TypeFor[accessMFAOut](),
			Refusals: map[int]string{409: "wrong_step: the transaction is not waiting for two-step (next_action says what it is waiting for); challenge_limit: 5 challenges asked for already, start a new transaction."},
			handle:   (*API).handleMFA},
		{Method: "POST", Path: "/v1/access/workspace", OperationID: "choose_workspace", Status: 200,
			Summary:     "List workspaces and invitations, then select one, accept an invitation or create a starter workspace",
			Description: "Actions: {action: list}, {action: select, org_id}, {action: accept_invitation, invitation_id}, {action: create, name}. Choosing a workspace that requires two-step before one was passed makes next_action verify_mfa. Allowed again before the key is issued; a transaction creates at most one workspace (409 workspace_created).",
			In:          reflect.TypeFor[accessWorkspaceIn](), Out: reflect.TypeFor[accessWorkspaceOut](),
			Refusals: map[int]string{404: "not_found / invitation_invalid: not a workspace or invitation of this person."},
			handle:   (*API).handleWorkspace},
		{Method: "POST", Path: "/v1/access/keys", OperationID: "issue_key", Status: 201, Idempotent: true,
			Summary:     "Issue the API key; the secret is in this answer only",
			Description: "A transaction issues one key. Replaying the request (same Idempotency-Key and body) returns the key with secret null; a further key needs a new transaction.",
			In:          reflect.TypeFor[accessKeyIn](), Out: reflect.TypeFor[accessKeyOut](),
			Refusals: map[int]string{403: "role_forbids_scope: a member cannot hold studies:golive or export:read; two_step_required: the workspace requires two-step.",
				404: "not_found: the person is no longer a member of the workspace."},
			handle: (*API).handleKey},
		{Method: "POST", Path: "/v1/access/keys/{key_id}/replace", OperationID: "replace_key", Status: 200, Idempotent: true, PathParam: "key_id",
			Summary:     "Replace a key's secret; the old secret stops working at once",
			Description: "The same key (name, scopes, environment, expiry) gets a new secret, in this answer only. The person's own key, or any key of the workspace for owners and admins. Same transaction and Idempotency-Key rules as issuing a key.",
			In:          reflect.TypeFor[accessReplaceIn](), Out: reflect.TypeFor[accessKeyOut](),
			Refusals: map[int]string{403: "two_step_required: the workspace requires two-step.",
				404: "not_found: no such key that this person may see in the workspace."},
			handle: (*API).handleReplace},
	}
}

// accessSurface: the proof, then the step's bind; JSON answers.
func (s *API) accessSurface() *pipeline.Surface {
	return &pipeline.Surface{
		Name:         "access",
		Authenticate: s.accessAuthenticate,
		Steps:        []pipeline.Middleware{s.accessAuthFailures, s.accessRefusalState},
		Render:       s.renderAccess,
	}
}

// Route mounts the account access API and its OpenAPI document. smsSender is
// the text-message provider (nil: none).
func Route(core *pipeline.Core, r *router.Router, smsSender sms.Sender) {
	a := &API{Core: core, sms: smsSender}
	s := a
	table := a.Routes()
	g := s.Group(r, "", s.accessSurface())
	for _, rt := range table {
		rt.plan = pipeline.PlanInput(rt.In)
		g.Handle(rt.Method, rt.Path, func(r *pipeline.Request) error { return rt.handle(a, r) }, accessBind(rt))
	}
	// Rendered on first request, as the research API's document is: start-up stays fast.
	raw := sync.OnceValue(func() []byte {
		raw, err := json.MarshalIndent(s.accessOpenAPI(table), "", "  ")
		if err != nil {
			panic(err)
		}
		return raw
	})
	pipeline.HandlePlain(r, "GET", "/v1/access/openapi.json", func(c *fasthttp.RequestCtx) {
		c.SetContentType("application/json")
		c.SetBody(raw())
	})
}

// Refusals of the proof.
var (
	errAccessNoProof = &pipeline.APIError{Status: 401, Code: "missing_token",
		Detail: "Send your transaction's proof as Authorization: Bearer jmg_<43 base64url characters>."}
	errAccessBadProof = &pipeline.APIError{Status: 401, Code: "invalid_token", TokenSent: true,
		Detail: "The account access API takes only a transaction proof: Bearer jmg_ followed by 32 random bytes in base64url (43 characters). API keys and OAuth tokens are not accepted here."}
)

// accessAuthenticate takes the bearer proof. Whether it opens a transaction is the
// step's own check, in the step's transaction.
func (s *API) accessAuthenticate(r *pipeline.Request) error {
	h := r.C.Request.Header.Peek(fasthttp.HeaderAuthorization)
	if len(h) == 0 {
		return errAccessNoProof
	}
	tok, ok := pipeline.BearerToken(h)
	if !ok || !kv.ParseAccessProof(tok) {
		return s.accessAuthFailed(r, errAccessBadProof)
	}
	accessOf(r).proof = tok
	return nil
}

// accessAuthFailures counts proofs that open no transaction (the steps' kv check) as
// accessAuthenticate counts malformed ones.
func (s *API) accessAuthFailures(next pipeline.Handler) pipeline.Handler {
	return func(r *pipeline.Request) error {
		err := next(r)
		var ae *pipeline.APIError
		if kv.ErrorCode(err) == kv.EUNAUTHORIZED || (errors.As(err, &ae) && ae.Status == 401) {
			return s.accessAuthFailed(r, err)
		}
		return err
	}
}

// accessRefusalState gives a refusal that no step has tied to its transaction yet (a
// 422 of the body, a key request kv refused before opening the transaction) the
// transaction's state, when the body names one the proof opens: every answer the proof
// has earned says what is due next.
func (s *API) accessRefusalState(next pipeline.Handler) pipeline.Handler {
	return func(r *pipeline.Request) error {
		err := next(r)
		call := accessOf(r)
		if err == nil || call.view != nil || call.proof == "" {
			return err
		}
		if st := pipeline.ToAPIError(err).Status; st == 401 || st == 429 || st >= 500 {
			return err
		}
		body, rerr := pipeline.ReadBody(r.C, pipeline.MaxJSONBody)
		if rerr != nil {
			return err
		}
		var named struct {
			TransactionID string `json:"transaction_id"`
		}
		if json.Unmarshal(body, &named) != nil {
			return err
		}
		if id, ok := kv.ParseID(named.TransactionID); ok {
			if acc, ferr := s.DB.FindAccess(r.Ctx, id, call.proof); ferr == nil {
				call.opened(acc)
			}
		}
		return err
	}
}

// accessAuthFailed counts a refused proof against the client address's
// failed-credential budget, as the other surfaces count refused keys: err, or 429 once
// the address is over budget.
func (s *API) accessAuthFailed(r *pipeline.Request, err error) error {
	if wait := s.AuthFails.Fail(s.Now(), s.ClientIP(r.C)); wait > 0 {
		return &pipeline.APIError{Status: 429, Code: "rate_limited", RetryAfter: wait,
			Detail: "Too many failed authentication attempts from your address; wait before trying again."}
	}
	return err
}

// accessBind decodes the route's JSON body (and path parameter) into r.in, and checks
// the Idempotency-Key of the routes that require one.
func accessBind(rt *accessRoute) pipeline.Middleware {
	return func(next pipeline.Handler) pipeline.Handler {
		return func(r *pipeline.Request) error {
			body, err := pipeline.ReadBody(r.C, pipeline.MaxJSONBody)
			if err != nil {
				return err
			}
			in := reflect.New(rt.In).Interface()
			var errs []kv.FieldError
			if rt.Idempotent {
				if fe := accessIdemKeyError(r.C.Request.Header.Peek("Idempotency-Key")); fe != nil {
					errs = append(errs, *fe)
				}
			}
			if rt.PathParam != "" {
				if _, ok := kv.ParseID(r.PathParam(rt.PathParam)); !ok {
					errs = append(errs, kv.FieldError{Loc: []any{"path", rt.PathParam}, Msg: "Input should be a valid UUID.", Type: "uuid_parsing"})
				}
			}
			if err := rt.plan.BindArgs(in, body); err != nil {
				if len(errs) == 0 {
					return err
				}
				errs = append(errs, pipeline.ToAPIError(err).LocatedREST(nil).Fields...)
			}
			if len(errs) > 0 {
				return pipeline.WireInvalid(errs...)
			}
			r.In = in
			return next(r)
		}
	}
}

// accessIdemKeyError is the refusal of a missing or non-UUID Idempotency-Key.
func accessIdemKeyError(raw []byte) *kv.FieldError {
	loc := []any{"header", "Idempotency-Key"}
	if len(raw) == 0 {
		return &kv.FieldError{Loc: loc, Msg: "Idempotency-Key is required: send a new UUID per key request, and the same one to retry it.", Type: "missing"}
	}
	if _, ok := kv.ParseID(string(raw)); !ok {
		return &kv.FieldError{Loc: loc, Msg: "Idempotency-Key must be a UUID.", Type: "uuid_parsing"}
	}
	return nil
}

// accessIdem is the request's Idempotency-Key and fingerprint.
func accessIdem(r *pipeline.Request) (kv.AccessIdem, error) {
	body, err := pipeline.ReadBody(r.C, pipeline.MaxJSONBody)
	if err != nil {
		return kv.AccessIdem{}, err
	}
	return kv.AccessIdem{Key: string(r.C.Request.Header.Peek("Idempotency-Key")),
		Fingerprint: pipeline.RequestFingerprint(r.C.Method(), r.C.Path(), body)}, nil
}

// accessErrorBody is an error with the transaction's state, for a caller whose proof
// opened it: {"detail": ..., "code": ..., "transaction_id", "state", "next_action"}.
type accessErrorBody struct {
	Detail        any    `json:"detail"`
	Code          string `json:"code,omitempty"`
	TransactionID kv.ID  `json:"transaction_id"`
	State         string `json:"state"`
	NextAction    string `json:"next_action"`
}

// renderAccess writes a step's answer. Answers are never cached (they carry secrets
// and state); refusals are in the contract's shape, with the transaction's state and
// next action once the proof opened it (never for a 401: a wrong proof learns
// nothing).
func (s *API) renderAccess(r *pipeline.Request, err error) {
	c := r.C
	c.Response.Header.Set("Cache-Control", "no-store")
	call := accessOf(r)
	if err == nil {
		raw, merr := pipeline.EncodeOutput(r.Out)
		if merr == nil {
			if call.replayed {
				c.Response.Header.Set("Idempotent-Replayed", "true")
			}
			c.SetStatusCode(max(r.Status, 200))
			c.SetContentType("application/json")
			c.SetBody(raw)
			return
		}
		err = merr
	}
	ae := pipeline.ToAPIError(err).LocatedREST(nil)
	if ae.Status == 401 {
		v := `Bearer realm="interviewd-access"`
		if ae.TokenSent || len(c.Request.Header.Peek(fasthttp.HeaderAuthorization)) > 0 {
			v += `, error="invalid_token"`
		}
		c.Response.Header.Set("WWW-Authenticate", v)
	}
	pipeline.WriteErrorBody(c, ae)
	if call.view == nil || ae.Status == 401 || ae.Status >= 500 {
		return
	}
	body := accessErrorBody{Detail: ae.Detail, Code: ae.Code, TransactionID: call.view.ID,
		State: string(call.view.State), NextAction: call.view.State.NextAction()}
	if ae.Status == 422 {
		body.Detail, body.Code = ae.Fields, ""
	}
	raw, _ := json.MarshalWithOption(body, json.DisableHTMLEscape())
	c.SetBody(raw)
}

// sendSMS sends a text message off the request path, as sendMail does mail.
func (a *API) sendSMS(to, body string) {
	if a.sms == nil {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(a.Ctx, time.Minute)
		defer cancel()
		if err := a.sms.Send(ctx, to, body); err != nil {
			a.Log.Error().Err(err).Msg("send text message")
		}
	}()
}
