package server

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

func (s *Core) routeDocs(r *router.Router) {
	// Rendered on first request: generating it was a fifth of a server's start-up.
	raw := sync.OnceValue(func() []byte {
		raw, err := json.MarshalIndent(s.openAPIDocument(), "", "  ")
		if err != nil {
			panic(err)
		}
		return raw
	})
	handlePlain(r, "GET", "/v1/api/openapi.json", func(c *fasthttp.RequestCtx) {
		c.SetContentType("application/json")
		c.SetBody(raw())
	})
}

// openAPIDocument generates the research API's OpenAPI 3.1 document from the
// operations table: one path item per operation, and every named type (the table's
// Request and Response, a field's component tag) a component referenced with $ref.
// The document is the same for every caller: export formats an organisation adds
// with its own plugins are accepted beside the documented csv.
func (s *Core) openAPIDocument() schema {
	g := &schemaGen{components: schema{}}
	errRef := g.named("Error", schema{"type": "object", "required": []any{"detail", "code"}, "additionalProperties": false,
		"properties": schema{"detail": schema{"type": "string"}, "code": schema{"type": "string"}}})
	validationItem := g.named("ValidationError", schema{
		"type": "object", "required": []any{"loc", "msg", "type"},
		"properties": schema{
			"loc":  schema{"type": "array", "items": schema{"type": []any{"string", "integer"}}},
			"msg":  schema{"type": "string"},
			"type": schema{"type": "string"},
			"ctx":  schema{"type": "object"},
		}})
	validation := g.named("HTTPValidationError", schema{"type": "object", "required": []any{"detail"}, "additionalProperties": false,
		"properties": schema{"detail": schema{"type": "array", "items": validationItem}}})
	paths := schema{}
	for _, o := range s.ops {
		item, _ := paths[o.Path].(schema)
		if item == nil {
			item = schema{}
			paths[o.Path] = item
		}
		item[strings.ToLower(o.Method)] = g.openAPIOperation(o, errRef, validation)
	}
	paths["/v1/api/exports/{job_id}/artifact"] = schema{"get": schema{
		"operationId": "download_export_artifact_v1_api_exports__job_id__artifact_get",
		"tags":        []any{tagDownloads},
		"summary":     "The export artifact at a signed download_url: no bearer; valid 5 minutes",
		"security":    []any{},
		"parameters": []any{
			schema{"name": "job_id", "in": "path", "required": true, "schema": schema{"type": "string", "format": "uuid"}},
			schema{"name": "org", "in": "query", "required": true, "schema": schema{"type": "string", "format": "uuid"}},
			schema{"name": "env", "in": "query", "required": true, "schema": schema{"type": "string", "enum": []any{"test", "live"}}},
			schema{"name": "expires", "in": "query", "required": true, "schema": schema{"type": "integer"}},
			schema{"name": "sig", "in": "query", "required": true, "schema": schema{"type": "string"}},
		},
		"responses": schema{
			"200": schema{"description": "The artifact.", "content": schema{"text/csv": schema{"schema": schema{"type": "string", "format": "binary"}}}},
			"403": schema{"description": "download_url_invalid: a changed or expired URL.", "content": schema{"application/json": schema{"schema": errRef}}},
			"404": schema{"description": "export_expired: the artifact was deleted after seven days.", "content": schema{"application/json": schema{"schema": errRef}}},
		},
	}}
	return schema{
		"openapi": "3.1.0",
		"info": schema{
			"title":       "interviewd research API",
			"version":     OpenAPIVersion,
			"description": "AI-moderated research interviews: studies, links, interviews and exports.",
		},
		"servers":  []any{schema{"url": s.baseURL}},
		"security": []any{schema{securitySchemeName: []any{}}},
		"tags":     openAPITags(),
		"paths":    paths,
		"components": schema{
			"securitySchemes": schema{securitySchemeName: schema{"type": "http", "scheme": "bearer",
				"description": "An API key (jsk_live_… or jsk_test_…) or an OAuth access token (svca_…)."}},
			"schemas": g.components,
		},
	}
}

// securitySchemeName is the bearer scheme's name, the hosted service's.
const securitySchemeName = "ApiKey"

