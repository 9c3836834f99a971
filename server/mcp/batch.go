package mcp

import (
	stdjson "encoding/json"
	"fmt"
	"interviewd/server/pipeline"

	"github.com/valyala/fasthttp"
)

// A JSON-RPC batch is answered item by item, each answer kept until the whole array is
// written: a 1 MiB body of small requests (13,585 tools/call whoami) was an answer of
// 10.8 MB and gigabytes allocated. The 2025-06-18 revision dropped batching (the SDK
// refuses batches from it on); the clients of the 2025-03-26 revision that batch send
// a few requests at a time (initialize with its notification, a handful of calls).

// mcpMaxBatch caps the requests of one batch.
const MaxBatch = 32

// mcpMaxBatchAnswer caps the answer to one batch: beyond it the batch is refused
// instead of answered, whatever its requests returned.
const mcpMaxBatchAnswer = 8 << 20

// refuseLargeBatch answers a batch of more than mcpMaxBatch requests with a JSON-RPC
// Invalid Request, before any of its requests runs, and reports whether it did. It
// reports in isBatch whether body is a batch at all.
func refuseLargeBatch(c *fasthttp.RequestCtx, body []byte) (refused, isBatch bool) {
	n, isBatch := BatchLen(body, MaxBatch)
	if !isBatch || n <= MaxBatch {
		return false, isBatch
	}
	if !stdjson.Valid(body) { // not JSON at all: the SDK answers a parse error
		return false, isBatch
	}
	pipeline.WriteJSONRPCError(c, 400, -32600, fmt.Sprintf(
		"Invalid Request: a JSON-RPC batch may hold at most %d requests; send the rest in further batches or one at a time.", MaxBatch))
	return true, true
}

// BatchLen reports whether body is a JSON array (a batch) and how many elements its
// top level holds, counting no further than limit+1. It does not validate the JSON.
func BatchLen(body []byte, limit int) (n int, isBatch bool) {
	i := 0
	for i < len(body) && isJSONSpace(body[i]) {
		i++
	}
	if i == len(body) || body[i] != '[' {
		return 0, false
	}
	depth, commas, empty, inString := 0, 0, true, false
	for ; i < len(body); i++ {
		ch := body[i]
		if inString {
			switch ch {
			case '\\':
				i++ // the escaped character cannot end the string
			case '"':
				inString = false
			}
			continue
		}
		switch {
		case ch == '"':
			inString = true
			empty = false
		case ch == '[' || ch == '{':
			depth++
			if depth > 1 {
				empty = false
			}
		case ch == ']' || ch == '}':
			depth--
			if depth == 0 {
				return elements(commas, empty), true
			}
		case ch == ',' && depth == 1:
			if commas++; commas+1 > limit {
				return commas + 1, true
			}
		case !isJSONSpace(ch):
			empty = false
		}
	}
	return elements(commas, empty), true
}

func elements(commas int, empty bool) int {
	if empty {
		return 0
	}
	return commas + 1
}

func isJSONSpace(ch byte) bool { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' }
