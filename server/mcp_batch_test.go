package server

import (
	stdjson "encoding/json"
	"fmt"
	"interviewd/server/mcp"
	"interviewd/server/pipeline"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// whoamiBatch is a JSON-RPC batch of n tools/call whoami requests.
func whoamiBatch(n int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"whoami"}}`, i+1)
	}
	b.WriteByte(']')
	return b.String()
}

// TestMCPBatchCap: a batch of the 2025-03-26 era holds at most mcpMaxBatch requests. One
// over is refused whole with a JSON-RPC Invalid Request naming the cap, and none of its
// requests runs (the credential's read budget is untouched); one at the cap is answered
// item by item.
func TestMCPBatchCap(t *testing.T) {
	limits := pipeline.DefaultRateLimits()
	limits.Read, limits.OrgRead = 10*mcp.MaxBatch, 10*mcp.MaxBatch
	e := mustServe(t, withRateLimits(limits))
	post := func(body string) response {
		return e.do("POST", "/v1/mcp", "a_live", body, "Accept", acceptBoth)
	}
	// readsLeft is the credential's read budget left after one more whoami.
	readsLeft := func(t *testing.T) int {
		t.Helper()
		r := post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami"}}`)
		var left int
		if _, err := fmt.Sscanf(r.header.Get("RateLimit"), `"read";r=%d`, &left); r.status != 200 || err != nil {
			t.Fatalf("whoami: %d RateLimit %q (%v) %s", r.status, r.header.Get("RateLimit"), err, r.body)
		}
		return left
	}

	t.Run("ErrOverTheCap", func(t *testing.T) {
		before := readsLeft(t)
		r := post(whoamiBatch(mcp.MaxBatch + 1))
		if r.status != 400 {
			t.Fatalf("%d %.300s", r.status, r.body)
		}
		res := decodeRPC(t, r)
		if res.Error == nil || res.Error.Code != -32600 || res.ID != nil ||
			!strings.Contains(res.Error.Message, fmt.Sprintf("at most %d requests", mcp.MaxBatch)) {
			t.Fatalf("%d %.300s", r.status, r.body)
		}
		if after := readsLeft(t); after != before-1 {
			t.Fatalf("the refused batch ran requests: %d reads left before it, %d after one more whoami", before, after)
		}
	})
	t.Run("OK_AtTheCap", func(t *testing.T) {
		r := post(whoamiBatch(mcp.MaxBatch))
		if r.status != 200 {
			t.Fatalf("%d %.300s", r.status, r.body)
		}
		var answers []rpc
		if err := stdjson.Unmarshal(r.body, &answers); err != nil || len(answers) != mcp.MaxBatch {
			t.Fatalf("%d answers (%v): %.300s", len(answers), err, r.body)
		}
		for _, a := range answers {
			if sc, _ := a.Result["structuredContent"].(map[string]any); a.Error != nil || sc["org_name"] != "Org A" {
				t.Fatalf("answer %+v", a)
			}
		}
	})
}

// TestMCPBatchAttackAllocation: the attack of a 1 MiB batch of 13,585 tools/call
// whoami costs the server a bounded number of allocated bytes (it was an answer of
// 10.8 MB per request, and every call run). The bound is a few times the body: the
// body is read, checked and refused.
func TestMCPBatchAttackAllocation(t *testing.T) {
	e := mustServe(t)
	body := whoamiBatch(13585)
	if len(body) > pipeline.MCPMaxBody {
		t.Fatalf("the attack body is %d bytes, over the %d limit", len(body), pipeline.MCPMaxBody)
	}
	post := func() response { return e.do("POST", "/v1/mcp", "a_live", body, "Accept", acceptBoth) }
	post() // warm: the SDK, pools and buffers are built once
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r := post()
	runtime.ReadMemStats(&after)
	const bound = 16 << 20
	if got := after.TotalAlloc - before.TotalAlloc; got > bound {
		t.Fatalf("one attack request allocated %d bytes (client and server), over %d; answered %d %.200s", got, bound, r.status, r.body)
	}
	if r.status != 400 {
		t.Fatalf("%d %.300s", r.status, r.body)
	}
	t.Logf("one attack request allocated %d bytes (client and server)", after.TotalAlloc-before.TotalAlloc)
}

// TestMCPBatchLen: the batch counter sees only the top level of an array, whatever
// its strings and nested values hold, and stops counting past its limit.
func TestMCPBatchLen(t *testing.T) {
	for _, tc := range []struct {
		body    string
		n       int
		isBatch bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, 0, false},
		{`  [] `, 0, true},
		{"\n[ \t]", 0, true},
		{`[1]`, 1, true},
		{`[{"a":[1,2,3],"b":{"c":1,"d":2}}, "x,y", "q\\", "q\",]"]`, 4, true},
		{`[[1,2],[3,4],5]`, 3, true},
		{`[` + strings.Repeat(`{},`, 100) + `{}]`, 5, true}, // stops at limit+1
		{`"["`, 0, false},
	} {
		n, isBatch := mcp.BatchLen([]byte(tc.body), 4)
		if n != tc.n || isBatch != tc.isBatch {
			t.Errorf("batchLen(%s) = %d, %v; want %d, %v", tc.body, n, isBatch, tc.n, tc.isBatch)
		}
	}
}

// TestBridgeAnswerCap: an answer the SDK writes past the bridge's limit is dropped, not
// kept, and the caller is told so; one within it is passed on whole.
func TestBridgeAnswerCap(t *testing.T) {
	const limit = 1 << 10
	chunk := strings.Repeat("a", limit/2+1)
	for _, tc := range []struct {
		name   string
		writes int
		ok     bool
	}{{"OK_WithinLimit", 1, true}, {"ErrOverLimit", 2, false}} {
		t.Run(tc.name, func(t *testing.T) {
			var req fasthttp.Request
			req.Header.SetMethod("POST")
			req.SetRequestURI("/v1/mcp")
			var c fasthttp.RequestCtx
			c.Init(&req, nil, nil)
			h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				for range tc.writes {
					if _, err := io.WriteString(w, chunk); err != nil {
						return
					}
				}
			})
			ok := pipeline.ServeHTTPBridge(&c, h, t.Context(), limit)
			if ok != tc.ok || (ok && string(c.Response.Body()) != chunk) || (!ok && len(c.Response.Body()) != 0) {
				t.Fatalf("ok %v, body %d bytes", ok, len(c.Response.Body()))
			}
		})
	}
}
