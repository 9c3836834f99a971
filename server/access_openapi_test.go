package server

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"interviewd/kv"
	"interviewd/server/access"
	"interviewd/server/pipeline"
)

// TestAccessOpenAPIGolden pins the account access API's document: a change to a step,
// its input or output shows up here. Run `go test ./server -run AccessOpenAPIGolden
// -update` after a deliberate change.
func TestAccessOpenAPIGolden(t *testing.T) {
	e := mustServe(t)
	r := e.do("GET", "/v1/access/openapi.json", "", "")
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		t.Fatalf("status %d", r.status)
	}
	golden := filepath.Join("testdata", "access_openapi.golden.json")
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
		t.Fatalf("access openapi.json differs from %s; run `go test ./server -run AccessOpenAPIGolden -update` and review the diff", golden)
	}
	// It is this API's alone: the research document does not describe it.
	if research := e.do("GET", "/v1/api/openapi.json", "", ""); strings.Contains(string(research.body), "/v1/access/") {
		t.Fatal("the research API's document describes the access API")
	}
}

// TestAccessOpenAPIValidates checks the document against the OpenAPI 3.1 schema, that
// it lists exactly the table's steps with their success status and Idempotency-Key
// rule, and validates real answers of a whole flow against the components their steps
// name.
func TestAccessOpenAPIValidates(t *testing.T) {
	e, smtp := mustServeMail(t)
	var doc map[string]any
	e.do("GET", "/v1/access/openapi.json", "", "").json(t, &doc)
	rawMeta, err := os.ReadFile(filepath.Join("testdata", "oas-3.1-schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := resolveSchema(t, rawMeta, false).Validate(doc); err != nil {
		t.Fatalf("the document is not valid OpenAPI 3.1: %v", err)
	}
	if docAt(doc, "info", "version") != "1.0.0" || doc["openapi"] != "3.1.0" {
		t.Fatalf("info %v", doc["info"])
	}
	table := (&access.API{Core: e.srv.Core}).Routes()
	paths := docAt(doc, "paths").(map[string]any)
	if len(paths) != len(table) {
		t.Fatalf("%d paths, table %d", len(paths), len(table))
	}
	for _, rt := range table {
		op, ok := docAt(doc, "paths", rt.Path, strings.ToLower(rt.Method)).(map[string]any)
		if !ok || op["operationId"] != rt.OperationID {
			t.Fatalf("%s %s: %v", rt.Method, rt.Path, op)
		}
		if _, ok := docAt(op, "responses", strconv.Itoa(rt.Status)).(map[string]any); !ok {
			t.Fatalf("%s: no %d response", rt.OperationID, rt.Status)
		}
		idem := false
		params, _ := op["parameters"].([]any)
		for _, p := range params {
			if p := p.(map[string]any); p["name"] == "Idempotency-Key" && p["required"] == true {
				idem = true
			}
		}
		if idem != rt.Idempotent {
			t.Fatalf("%s: Idempotency-Key required %v, table %v", rt.OperationID, idem, rt.Idempotent)
		}
	}

	components, err := json.Marshal(docAt(doc, "components", "schemas"))
	if err != nil {
		t.Fatal(err)
	}
	defs := strings.ReplaceAll(string(components), `"`+pipeline.ComponentRefPrefix, `"#/$defs/`)
	validate := func(name string, body []byte) {
		t.Helper()
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			t.Fatal(err)
		}
		rs := resolveSchema(t, []byte(`{"$defs":`+defs+`,"$ref":"#/$defs/`+name+`"}`), true)
		if err := rs.Validate(v); err != nil {
			t.Fatalf("%s does not validate %s: %v", name, body, err)
		}
	}
	if resolveSchema(t, []byte(`{"$defs":`+defs+`,"$ref":"#/$defs/AccessKeyOut"}`), true).Validate(map[string]any{"key_id": "x"}) == nil {
		t.Fatal("AccessKeyOut takes anything: validating answers against it proves nothing")
	}
	g := newAccessAgent(t, e)
	r, _ := g.post("/v1/access/transactions", `{"email":"a@example.com","client_name":"Doc agent"}`)
	validate("AccessStartOut", r.body)
	var started access.AccessStartOut
	r.json(t, &started)
	g.id = started.TransactionID.String()
	code := smtp.Next(t, "a@example.com").Code()
	r, _ = g.post("/v1/access/verify-email", `{"transaction_id":"`+g.id+`","token":"000000x"}`)
	validate("AccessValidationError", r.body)
	r, _ = g.post("/v1/access/workspace", `{"transaction_id":"`+g.id+`","action":"list"}`)
	validate("AccessError", r.body)
	r, _ = g.post("/v1/access/verify-email", `{"transaction_id":"`+g.id+`","token":"`+code+`"}`)
	validate("AccessStepOut", r.body)
	r, _ = g.post("/v1/access/workspace", `{"transaction_id":"`+g.id+`","action":"list"}`)
	validate("AccessWorkspaceOut", r.body)
	r, _ = g.post("/v1/access/workspace", `{"transaction_id":"`+g.id+`","action":"select","org_id":"`+e.orgA.ID.String()+`"}`)
	validate("AccessWorkspaceOut", r.body)
	idem := kv.NewV4().String()
	body := `{"transaction_id":"` + g.id + `","name":"k","scopes":["studies:read"],"environment":"test","expires_in_days":null}`
	r, _ = g.post("/v1/access/keys", body, "Idempotency-Key", idem)
	validate("AccessKeyOut", r.body)
	r, _ = g.post("/v1/access/keys", body, "Idempotency-Key", idem)
	validate("AccessKeyOut", r.body)
}
