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
	"interviewd/server/pipeline"
)

// parityCase is one refusal both surfaces must agree on.
type parityCase struct {
	name       string
	op         *pipeline.Operation
	key        string
	args       map[string]any
	wantStatus int // the REST status; 0 when only agreement is checked
}

// parityCases derives, from the table alone, the bad inputs every operation must
// refuse alike on REST and MCP: a missing scope, a malformed uuid, another
// organisation's object, a limit out of range and a forged cursor. Operations added
// later are covered with no change here.
func parityCases(ops []*pipeline.Operation, mine, theirs kv.ID, cursor func(kind byte, last kv.ID) string) []parityCase {
	var cases []parityCase
	for _, o := range ops {
		base := map[string]any{}
		simple := true // no required body field this test cannot fill
		for _, fp := range o.Plan.Fields {
			switch {
			case fp.Typ == pipeline.IDType && fp.Required:
				base[fp.Name] = mine.String()
			case fp.Required:
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
		for _, fp := range o.Plan.Fields {
			if fp.Typ == pipeline.IDType || (fp.Typ.Kind() == reflect.Pointer && fp.Typ.Elem() == pipeline.IDType) {
				add("ErrBadUUID_"+fp.Name, "a_live", with(fp.Name, "not-a-uuid"), 422)
				if fp.Src == pipeline.SrcPath {
					id := kv.NewV4().String()
					if fp.Name == "study_id" {
						id = theirs.String()
					}
					add("ErrOtherOrg_"+fp.Name, "a_live", with(fp.Name, id), status(404))
				}
			}
			switch fp.Name {
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
func restRequest(o *pipeline.Operation, args map[string]any) (path, body string) {
	path = o.Path
	query := url.Values{}
	bodyArgs := map[string]any{}
	for _, fp := range o.Plan.Fields {
		v, ok := args[fp.Name]
		if !ok {
			continue
		}
		switch fp.Src {
		case pipeline.SrcPath:
			path = strings.Replace(path, "{"+fp.Name+"}", url.PathEscape(fmt.Sprint(v)), 1)
		case pipeline.SrcQuery:
			query.Set(fp.Name, fmt.Sprint(v))
		default:
			bodyArgs[fp.Name] = v
		}
	}
	if len(query) > 0 {
		path += "?" + query.Encode()
	}
	if o.Plan.HasBody {
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