// Operation tags: a generated client makes one class per tag, so the hosted service's
// tag on the operations both serve is what makes the two clients the same.
const (
	tagPublicAPI   = "Public API"  // the hosted service's public research API, its tag
	tagAnalysis    = "Analysis"    // findings: an interviewd addition
	tagStudies     = "Studies"     // a study's brief and participant settings written directly: an interviewd addition
	tagRecruit     = "Recruitment" // link labels, counts, disabling, batches and quotas: an interviewd addition
	tagTranscripts = "Transcripts" // tags, annotations and search of transcripts: an interviewd addition
	tagDownloads   = "Downloads"   // the signed artifact URL: no bearer
)

// openAPITags describes each tag, in the order a reader meets them.
func openAPITags() []any {
	return []any{
		schema{"name": tagPublicAPI, "description": "The research API the hosted service publishes, under its operationIds, tag and component names."},
		schema{"name": tagStudies, "description": "A study's brief edited directly, without an authoring job, and what its participants see around the interview: added by interviewd, not part of the hosted service's API."},
		schema{"name": tagRecruit, "description": "Participant links with labels and counts, disabled and enabled, created in batches from a CSV, and a study's quota of completed interviews: added by interviewd, not part of the hosted service's API."},
		schema{"name": tagTranscripts, "description": "Working with transcripts: a study's tags, annotations of participant messages, and search across a study's transcripts: added by interviewd, not part of the hosted service's API."},
		schema{"name": tagAnalysis, "description": "Findings from a live study's completed interviews: added by interviewd, not part of the hosted service's API."},
		schema{"name": tagDownloads, "description": "The export artifact at a signed download_url, fetched without a bearer credential."},
	}
}

func (g *schemaGen) openAPIOperation(o *Operation, errRef, validation schema) schema {
	var params []any
	for i := range o.plan.fields {
		fp := &o.plan.fields[i]
		if fp.src == srcBody {
			continue
		}
		// A path or query parameter is absent or has a value: null is an arguments-object
		// notion (MCP), not a URL one.
		param := *fp
		if param.typ.Kind() == reflect.Pointer {
			param.typ = param.typ.Elem()
		}
		params = append(params, schema{"name": fp.name, "in": fp.src.String(), "required": fp.required,
			"schema": g.inputFieldSchema(&param)})
	}
	if o.Idempotent {
		params = append(params, schema{"name": "Idempotency-Key", "in": "header", "required": false,
			"schema": schema{"type": "string", "minLength": 1, "maxLength": 255}})
	}
	success := schema{"description": o.Summary, "content": schema{"application/json": schema{"schema": g.restResponseSchema(o)}}}
	if o.out.Implements(listResultType) {
		success["headers"] = schema{"X-Next-Cursor": schema{"description": "Cursor of the next page; absent on the last page.",
			"schema": schema{"type": "string"}}}
	}
	refusal := func(desc string) schema {
		return schema{"description": desc, "content": schema{"application/json": schema{"schema": errRef}}}
	}
	responses := schema{
		strconv.Itoa(o.Status): success,
		"401":                  refusal("Missing, invalid, expired or revoked credential."),
		"403":                  refusal("The credential lacks the required scope."),
		"422":                  schema{"description": "Validation failure.", "content": schema{"application/json": schema{"schema": validation}}},
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
	if o.restRespond != nil { // the download: the artifact inline unless Accept asks for JSON
		success["content"].(schema)["text/csv"] = schema{"schema": schema{"type": "string", "format": "binary"}}
		success["description"] = o.Summary + ". The artifact itself (text/csv, or the formatter's media type) unless Accept names application/json and not text/csv."
	}
	if strings.Contains(o.Path, "{") {
		responses["404"] = refusal("Not found in the caller's organisation and environment.")
	}
	out := schema{
		"operationId":      orDefault(o.OperationID, o.Name),
		"tags":             []any{o.Tag},
		"summary":          o.Summary,
		"x-required-scope": orDefault(o.ScopeDoc, o.Scope),
		"responses":        responses,
	}
	if params != nil {
		out["parameters"] = params
	}
	if o.restBind != nil { // uploads: multipart, part "file"; other parts are ignored
		// The body is a component named as the hosted service names it (Body_ and the
		// operationId), so generated clients name the upload's argument type alike.
		out["requestBody"] = schema{"required": true, "content": schema{"multipart/form-data": schema{"schema": g.named("Body_"+o.OperationID, schema{
			"type": "object", "required": []any{"file"}, "properties": schema{"file": schema{"type": "string", "format": "binary"}}})}}}
	} else if o.plan.hasBody {
		out["requestBody"] = schema{"required": true, "content": schema{"application/json": schema{
			"schema": g.named(o.Request, g.inputSchema(o.plan, srcBody))}}}
	}
	return out
}
