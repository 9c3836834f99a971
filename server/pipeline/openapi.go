package pipeline

import (
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/fasthttp/router"
	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"
)

// OpenAPIVersion is the research API's info.version.
const OpenAPIVersion = "1.0.0"

func (s *Core) RouteDocs(r *router.Router) {
	// Rendered on first request: generating it was a fifth of a server's start-up.
	raw := sync.OnceValue(func() []byte {
		raw, err := json.MarshalIndent(s.OpenAPIDocument(), "", "  ")
		if err != nil {
			panic(err)
		}
		return raw
	})
	HandlePlain(r, "GET", "/v1/api/openapi.json", func(c *fasthttp.RequestCtx) {
		c.SetContentType("application/json")
		c.SetBody(raw())
	})
}

// OpenAPIDocument generates the research API's OpenAPI 3.1 document from the
// operations table: one path item per operation, and every named type (the table's
// Request and Response, a field's component tag) a component referenced with $ref.
// The document is the same for every caller: export formats an organisation adds
// with its own plugins are accepted beside the documented csv.
func (s *Core) OpenAPIDocument() Schema {
	g := &SchemaGen{Components: Schema{}}
	errRef := g.Named("Error", Schema{"type": "object", "required": []any{"detail", "code"}, "additionalProperties": false,
		"properties": Schema{"detail": Schema{"type": "string"}, "code": Schema{"type": "string"}}})
	validationItem := g.Named("ValidationError", Schema{
		"type": "object", "required": []any{"loc", "msg", "type"},
		"properties": Schema{
			"loc":  Schema{"type": "array", "items": Schema{"type": []any{"string", "integer"}}},
			"msg":  Schema{"type": "string"},
			"type": Schema{"type": "string"},
			"ctx":  Schema{"type": "object"},
		}})
	validation := g.Named("HTTPValidationError", Schema{"type": "object", "required": []any{"detail"}, "additionalProperties": false,
		"properties": Schema{"detail": Schema{"type": "array", "items": validationItem}}})
	paths := Schema{}
	for _, o := range s.Ops {
		item, _ := paths[o.Path].(Schema)
		if item == nil {
			item = Schema{}
			paths[o.Path] = item
		}
		item[strings.ToLower(o.Method)] = g.openAPIOperation(o, errRef, validation)
	}
	paths["/v1/api/exports/{job_id}/artifact"] = Schema{"get": Schema{
		"operationId": "download_export_artifact_v1_api_exports__job_id__artifact_get",
		"tags":        []any{tagDownloads},
		"summary":     "The export artifact at a signed download_url: no bearer; valid 5 minutes",
		"security":    []any{},
		"parameters": []any{
			Schema{"name": "job_id", "in": "path", "required": true, "schema": Schema{"type": "string", "format": "uuid"}},
			Schema{"name": "org", "in": "query", "required": true, "schema": Schema{"type": "string", "format": "uuid"}},
			Schema{"name": "env", "in": "query", "required": true, "schema": Schema{"type": "string", "enum": []any{"test", "live"}}},
			Schema{"name": "expires", "in": "query", "required": true, "schema": Schema{"type": "integer"}},
			Schema{"name": "sig", "in": "query", "required": true, "schema": Schema{"type": "string"}},
		},
		"responses": Schema{
			"200": Schema{"description": "The artifact.", "content": Schema{"text/csv": Schema{"schema": Schema{"type": "string", "format": "binary"}}}},
			"403": Schema{"description": "download_url_invalid: a changed or expired URL.", "content": Schema{"application/json": Schema{"schema": errRef}}},
			"404": Schema{"description": "export_expired: the artifact was deleted after seven days.", "content": Schema{"application/json": Schema{"schema": errRef}}},
		},
	}}
	return Schema{
		"openapi": "3.1.0",
		"info": Schema{
			"title":       "interviewd research API",
			"version":     OpenAPIVersion,
			"description": "AI-moderated research interviews: studies, links, interviews and exports.",
		},
		"servers":  []any{Schema{"url": s.BaseURL}},
		"security": []any{Schema{securitySchemeName: []any{}}},
		"tags":     openAPITags(),
		"paths":    paths,
		"components": Schema{
			"securitySchemes": Schema{securitySchemeName: Schema{"type": "http", "scheme": "bearer",
				"description": "An API key (jsk_live_… or jsk_test_…) or an OAuth access token (svca_…)."}},
			"schemas": g.Components,
		},
	}
}

// securitySchemeName is the bearer scheme's name, the hosted service's.
const securitySchemeName = "ApiKey"

// Operation tags: a generated client makes one class per tag, so the hosted service's
// tag on the operations both serve is what makes the two clients the same.
const (
	TagPublicAPI   = "Public API"  // the hosted service's public research API, its tag
	TagAnalysis    = "Analysis"    // findings: an interviewd addition
	TagStudies     = "Studies"     // a study's brief and participant settings written directly: an interviewd addition
	TagRecruit     = "Recruitment" // link labels, counts, disabling, batches and quotas: an interviewd addition
	TagTranscripts = "Transcripts" // tags, annotations and search of transcripts: an interviewd addition
	tagDownloads   = "Downloads"   // the signed artifact URL: no bearer
)

