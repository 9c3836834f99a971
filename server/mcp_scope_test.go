package server

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"interviewd/kv"
	mcpsurface "interviewd/server/mcp"
	"interviewd/server/pipeline"
)

var challengeParam = regexp.MustCompile(`^([a-z_]+)="([^"\\]*)"(?:, |$)`)

// parseChallenge splits a Bearer challenge (RFC 6750 §3) into its parameters, failing
// on anything else: another scheme, a parameter twice, unquoted values.
func parseChallenge(tb testing.TB, v string) map[string]string {
	tb.Helper()
	rest, ok := strings.CutPrefix(v, "Bearer ")
	if !ok {
		tb.Fatalf("challenge %q is not Bearer", v)
	}
	out := map[string]string{}
	for rest != "" {
		m := challengeParam.FindStringSubmatch(rest)
		if m == nil {
			tb.Fatalf("challenge %q: cannot read %q", v, rest)
		}
		if _, dup := out[m[1]]; dup {
			tb.Fatalf("challenge %q names %s twice", v, m[1])
		}
		out[m[1]] = m[2]
		rest = rest[len(m[0]):]
	}
	return out
}

// TestMCPUnauthorizedNamesScope: the 401 names the scopes a connection asks for by
// default, which are those the protected-resource metadata lists.
func TestMCPUnauthorizedNamesScope(t *testing.T) {
	e := mustServe(t)
	var doc pipeline.ProtectedResource
	e.do("GET", "/.well-known/oauth-protected-resource/v1/mcp", "", "").json(t, &doc)
	if len(doc.ScopesSupported) < 2 {
		t.Fatalf("metadata %+v", doc)
	}
	for _, auth := range []string{"", "Bearer svca_nothing"} {
		r := e.do("POST", "/v1/mcp", auth, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "Accept", acceptBoth)
		ch := parseChallenge(t, r.header.Get("WWW-Authenticate"))
		if r.status != 401 || ch["scope"] != strings.Join(doc.ScopesSupported, " ") || ch["resource_metadata"] == "" {
			t.Fatalf("%q: %d %q", auth, r.status, r.header.Get("WWW-Authenticate"))
		}
		if strings.Contains(ch["scope"], kv.ScopeAgentRun) {
			t.Fatalf("the 401 asks for %s, which OAuth never grants", kv.ScopeAgentRun)
		}
	}
}

// TestMCPToolListForCredential: an OAuth connection lists every tool, those it lacks the
// scope for marked in their description; an API key lists only the tools it can call (nothing widens a key). In the 2026-07-28 era the list is marked
// private to the credential, as it depends on it.
func TestMCPToolListForCredential(t *testing.T) {
	e := mustServe(t)
	owner := e.mustAppClient(t, "a@example.com", e.orgA.ID, kv.EnvLive, "")
	reader := e.mustConnect(t, owner, pipeline.ResourceMCP, e.orgA.ID, kv.EnvLive, "studies:read")
	full := e.mustConnect(t, owner, pipeline.ResourceMCP, e.orgA.ID, kv.EnvLive, "")
	ops := map[string]*pipeline.Operation{}
	for _, o := range e.srv.Operations() {
		ops[o.Name] = o
	}
	narrowKey, err := e.srv.ResolveToken(e.keys["a_studies_only"], pipeline.ResourceMCP)
	if err != nil {
		t.Fatal(err)
	}
	list := func(t *testing.T, secret, era string) *mcp.ListToolsResult {
		t.Helper()
		res, err := mustMCPAt(t, e.url+"/v1/mcp", secret, era).ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if era == eraModern && res.CacheScope != "private" {
			t.Fatalf("cacheScope %q, want private", res.CacheScope)
		}
		return res
	}
	for _, era := range eras {
		t.Run("OAuth_Narrow_"+era, func(t *testing.T) {
			res := list(t, reader.access, era)
			var marked []string
			for _, tool := range res.Tools {
				if strings.HasSuffix(tool.Description, mcpsurface.NotGrantedNote) {
					marked = append(marked, tool.Name)
				}
			}
			if len(res.Tools) != len(ops) || !slices.Contains(marked, "create_study") || slices.Contains(marked, "get_study") ||
				slices.Contains(marked, "whoami") {
				t.Fatalf("%d tools of %d, marked %v", len(res.Tools), len(ops), marked)
			}
			for _, tool := range res.Tools {
				p := pipeline.PrincipalFromKey(kv.Credential{Key: kv.Key{Scopes: []string{"studies:read"}}})
				if lacks := ops[tool.Name].CheckScope(p) != nil; lacks != slices.Contains(marked, tool.Name) {
					t.Fatalf("%s: the connection lacks its scope: %v; marked: %v", tool.Name, lacks, !lacks)
				}
			}
		})
		t.Run("OAuth_Full_"+era, func(t *testing.T) {
			for _, tool := range list(t, full.access, era).Tools {
				if strings.Contains(tool.Description, mcpsurface.NotGrantedNote) {
					t.Fatalf("%s is marked for a connection holding every scope", tool.Name)
				}
			}
		})
		t.Run("APIKey_Narrow_"+era, func(t *testing.T) {
			var names []string
			for _, tool := range list(t, e.keys["a_studies_only"], era).Tools {
				names = append(names, tool.Name)
				if strings.Contains(tool.Description, mcpsurface.NotGrantedNote) || ops[tool.Name].CheckScope(narrowKey) != nil {
					t.Fatalf("%s listed for a key that cannot call it", tool.Name)
				}
			}
			if !slices.Contains(names, "get_study") || !slices.Contains(names, "whoami") || slices.Contains(names, "create_study") {
				t.Fatalf("tools %v", names)
			}
		})
	}
}
