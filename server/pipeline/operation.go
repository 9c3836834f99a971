package pipeline

import (
	"context"
	"reflect"
	"strings"

	"github.com/valyala/fasthttp"

	"interviewd/kv"
)

// Operation is one research operation, written once and bound to every surface: REST
// routes, MCP tools, A2A skills and the OpenAPI document all come from the table, so a
// rule (scope, validation, limit) cannot differ between surfaces.
type Operation struct {
	Name string // tool and skill name, e.g. "get_study"
	// OperationID is the operation's id in the OpenAPI document: the hosted service's
	// published one, so code generated from either document is the same.
	OperationID string
	// Request and Response name the OpenAPI components of the JSON request body and of
	// the success body (of its items, for lists), as the hosted service names them.
	// Nested types are named by a component tag on the field that holds them.
	Request, Response string
	// Tag groups the operation in the OpenAPI document (a generated client makes one
	// class per tag): tagPublicAPI for the hosted service's public research API.
	Tag        string
	Summary    string
	Method     string // REST method
	Path       string // REST path template, e.g. "/v1/api/studies/{study_id}:refine"
	Scope      string // required scope; "" means any valid credential
	Write      bool   // counts against write rate limits
	Status     int    // REST success status
	Idempotent bool   // accepts Idempotency-Key
	// ScopeFor, when set, names the scope a particular input needs instead of Scope
	// (setting mode to live needs studies:golive).
	ScopeFor func(in any) string
	// ScopeDoc describes the scope rule in documents when ScopeFor decides it.
	ScopeDoc string
	// AnyScope, with ScopeFor, are the scopes of which the credential must hold at
	// least one before anything else happens (so a credential that can never call the
	// operation gets 403, not a 422 about its input).
	AnyScope []string
	// Conflict documents when the operation answers 409 (idempotent operations also
	// document the Idempotency-Key conflicts); Refusals documents other statuses
	// particular to the operation (413, a 403 beyond a missing scope, 429 limits).
	Conflict string
	Refusals map[int]string
	// Job, for an operation that starts background work, is that work's kind, and
	// Awaits names the operation that polls it by the job_id the start returned: A2A
	// keeps such a task working until the poll reports the job's end.
	Job    kv.JobKind
	Awaits string

	// restBind, when set, replaces bindREST for bodies that are not JSON (uploads).
	RESTBind func(c *fasthttp.RequestCtx) (any, error)
	// RESTRespond, when set, may answer a REST request itself (an inline download) and
	// reports whether it did, or returns why it could not (the REST error is sent);
	// otherwise the output is sent as JSON.
	RESTRespond func(c *fasthttp.RequestCtx, out any) (bool, error)

	in   reflect.Type
	out  reflect.Type
	Plan *InputPlan
	Call func(ctx context.Context, p *Principal, in any) (any, error)
}

// Op binds a typed operation function into an Operation.
func Op[In, Out any](o Operation, fn func(ctx context.Context, p *Principal, in *In) (Out, error)) *Operation {
	o.in = reflect.TypeFor[In]()
	o.out = reflect.TypeFor[Out]()
	o.Plan = PlanInput(o.in)
	o.Call = func(ctx context.Context, p *Principal, in any) (any, error) {
		return fn(ctx, p, in.(*In))
	}
	if o.Status == 0 {
		o.Status = 200
	}
	return &o
}

// CheckScope is the scope check made before rate limits and decoding.
func (o *Operation) CheckScope(p *Principal) error {
	for _, sc := range o.AnyScope {
		if p.Has(sc) {
			return nil
		}
	}
	if len(o.AnyScope) > 0 {
		return p.Require(o.AnyScope[0])
	}
	return p.Require(o.Scope)
}

// RequiredScope returns the scope the input needs.
func (o *Operation) RequiredScope(in any) string {
	if o.ScopeFor != nil {
		if s := o.ScopeFor(in); s != "" {
			return s
		}
	}
	return o.Scope
}

// NewInput returns a fresh *In.
func (o *Operation) NewInput() any { return reflect.New(o.in).Interface() }

// restPathAction splits a template like "/v1/api/studies/{study_id}:refine" into the
// router template and the literal action suffix (":refine"); the router matches whole
// segments, so action routes share one dispatcher per template.
func (o *Operation) RESTPathAction() (string, string) {
	if i := strings.LastIndex(o.Path, "}:"); i >= 0 {
		return o.Path[:i+1], o.Path[i+1:]
	}
	return o.Path, ""
}

// ListResult is implemented by list outputs: REST sends the items as a JSON array and
// the cursor in X-Next-Cursor; MCP sends {items, next_cursor}.
type ListResult interface {
	RESTItems() any
	PageCursor() string
}

// List is the output of every list operation.
type List[T any] struct {
	Items      []T     `json:"items"`
	NextCursor *string `json:"next_cursor"`
}

func (l List[T]) RESTItems() any { return l.Items }
func (l List[T]) PageCursor() string {
	if l.NextCursor == nil {
		return ""
	}
	return *l.NextCursor
}

func NewList[T any](items []T, next string) List[T] {
	if items == nil {
		items = []T{}
	}
	l := List[T]{Items: items}
	if next != "" {
		l.NextCursor = &next
	}
	return l
}

// OpByName returns the research operation named name, or nil.
func (s *Core) OpByName(name string) *Operation {
	for _, o := range s.Ops {
		if o.Name == name {
			return o
		}
	}
	return nil
}