// openAPITags describes each tag, in the order a reader meets them.
func openAPITags() []any {
	return []any{
		Schema{"name": TagPublicAPI, "description": "The research API the hosted service publishes, under its operationIds, tag and component names."},
		Schema{"name": TagStudies, "description": "A study's brief edited directly, without an authoring job, and what its participants see around the interview: added by interviewd, not part of the hosted service's API."},
		Schema{"name": TagRecruit, "description": "Participant links with labels and counts, disabled and enabled, created in batches from a CSV, and a study's quota of completed interviews: added by interviewd, not part of the hosted service's API."},
		Schema{"name": TagTranscripts, "description": "Working with transcripts: a study's tags, annotations of participant messages, and search across a study's transcripts: added by interviewd, not part of the hosted service's API."},
		Schema{"name": TagAnalysis, "description": "Findings from a live study's completed interviews: added by interviewd, not part of the hosted service's API."},
		Schema{"name": tagDownloads, "description": "The export artifact at a signed download_url, fetched without a bearer credential."},
	}
}

func (g *SchemaGen) openAPIOperation(o *Operation, errRef, validation Schema) Schema {
	var params []any
	for i := range o.Plan.Fields {
		fp := &o.Plan.Fields[i]
		if fp.Src == SrcBody {
			continue
		}
		// A path or query parameter is absent or has a value: null is an arguments-object
		// notion (MCP), not a URL one.
		param := *fp
		if param.Typ.Kind() == reflect.Pointer {
			param.Typ = param.Typ.Elem()
		}
		params = append(params, Schema{"name": fp.Name, "in": fp.Src.String(), "required": fp.Required,
			"schema": g.inputFieldSchema(&param)})
	}
	if o.Idempotent {
		params = append(params, Schema{"name": "Idempotency-Key", "in": "header", "required": false,
			"schema": Schema{"type": "string", "minLength": 1, "maxLength": 255}})
	}
	success := Schema{"description": o.Summary, "content": Schema{"application/json": Schema{"schema": g.restResponseSchema(o)}}}
	if o.out.Implements(listResultType) {
		success["headers"] = Schema{"X-Next-Cursor": Schema{"description": "Cursor of the next page; absent on the last page.",
			"schema": Schema{"type": "string"}}}
	}
	refusal := func(desc string) Schema {
		return Schema{"description": desc, "content": Schema{"application/json": Schema{"schema": errRef}}}
	}
	responses := Schema{
		strconv.Itoa(o.Status): success,
		"401":                  refusal("Missing, invalid, expired or revoked credential."),
		"403":                  refusal("The credential lacks the required scope."),
		"422":                  Schema{"description": "Validation failure.", "content": Schema{"application/json": Schema{"schema": validation}}},
		"429":                  refusal("Rate limit exceeded; see Retry-After."),
	}
	var conflicts []string
	if o.Conflict != "" {
		conflicts = append(conflicts, o.Conflict)
	}
	if o.Idempotent {
		conflicts = append(conflicts, "idempotency_key_reused: the Idempotency-Key was used with a different body.",
			"idempotency_key_in_flight: a request with this Idempotency-Key is still running.")
	}
	if conflicts != nil {
		responses["409"] = refusal(strings.Join(conflicts, " "))
	}
	for status, desc := range o.Refusals {
		responses[strconv.Itoa(status)] = refusal(desc)
	}
	if o.RESTRespond != nil { // the download: the artifact inline unless Accept asks for JSON
		success["content"].(Schema)["text/csv"] = Schema{"schema": Schema{"type": "string", "format": "binary"}}
		success["description"] = o.Summary + ". The artifact itself (text/csv, or the formatter's media type) unless Accept names application/json and not text/csv."
	}
	if strings.Contains(o.Path, "{") {
		responses["404"] = refusal("Not found in the caller's organisation and environment.")
	}
	out := Schema{
		"operationId":      OrDefault(o.OperationID, o.Name),
		"tags":             []any{o.Tag},
		"summary":          o.Summary,
		"x-required-scope": OrDefault(o.ScopeDoc, o.Scope),
		"responses":        responses,
	}
	if params != nil {
		out["parameters"] = params
	}
	if o.RESTBind != nil { // uploads: multipart, part "file"; other parts are ignored
		// The body is a component named as the hosted service names it (Body_ and the
		// operationId), so generated clients name the upload's argument type alike.
		out["requestBody"] = Schema{"required": true, "content": Schema{"multipart/form-data": Schema{"schema": g.Named("Body_"+o.OperationID, Schema{
			"type": "object", "required": []any{"file"}, "properties": Schema{"file": Schema{"type": "string", "format": "binary"}}})}}}
	} else if o.Plan.HasBody {
		out["requestBody"] = Schema{"required": true, "content": Schema{"application/json": Schema{
			"schema": g.Named(o.Request, g.InputSchema(o.Plan, SrcBody))}}}
	}
	return out
}
