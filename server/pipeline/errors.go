package pipeline

import (
	"errors"
	"strconv"

	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"

	"interviewd/blobs"
	"interviewd/kv"
)

// apiError is an error on its way to the wire. Every surface maps it with its own
// writer: REST JSON here, JSON-RPC for MCP and A2A, HTML for pages.
type APIError struct {
	Status int
	Code   string
	Detail string
	Fields []kv.FieldError // 422 only; see domain
	// Domain says Fields are kv's domain paths inside the input (no wire location yet);
	// each surface's renderer locates them (REST: locate; MCP: argument names; a form:
	// its fields). Failures found while reading the wire are located already.
	Domain     bool
	RetryAfter int    // 429: seconds
	Scope      string // 403 insufficient_scope: the missing scope
	TokenSent  bool   // 401: a token was presented (adds error="invalid_token")
	cause      error  // internal errors: logged, never sent
}

func (e *APIError) Error() string {
	if e.cause != nil {
		return e.cause.Error()
	}
	return e.Detail
}

const ErrInternal = "Internal error."

// ToAPIError maps any error to its wire form. Coded kv errors keep their meaning;
// anything uncoded becomes a 500 whose cause is only logged.
func ToAPIError(err error) *APIError {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae
	}
	if errors.Is(err, blobs.ErrUnavailable) {
		return errStorageUnavailable(err)
	}
	var le *locatedError
	if errors.As(err, &le) {
		return &APIError{Status: 422, Code: "validation_error", Detail: le.err.Message, Fields: le.err.Fields}
	}
	var ke *kv.Error
	if !errors.As(err, &ke) {
		return &APIError{Status: 500, Code: "internal_error", Detail: ErrInternal, cause: err}
	}
	reason := ke.Reason
	switch ke.Code {
	case kv.ENOTFOUND:
		return &APIError{Status: 404, Code: OrDefault(reason, "not_found"), Detail: ke.Message}
	case kv.EINVALID:
		fields := ke.Fields
		if len(fields) == 0 {
			fields = []kv.FieldError{{Loc: []any{}, Msg: ke.Message, Type: OrDefault(reason, "value_error")}}
		}
		return &APIError{Status: 422, Code: "validation_error", Detail: ke.Message, Fields: fields, Domain: true}
	case kv.ECONFLICT:
		return &APIError{Status: 409, Code: OrDefault(reason, "conflict"), Detail: ke.Message}
	case kv.EFORBIDDEN:
		return &APIError{Status: 403, Code: OrDefault(reason, "forbidden"), Detail: ke.Message}
	case kv.EUNAUTHORIZED:
		return &APIError{Status: 401, Code: OrDefault(reason, "invalid_token"), Detail: ke.Message}
	case kv.ELIMIT:
		retry := 1
		if reason == "simulation_limit" || reason == "analysis_limit" {
			retry = simulationRetryAfter
		}
		return &APIError{Status: 429, Code: OrDefault(reason, "rate_limited"), Detail: ke.Message, RetryAfter: retry}
	case kv.EGONE:
		return &APIError{Status: 410, Code: OrDefault(reason, "gone"), Detail: ke.Message}
	case kv.ELOCKED:
		// The kv message names the data folder: 5xx bodies never carry internal paths,
		// so it is logged (cause) and a fixed sentence is sent.
		return &APIError{Status: 503, Code: "unavailable", Detail: "The data store is busy with another process; try again shortly.", RetryAfter: storageRetryAfter, cause: err}
	}
	return &APIError{Status: 500, Code: "internal_error", Detail: ErrInternal, cause: err}
}

// storageRetryAfter is the wait a 503 storage_unavailable suggests: long enough for a
// bucket's server to restart, short enough that a client retrying is soon served.
const storageRetryAfter = 5

// errStorageUnavailable is the blob store (an S3 bucket) unreachable: the request may
// succeed later. The cause is logged, never sent.
func errStorageUnavailable(cause error) *APIError {
	return &APIError{Status: 503, Code: "storage_unavailable", RetryAfter: storageRetryAfter, cause: cause,
		Detail: "File storage is unreachable right now; try again in a few seconds."}
}

