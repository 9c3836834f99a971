package server

import (
	"context"
	stdjson "encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"interviewd/kv"
)

// parityCase is one refusal both surfaces must agree on.
type parityCase struct {
	name       string
	op         *Operation
	key        string
	args       map[string]any
	wantStatus int // the REST status; 0 when only agreement is checked
}

// parityCases derives, from the table alone, the bad inputs every operation must
// refuse alike on REST and MCP: a missing scope, a malformed uuid, another
// organisation's object, a limit out of range and a forged cursor. Operations added
// later are covered with no change here.
func parityCases(ops []*Operation, mine, theirs kv.ID, cursor func(kind byte, last kv.ID) string) []parityCase {
	var cases []parityCase
	for _, o := range ops {
		base := map[string]any{}
		simple := true // no required body field this test cannot fill
		for _, fp := range o.plan.fields {
			switch {
			case fp.typ == idType && fp.required:
				base[fp.name] = mine.String()
			case fp.required:
				simple = false
			}
		}
		status := func(s int) int {
			if simple {
				return s
			}
			return 0
		}
		with := func(k string, v any) map[string]any {
			m := map[string]any{}
			for bk, bv := range base {
				m[bk] = bv
			}
			m[k] = v
			return m
		}
		add := func(name, key string, args map[string]any, want int) {
			cases = append(cases, parityCase{name: o.Name + "/" + name, op: o, key: key, args: args, wantStatus: want})
		}
		if o.Scope != "" {
			key := "a_links_only"
			if o.Scope == "links:read" {
				key = "a_studies_only"
			}
			add("ErrScopeMissing", key, base, 403)
		}
		for _, fp := range o.plan.fields {
			if fp.typ == idType || (fp.typ.Kind() == reflect.Pointer && fp.typ.Elem() == idType) {
				add("ErrBadUUID_"+fp.name, "a_live", with(fp.name, "not-a-uuid"), 422)
				if fp.src == srcPath {
					id := kv.NewV4().String()
					if fp.name == "study_id" {
						id = theirs.String()
					}
					add("ErrOtherOrg_"+fp.name, "a_live", with(fp.name, id), status(404))
				}
			}
			switch fp.name {
			case "limit":
				add("ErrLimit0", "a_live", with("limit", 0), 422)
				add("ErrLimit201", "a_live", with("limit", 201), 422)
			case "cursor":
				add("ErrCursor", "a_live", with("cursor", "garbage"), 422)
				other := kv.CursorInterviews // a cursor from the other list
				if o.Name == "list_interviews" {
					other = kv.CursorStudies
				}
				add("ErrCursorOtherKind", "a_live", with("cursor", cursor(other, mine)), 422)
			}
		}
	}
	return cases
}

// restRequest renders tool arguments as the operation's REST request.
func restRequest(o *Operation, args map[string]any) (path, body string) {
	path = o.Path
	query := url.Values{}
	bodyArgs := map[string]any{}
	for _, fp := range o.plan.fields {
		v, ok := args[fp.name]
		if !ok {
			continue
		}
		switch fp.src {
		case srcPath:
			path = strings.Replace(path, "{"+fp.name+"}", url.PathEscape(fmt.Sprint(v)), 1)
		case srcQuery:
			query.Set(fp.name, fmt.Sprint(v))
		default:
			bodyArgs[fp.name] = v
		}
	}
	if len(query) > 0 {
		path += "?" + query.Encode()
	}
	if o.plan.hasBody {
		raw, _ := stdjson.Marshal(bodyArgs)
		body = string(raw)
	}
	return path, body
}

func TestMCPRESTParity(t *testing.T) {
	e := mustServe(t)
	mine := e.mustStudy(e.orgA.ID, kv.EnvLive, "Mine")
	theirs := e.mustStudy(e.orgB.ID, kv.EnvLive, "Theirs")
	for _, era := range eras {
		sessions := map[string]*mcp.ClientSession{}
		for _, key := range []string{"a_live", "a_links_only", "a_studies_only"} {
			sessions[key] = e.mustMCP(t, key, era)
		}
		t.Run("OK_EveryOperationHasItsTool_"+era, func(t *testing.T) {
			res, err := sessions["a_live"].ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var tools, ops []string
			for _, tool := range res.Tools {
				tools = append(tools, tool.Name)
			}
			for _, o := range e.srv.Operations() {
				ops = append(ops, o.Name)
			}
			if !slices.Equal(slices.Sorted(slices.Values(tools)), slices.Sorted(slices.Values(ops))) {
				t.Fatalf("tools %v, operations %v", tools, ops)
			}
		})
		cases := parityCases(e.srv.Operations(), mine.ID, theirs.ID, func(kind byte, last kv.ID) string {
			return e.db.EncodeCursor(kind, kv.Partition{Org: e.orgA.ID, Env: kv.EnvLive}, last)
		})
		if len(cases) < 11 {
			t.Fatalf("only %d parity cases derived from the table", len(cases))
		}
		for _, c := range cases {
			t.Run(era+"/"+c.name, func(t *testing.T) {
				path, body := restRequest(c.op, c.args)
				rest := e.do(c.op.Method, path, c.key, body)
				if c.wantStatus != 0 && rest.status != c.wantStatus {
					t.Fatalf("REST %s %s: %d, want %d: %s", c.op.Method, path, rest.status, c.wantStatus, rest.body)
				}
				if rest.status < 400 {
					t.Fatalf("REST accepted a bad input: %d %s", rest.status, rest.body)
				}
				res, sc := callTool(t, sessions[c.key], c.op.Name, c.args)
				if !res.IsError {
					t.Fatalf("REST refused with %d, MCP accepted: %v", rest.status, sc)
				}
				var restBody map[string]any
				rest.json(t, &restBody)
				if rest.status == 422 {
					if sc["code"] != "validation_error" {
						t.Fatalf("REST 422, MCP code %v", sc["code"])
					}
					if !reflect.DeepEqual(sc["errors"], restBody["detail"]) {
						t.Fatalf("validation items differ:\nREST %v\nMCP  %v", restBody["detail"], sc["errors"])
					}
					return
				}
				if sc["code"] != restBody["code"] || sc["detail"] != restBody["detail"] {
					t.Fatalf("REST %d %v, MCP %v", rest.status, restBody, sc)
				}
			})
		}
	}
}
