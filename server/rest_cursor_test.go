package server

import (
	"encoding/base64"
	"strings"
	"testing"

	"interviewd/kv"
)

// TestTamperedCursorIs422: a cursor edited to start a page elsewhere is refused, over
// REST and MCP alike, and the one issued still works.
func TestTamperedCursorIs422(t *testing.T) {
	e := mustServe(t)
	for range 3 {
		e.mustStudy(e.orgA.ID, kv.EnvLive, "Paged")
	}
	r := e.do("GET", "/v1/api/studies?limit=1", "a_live", "")
	next := r.header.Get("X-Next-Cursor")
	if r.status != 200 || next == "" {
		t.Fatalf("%d %q", r.status, next)
	}
	raw, _ := base64.RawURLEncoding.DecodeString(next)
	raw[10] ^= 0x40 // another row id
	tampered := base64.RawURLEncoding.EncodeToString(raw)
	if r := e.do("GET", "/v1/api/studies?limit=1&cursor="+tampered, "a_live", ""); r.status != 422 || !strings.Contains(string(r.body), `"loc":["query","cursor"]`) {
		t.Fatalf("REST: %d %s", r.status, r.body)
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_studies","arguments":{"cursor":"` + tampered + `"}}}`
	if r := e.do("POST", "/v1/mcp", "a_live", body, "Accept", acceptBoth); !strings.Contains(string(r.body), `"isError":true`) || !strings.Contains(string(r.body), "validation_error") {
		t.Fatalf("MCP: %s", r.body)
	}
	if r := e.do("GET", "/v1/api/studies?limit=1&cursor="+next, "a_live", ""); r.status != 200 {
		t.Fatalf("issued cursor: %d %s", r.status, r.body)
	}
	if r := e.do("GET", "/v1/api/studies?limit=1&cursor="+next, "a_test", ""); r.status != 422 {
		t.Fatalf("cursor in another environment: %d %s", r.status, r.body)
	}
}