// WireInvalid is a validation failure found while reading the wire (a header, the body
// as a whole, an unknown member): its fields carry their wire location already. It is
// still a coded kv error to errors.As, for callers that ask for one.
func WireInvalid(fields ...kv.FieldError) error {
	return &locatedError{kv.Invalid(fields...)}
}

// locatedError is an EINVALID whose fields are at their wire location (wireInvalid).
type locatedError struct{ err *kv.Error }

func (e *locatedError) Error() string { return e.err.Error() }
func (e *locatedError) Unwrap() error { return e.err }

// LocatedREST returns ae with its domain fields located as REST reports them: each
// path gets the source its first element names in the operation's input plan ("path",
// "query", else "body"), so kv's ["context","k"] is ["body","context","k"] and a cursor
// is ["query","cursor"]. plan may be nil (no operation: everything is the body).
func (ae *APIError) LocatedREST(plan *InputPlan) *APIError {
	if !ae.Domain {
		return ae
	}
	out := *ae
	out.Domain = false
	out.Fields = make([]kv.FieldError, len(ae.Fields))
	for i, f := range ae.Fields {
		src := SrcBody
		if name, ok := FirstName(f.Loc); ok && plan != nil {
			src = plan.sourceOf(name)
		}
		f.Loc = append([]any{src.String()}, f.Loc...)
		out.Fields[i] = f
	}
	return &out
}

func FirstName(loc []any) (string, bool) {
	if len(loc) == 0 {
		return "", false
	}
	name, ok := loc[0].(string)
	return name, ok
}

func OrDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// ErrorBody is every non-422 error: {"detail": "...", "code": "..."}.
type ErrorBody struct {
	Detail string `json:"detail"`
	Code   string `json:"code"`
}

// ValidationBody is the 422 shape: {"detail": [items]}.
type ValidationBody struct {
	Detail []kv.FieldError `json:"detail"`
}

// WriteRESTError writes err in the REST shape with its status and headers. resource
// names the surface whose protected-resource metadata a 401 points at.
func (s *Core) WriteRESTError(c *fasthttp.RequestCtx, err error, resource string) {
	s.writeRESTAPIError(c, ToAPIError(err).LocatedREST(nil), resource)
}

// writeRESTAPIError is writeRESTError for an error already mapped and located.
func (s *Core) writeRESTAPIError(c *fasthttp.RequestCtx, ae *APIError, resource string) {
	h := &c.Response.Header
	switch ae.Status {
	case 401:
		v := `Bearer resource_metadata="` + s.BaseFor(c) + `/.well-known/oauth-protected-resource` + resource + `"`
		if ae.TokenSent {
			v += `, error="invalid_token"`
		}
		h.Set("WWW-Authenticate", v)
	case 403:
		if ae.Code == "insufficient_scope" {
			h.Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="`+ae.Scope+`"`)
		}
	}
	WriteErrorBody(c, ae)
}

// WriteErrorBody writes the status, Retry-After and JSON body every JSON surface shares:
// 422 as {"detail":[items]}, anything else as {"detail","code"}. Internal failures are
// noted for the access log.
func WriteErrorBody(c *fasthttp.RequestCtx, ae *APIError) {
	ae = ae.LocatedREST(nil)
	info := InfoOf(c)
	info.Code = ae.Code
	if ae.Status >= 500 {
		info.Err = ae.Error()
	}
	if ae.Status == 429 || (ae.Status == 503 && ae.RetryAfter > 0) {
		c.Response.Header.Set("Retry-After", strconv.Itoa(max(ae.RetryAfter, 1)))
	}
	// Messages are read by people too (curl): "Bearer <token>", not "Bearer \u003ctoken\u003e".
	var body []byte
	if ae.Status == 422 {
		body, _ = json.MarshalWithOption(ValidationBody{Detail: ae.Fields}, json.DisableHTMLEscape())
	} else {
		body, _ = json.MarshalWithOption(ErrorBody{Detail: ae.Detail, Code: ae.Code}, json.DisableHTMLEscape())
	}
	c.SetStatusCode(ae.Status)
	c.SetContentType("application/json")
	c.SetBody(body)
}

func AsKV(err error, target **kv.Error) bool { return errors.As(err, target) }

// simulationRetryAfter is the Retry-After (seconds) of a refused fourth simulation: a
// slot frees only when a simulation ends, which takes a while, so a client polling
// every second would only spend its rate limit.
const simulationRetryAfter = 5
