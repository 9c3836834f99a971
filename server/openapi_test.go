package server

import (
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/rs/zerolog"

	"interviewd/kv"
	"interviewd/server/pipeline"
	"interviewd/server/research"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// TestOpenAPIGolden pins the generated document: any change to an operation, input or
// output type shows up here, so the document can never drift from the code unseen.
// Run `go test ./server -run OpenAPIGolden -update` after a deliberate change.
func TestOpenAPIGolden(t *testing.T) {
	e := mustServe(t)
	r := e.do("GET", "/v1/api/openapi.json", "", "")
	if r.status != 200 {
		t.Fatalf("status %d", r.status)
	}
	golden := filepath.Join("testdata", "openapi.golden.json")
	if *update {
		if err := os.WriteFile(golden, r.body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != string(r.body) {
		t.Fatalf("openapi.json differs from %s; run `go test ./server -run OpenAPIGolden -update` and review the diff", golden)
	}
}

// TestOpenAPIMatchesTable checks the document's promises against the live table.
func TestOpenAPIMatchesTable(t *testing.T) {
	s := New(Config{DB: mustOpenDB(t), Log: zerolog.Nop(), BaseURL: testBaseURL})
	raw, _ := json.Marshal(s.OpenAPIDocument())
	var doc struct {
		OpenAPI string `json:"openapi"`
		Info    struct {
			Version string `json:"version"`
		} `json:"info"`
		Paths map[string]map[string]struct {
			OperationID   string  `json:"operationId"`
			RequiredScope *string `json:"x-required-scope"`
			RequestBody   *struct {
				Content map[string]struct {
					Schema map[string]any `json:"schema"`
				} `json:"content"`
			} `json:"requestBody"`
		} `json:"paths"`
		Components struct {
			Schemas map[string]map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" || doc.Info.Version != "1.0.0" {
		t.Fatalf("openapi %s version %s", doc.OpenAPI, doc.Info.Version)
	}
	n := 0
	for _, o := range s.Operations() {
		item, ok := doc.Paths[o.Path][strings.ToLower(o.Method)]
		if !ok {
			t.Fatalf("operation %s (%s %s) missing from the document", o.Name, o.Method, o.Path)
		}
		n++
		if item.OperationID != o.OperationID || item.RequiredScope == nil || *item.RequiredScope != pipeline.OrDefault(o.ScopeDoc, o.Scope) {
			t.Fatalf("%s: operationId %q scope %v", o.Name, item.OperationID, item.RequiredScope)
		}
		if o.Plan.HasBody && o.RESTBind == nil {
			sc := item.RequestBody.Content["application/json"].Schema
			if ref, ok := sc["$ref"].(string); ok {
				sc = doc.Components.Schemas[strings.TrimPrefix(ref, pipeline.ComponentRefPrefix)]
			}
			if sc["additionalProperties"] != false {
				t.Fatalf("%s: request schema allows unknown fields", o.Name)
			}
		}
	}
	total := 0
	for _, methods := range doc.Paths {
		total += len(methods)
	}
	if total != n+1 { // + the bearer-less signed artifact download
		t.Fatalf("document has %d operations, table %d (+1 for the signed download)", total, n)
	}
	if _, ok := doc.Paths["/v1/api/exports/{job_id}/artifact"]["get"]; !ok {
		t.Fatal("the signed artifact download is not documented")
	}
}

// hostedNames are the hosted service's published operationIds, each with the
// components of its JSON request body and success body ("" for none): code generated
// from either document must be the same.
var hostedNames = []struct{ operationID, request, response string }{
	{"whoami_v1_api_me_get", "", "WhoAmIOut"},
	{"list_studies_v1_api_studies_get", "", "PublicStudySummary"},
	{"create_study_v1_api_studies_post", "StudyGuidanceRequest", "AuthoringJobOut"},
	{"get_study_v1_api_studies__study_id__get", "", "PublicStudyDetail"},
	{"get_study_interview_link_v1_api_studies__study_id__interview_link_get", "", "InterviewLinkOut"},
	{"create_participant_link_v1_api_studies__study_id__participant_links_post", "ParticipantLinkRequest", "ParticipantLinkOut"},
	{"upload_file_v1_api_files_post", "", "FileUploadOut"},
	{"get_authoring_status_v1_api_studies_jobs__job_id__get", "", "AuthoringStatusOut"},
	{"refine_study_v1_api_studies__study_id__refine_post", "StudyGuidanceRequest", "AuthoringJobOut"},
	{"simulate_study_v1_api_studies__study_id__simulate_post", "SimulationRequest", "SimulationJobAccepted"},
	{"get_simulation_status_v1_api_simulations__job_id__get", "", "SimulationStatusOut"},
	{"list_interviews_v1_api_interviews_get", "", "PublicInterview"},
	{"get_interview_v1_api_interviews__interview_id__get", "", "PublicInterview"},
	{"set_study_mode_v1_api_studies__study_id__mode_put", "StudyModeRequest", "StudyModeOut"},
	{"start_export_v1_api_exports_post", "ExportRequest", "ExportJobAccepted"},
	{"get_export_job_v1_api_exports__job_id__get", "", "ExportJobStatus"},
	{"download_export_job_v1_api_exports__job_id__download_get", "", ""},
}

// hostedComponents are the hosted service's component schema names.
var hostedComponents = []string{"AuthoringJobOut", "AuthoringStatusOut", "Body_upload_file_v1_api_files_post", "Brief", "ExportFormat", "ExportJobAccepted",
	"ExportJobStatus", "ExportRequest", "FileUploadOut", "HTTPValidationError", "InterviewLinkOut", "ParticipantLinkOut",
	"ParticipantLinkRequest", "PublicInterview", "PublicStudyDetail", "PublicStudySummary", "SimulationJobAccepted",
	"SimulationRequest", "SimulationStatusOut", "SimulationTranscriptTurn", "StudyGuidanceRequest", "StudyModeOut",
	"StudyModeRequest", "ValidationError", "WhoAmIOut"}

// servedDocument fetches the served document as a client sees it.
func servedDocument(t *testing.T) map[string]any {
	t.Helper()
	e := mustServe(t)
	r := e.do("GET", "/v1/api/openapi.json", "", "")
	if r.status != 200 {
		t.Fatalf("status %d", r.status)
	}
	var doc map[string]any
	r.json(t, &doc)
	return doc
}

// docAt walks a decoded document along keys.
func docAt(v any, keys ...string) any {
	for _, k := range keys {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}

func TestOpenAPIHostedNames(t *testing.T) {
	doc := servedDocument(t)
	components, _ := docAt(doc, "components", "schemas").(map[string]any)
	ref := func(name string) map[string]any { return map[string]any{"$ref": pipeline.ComponentRefPrefix + name} }

	operations := map[string]map[string]any{} // operationId → operation object
	for _, item := range doc["paths"].(map[string]any) {
		for _, o := range item.(map[string]any) {
			id, _ := docAt(o, "operationId").(string)
			if _, dup := operations[id]; dup || id == "" {
				t.Fatalf("operationId %q missing or used twice", id)
			}
			operations[id] = o.(map[string]any)
		}
	}
	for _, h := range hostedNames {
		t.Run("Operation_"+h.operationID, func(t *testing.T) {
			o, ok := operations[h.operationID]
			if !ok {
				t.Fatalf("no operation %s", h.operationID)
			}
			if h.request != "" {
				if got := docAt(o, "requestBody", "content", "application/json", "schema"); !reflect.DeepEqual(got, ref(h.request)) {
					t.Fatalf("request body %v, want a $ref to %s", got, h.request)
				}
			}
			if h.response == "" {
				return
			}
			for status, resp := range docAt(o, "responses").(map[string]any) {
				if status[0] != '2' {
					continue
				}
				got := docAt(resp, "content", "application/json", "schema")
				if items := docAt(got, "items"); docAt(got, "type") == "array" {
					got = items // a list: the items are the component
				}
				if !reflect.DeepEqual(got, ref(h.response)) {
					t.Fatalf("%s body %v, want a $ref to %s", status, got, h.response)
				}
			}
		})
	}
	for _, name := range hostedComponents {
		if _, ok := components[name]; !ok {
			t.Errorf("component %s missing", name)
		}
	}

	t.Run("ComponentsReferencedNeverInlined", func(t *testing.T) {
		referenced := map[string]bool{}
		var walk func(path string, v any, root string)
		walk = func(path string, v any, root string) {
			switch v := v.(type) {
			case map[string]any:
				if r, ok := v["$ref"].(string); ok {
					name := strings.TrimPrefix(r, pipeline.ComponentRefPrefix)
					if _, ok := components[name]; !ok {
						t.Errorf("%s: $ref %s resolves to nothing", path, r)
					}
					referenced[name] = true
				}
				bare := map[string]any{} // the node without its use-site annotations or null
				for k, x := range v {
					if k != "description" && k != "default" {
						bare[k] = x
					}
				}
				if typ, ok := bare["type"].([]any); ok && len(typ) == 2 && typ[1] == "null" {
					bare["type"] = typ[0]
				}
				for name, sc := range components {
					// A component's own root may share another's shape (two job handles).
					if root == "" && len(bare) > 1 && reflect.DeepEqual(bare, sc) {
						t.Errorf("%s inlines component %s instead of referencing it", path, name)
					}
				}
				for k, x := range v {
					walk(path+"/"+k, x, "")
				}
			case []any:
				for i, x := range v {
					walk(path+"/"+strconv.Itoa(i), x, "")
				}
			}
		}
		walk("#/paths", doc["paths"], "")
		for name, sc := range components {
			walk(pipeline.ComponentRefPrefix+name, sc, name)
		}
		for name := range components {
			if !referenced[name] {
				t.Errorf("component %s is never referenced", name)
			}
		}
	})

	t.Run("SecuritySchemeApiKey", func(t *testing.T) {
		scheme := docAt(doc, "components", "securitySchemes", "ApiKey")
		if docAt(scheme, "type") != "http" || docAt(scheme, "scheme") != "bearer" {
			t.Fatalf("ApiKey scheme %v", scheme)
		}
		if want := []any{map[string]any{"ApiKey": []any{}}}; !reflect.DeepEqual(doc["security"], want) {
			t.Fatalf("security %v", doc["security"])
		}
		if n := len(docAt(doc, "components", "securitySchemes").(map[string]any)); n != 1 {
			t.Fatalf("%d security schemes, want ApiKey alone", n)
		}
	})

	t.Run("DefaultsAndBounds", func(t *testing.T) {
		param := func(opID, name string) any {
			for _, p := range docAt(operations[opID], "parameters").([]any) {
				if docAt(p, "name") == name {
					return docAt(p, "schema")
				}
			}
			t.Fatalf("%s has no parameter %s", opID, name)
			return nil
		}
		cases := []struct {
			name string
			got  any
			want any
		}{
			{"list_studies limit default", docAt(param("list_studies_v1_api_studies_get", "limit"), "default"), float64(50)},
			{"list_interviews limit default", docAt(param("list_interviews_v1_api_interviews_get", "limit"), "default"), float64(50)},
			{"audience default", docAt(components, "ParticipantLinkRequest", "properties", "audience", "default"), "group"},
			{"note default", docAt(components, "ParticipantLinkRequest", "properties", "note", "default"), ""},
			{"max_turns default", docAt(components, "SimulationRequest", "properties", "max_turns", "default"), float64(12)},
			{"persona maxLength", docAt(components, "SimulationRequest", "properties", "persona", "maxLength"), float64(10000)},
			{"format default", docAt(components, "ExportRequest", "properties", "format", "default"), "csv"},
			{"format is ExportFormat", docAt(components, "ExportRequest", "properties", "format", "$ref"), pipeline.ComponentRefPrefix + "ExportFormat"},
			{"ExportFormat enum", docAt(components, "ExportFormat", "enum"), []any{"csv", "analysis-md", "analysis-html", "qdpx"}},
			{"ExportFormat default", docAt(components, "ExportFormat", "default"), "csv"},
			{"guidance minLength", docAt(components, "StudyGuidanceRequest", "properties", "guidance", "minLength"), float64(1)},
			{"whoami credits optional", docAt(components, "WhoAmIOut", "properties", "credits", "type"), []any{"integer", "null"}},
			{"mode notice optional", docAt(components, "StudyModeOut", "properties", "notice", "type"), []any{"string", "null"}},
			{"validation items", docAt(components, "HTTPValidationError", "properties", "detail", "items"), ref("ValidationError")},
		}
		for _, c := range cases {
			if !reflect.DeepEqual(c.got, c.want) {
				t.Errorf("%s: %#v, want %#v", c.name, c.got, c.want)
			}
		}
		for _, name := range []string{"WhoAmIOut", "StudyModeOut"} {
			for _, r := range docAt(components, name, "required").([]any) {
				if r == "credits" || r == "notice" {
					t.Errorf("%s requires %s, which is additive and optional", name, r)
				}
			}
		}
	})
}

// contractEndpoints are the endpoints of the contract's research API table
// (spec/api-spec.md, "Endpoints"): the operations the hosted service publishes under
// its tag Public API.
var contractEndpoints = []string{
	"GET /v1/api/me", "GET /v1/api/studies", "POST /v1/api/studies", "GET /v1/api/studies/{study_id}",
	"GET /v1/api/studies/{study_id}/interview-link", "POST /v1/api/studies/{study_id}/participant-links",
	"POST /v1/api/files", "GET /v1/api/studies/jobs/{job_id}", "POST /v1/api/studies/{study_id}:refine",
	"POST /v1/api/studies/{study_id}:simulate", "GET /v1/api/simulations/{job_id}", "GET /v1/api/interviews",
	"GET /v1/api/interviews/{interview_id}", "PUT /v1/api/studies/{study_id}/mode", "POST /v1/api/exports",
	"GET /v1/api/exports/{job_id}", "GET /v1/api/exports/{job_id}/download",
}

// TestOpenAPIPublicAPITag: a generated client makes one class per tag, so the
// operations the hosted service publishes carry its tag Public API, and exactly those:
// interviewd's additions are tagged apart, and every operation has one declared tag.
func TestOpenAPIPublicAPITag(t *testing.T) {
	doc := servedDocument(t)
	if len(contractEndpoints) != 17 || len(hostedNames) != 17 {
		t.Fatalf("%d contract endpoints and %d hosted operationIds, want 17 of each", len(contractEndpoints), len(hostedNames))
	}
	declared := map[string]bool{}
	topTags, _ := docAt(doc, "tags").([]any)
	if len(topTags) == 0 {
		t.Error("the document declares no tags")
	}
	for _, tag := range topTags {
		name, _ := docAt(tag, "name").(string)
		if desc, _ := docAt(tag, "description").(string); name == "" || desc == "" || declared[name] {
			t.Fatalf("tag %v: unnamed, undescribed or declared twice", tag)
		}
		declared[name] = true
	}
	hostedIDs := map[string]bool{}
	for _, h := range hostedNames {
		hostedIDs[h.operationID] = true
	}
	public := map[string]bool{}
	for path, item := range doc["paths"].(map[string]any) {
		for method, o := range item.(map[string]any) {
			endpoint := strings.ToUpper(method) + " " + path
			tags, _ := docAt(o, "tags").([]any)
			if len(tags) != 1 || !declared[tags[0].(string)] {
				t.Errorf("%s: tags %v, want one declared tag", endpoint, tags)
				continue
			}
			id, _ := docAt(o, "operationId").(string)
			if tags[0] == "Public API" {
				public[endpoint] = true
				if !hostedIDs[id] {
					t.Errorf("%s (%s) is tagged Public API but is no operation of the hosted service", endpoint, id)
				}
			} else if hostedIDs[id] {
				t.Errorf("%s (%s) is tagged %v, want Public API", endpoint, id, tags[0])
			}
		}
	}
	for _, e := range contractEndpoints {
		if !public[e] {
			t.Errorf("the contract's %s is not tagged Public API", e)
		}
	}
	if len(public) != len(contractEndpoints) {
		t.Errorf("%d operations tagged Public API, want the contract's %d", len(public), len(contractEndpoints))
	}
}

// TestOpenAPIUploadBody: the upload's multipart body is the hosted service's named
// component, referenced rather than inlined, with the contract's one required binary
// part file.
func TestOpenAPIUploadBody(t *testing.T) {
	doc := servedDocument(t)
	const name = "Body_upload_file_v1_api_files_post"
	body := docAt(doc, "paths", "/v1/api/files", "post", "requestBody")
	if docAt(body, "required") != true {
		t.Fatalf("upload body %v is not required", body)
	}
	content, _ := docAt(body, "content").(map[string]any)
	if len(content) != 1 {
		t.Fatalf("upload body media types %v, want multipart/form-data alone", content)
	}
	if got, want := docAt(content, "multipart/form-data", "schema"), map[string]any{"$ref": pipeline.ComponentRefPrefix + name}; !reflect.DeepEqual(got, want) {
		t.Fatalf("upload body schema %v, want %v", got, want)
	}
	want := map[string]any{
		"type":       "object",
		"required":   []any{"file"},
		"properties": map[string]any{"file": map[string]any{"type": "string", "format": "binary"}},
	}
	if got := docAt(doc, "components", "schemas", name); !reflect.DeepEqual(got, want) {
		t.Fatalf("component %s is %v, want %v", name, got, want)
	}
}

// TestOpenAPIOperationIDsFromTable: every operation of the table carries its published
// operationId, so a new operation cannot slip into the document under a bare name.
func TestOpenAPIOperationIDsFromTable(t *testing.T) {
	s := New(Config{DB: mustOpenDB(t), Log: zerolog.Nop(), BaseURL: testBaseURL})
	seen := map[string]bool{}
	for _, o := range s.Operations() {
		if o.OperationID == "" || seen[o.OperationID] {
			t.Fatalf("%s: operationId %q empty or repeated", o.Name, o.OperationID)
		}
		seen[o.OperationID] = true
	}
	for _, h := range hostedNames {
		if !seen[h.operationID] {
			t.Errorf("the table lacks %s", h.operationID)
		}
	}
}

// resolveSchema compiles a JSON Schema (2020-12) document, validating its defaults
// when asked (the OpenAPI schema's dynamic references rule that out for it).
func resolveSchema(t *testing.T, raw []byte, defaults bool) *jsonschema.Resolved {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	rs, err := s.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: defaults})
	if err != nil {
		t.Fatalf("schema does not compile: %v", err)
	}
	return rs
}

// TestOpenAPIValidates checks the served document against the OpenAPI 3.1 schema
// (testdata/oas-3.1-schema.json, the OpenAPI Initiative's 2022-10-07 schema), compiles
// every component as JSON Schema 2020-12 with its defaults checked, and validates real
// responses of the router against the components their operations name.
func TestOpenAPIValidates(t *testing.T) {
	e := mustServe(t)
	r := e.do("GET", "/v1/api/openapi.json", "", "")
	var doc map[string]any
	r.json(t, &doc)

	rawMeta, err := os.ReadFile(filepath.Join("testdata", "oas-3.1-schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	meta := resolveSchema(t, rawMeta, false)
	if err := meta.Validate(doc); err != nil {
		t.Fatalf("the document is not valid OpenAPI 3.1: %v", err)
	}
	var broken map[string]any // proof the validation bites: a parameter in the body, as in Swagger 2
	if err := json.Unmarshal(r.body, &broken); err != nil {
		t.Fatal(err)
	}
	docAt(broken, "paths", "/v1/api/studies", "get", "parameters").([]any)[0].(map[string]any)["in"] = "body"
	if meta.Validate(broken) == nil {
		t.Fatal("a parameter in the body passed validation: the check proves nothing")
	}

	components, err := json.Marshal(docAt(doc, "components", "schemas"))
	if err != nil {
		t.Fatal(err)
	}
	defs := strings.ReplaceAll(string(components), `"`+pipeline.ComponentRefPrefix, `"#/$defs/`)
	component := func(name string) *jsonschema.Resolved {
		return resolveSchema(t, []byte(`{"$defs":`+defs+`,"$ref":"#/$defs/`+name+`"}`), true)
	}
	for _, name := range hostedComponents {
		component(name)
	}
	if component("WhoAmIOut").Validate(map[string]any{"org_id": "x", "extra": 1}) == nil {
		t.Fatal("WhoAmIOut takes anything: validating responses against it proves nothing")
	}

	e.mustKey("b_test", e.orgB.ID, kv.EnvTest, []string{"studies:read", "studies:write", "studies:golive"})
	live := e.mustStudy(e.orgB.ID, kv.EnvLive, "No credits")
	e.mustStudy(e.orgA.ID, kv.EnvLive, "Listed")
	start := e.do("POST", "/v1/api/studies", "a_live", `{"guidance":"hello"}`)
	var job research.AuthoringJob
	start.json(t, &job)
	cases := []struct {
		name      string
		r         response
		status    int
		component string
		list      bool
	}{
		{name: "WhoamiLive", r: e.do("GET", "/v1/api/me", "a_live", ""), status: 200, component: "WhoAmIOut"},
		{name: "WhoamiTest", r: e.do("GET", "/v1/api/me", "a_test", ""), status: 200, component: "WhoAmIOut"},
		{name: "ModeNotice", r: e.do("PUT", "/v1/api/studies/"+live.ID.String()+"/mode", "b_live", `{"mode":"live"}`), status: 200, component: "StudyModeOut"},
		{name: "AuthoringFailed", r: e.pollAuthoring("a_live", job.JobID), status: 200, component: "AuthoringStatusOut"},
		{name: "AuthoringJob", r: start, status: 202, component: "AuthoringJobOut"},
		{name: "ListStudies", r: e.do("GET", "/v1/api/studies", "a_live", ""), status: 200, component: "PublicStudySummary", list: true},
		{name: "Validation422", r: e.do("POST", "/v1/api/studies", "a_live", `{"guidance":""}`), status: 422, component: "HTTPValidationError"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.r.status != c.status {
				t.Fatalf("%d %s", c.r.status, c.r.body)
			}
			var body any
			c.r.json(t, &body)
			items := []any{body}
			if c.list {
				items = body.([]any)
				if len(items) == 0 {
					t.Fatal("an empty list validates nothing")
				}
			}
			sc := component(c.component)
			for _, item := range items {
				if err := sc.Validate(item); err != nil {
					t.Fatalf("%s does not conform to %s: %v", c.r.body, c.component, err)
				}
			}
		})
	}
}
