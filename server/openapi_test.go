package server

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/rs/zerolog"
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
	raw, _ := json.Marshal(s.openAPIDocument())
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
		if item.OperationID != o.Name || item.RequiredScope == nil || *item.RequiredScope != orDefault(o.ScopeDoc, o.Scope) {
			t.Fatalf("%s: operationId %q scope %v", o.Name, item.OperationID, item.RequiredScope)
		}
		if o.plan.hasBody && o.restBind == nil {
			sc := item.RequestBody.Content["application/json"].Schema
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
