package depcheck

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// listModule reads the module's packages with go list, from the module's root.
func listModule(t *testing.T) []Package {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, "go", "list", "-e", "-json=ImportPath,Imports,Deps,TestImports,XTestImports,Error", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []Package
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			Package
			Error *struct{ Err string }
		}
		err := dec.Decode(&p)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("read go list's output: %v", err)
		}
		if p.Error != nil {
			t.Errorf("go list: %s: %s", p.ImportPath, p.Error.Err)
		}
		pkgs = append(pkgs, p.Package)
	}
	return pkgs
}

// The module keeps every rule.
func TestModuleKeepsTheRules(t *testing.T) {
	pkgs := listModule(t)
	if !slices.ContainsFunc(pkgs, func(p Package) bool { return p.ImportPath == Module+"/kv" }) {
		t.Fatalf("go list found %d packages and not %s/kv: run from the module", len(pkgs), Module)
	}
	for _, b := range Check(Module, pkgs, Rules) {
		t.Error(b)
	}
}

// Every rule is about packages that exist, so a renamed folder cannot leave a rule
// holding vacuously (the surfaces, which are still to come, excepted).
func TestRulesNameExistingPackages(t *testing.T) {
	pkgs := listModule(t)
	for _, r := range Rules {
		if r.Apart {
			continue
		}
		for _, pat := range r.From {
			if !slices.ContainsFunc(pkgs, func(p Package) bool { return Match(pat, p.ImportPath) }) {
				t.Errorf("rule %q: no package matches %s", r.Name, pat)
			}
		}
	}
}

// graph builds a synthetic module from "importer: imported imported" lines (direct,
// non-test imports), with every package's Deps as go list would give them.
func graph(lines ...string) []Package {
	imports := map[string][]string{}
	var order []string
	for _, l := range lines {
		from, to, _ := strings.Cut(l, ":")
		from = strings.TrimSpace(from)
		order = append(order, from)
		imports[from] = strings.Fields(to)
	}
	var deps func(string, map[string]bool)
	deps = func(p string, seen map[string]bool) {
		for _, d := range imports[p] {
			if !seen[d] {
				seen[d] = true
				deps(d, seen)
			}
		}
	}
	var out []Package
	for _, p := range order {
		seen := map[string]bool{}
		deps(p, seen)
		var ds []string
		for d := range seen {
			ds = append(ds, d)
		}
		slices.Sort(ds)
		out = append(out, Package{ImportPath: p, Imports: imports[p], Deps: ds})
	}
	return out
}

// A graph that keeps the rules today's module keeps.
func goodGraph() []Package {
	return graph(
		"interviewd: interviewd/server interviewd/kv",
		"interviewd/server: interviewd/jobs interviewd/kv interviewd/webui interviewd/server/rest interviewd/server/mcp interviewd/server/ratelimit",
		"interviewd/server/ratelimit: interviewd/kv",
		"interviewd/server/rest: interviewd/kv interviewd/server/internal/pipeline",
		"interviewd/server/mcp: interviewd/kv interviewd/server/internal/pipeline",
		"interviewd/server/internal/pipeline: interviewd/kv",
		"interviewd/jobs: interviewd/moderator interviewd/analysis interviewd/kv",
		"interviewd/moderator: interviewd/kv interviewd/tagger",
		"interviewd/analysis: interviewd/analysis/findings interviewd/tagger",
		"interviewd/analysis/findings: fmt",
		"interviewd/kv: interviewd/blobs interviewd/analysis/findings interviewd/kv/internal/engine interviewd/kv/internal/boltengine",
		"interviewd/kv/internal/boltengine: interviewd/kv/internal/engine go.etcd.io/bbolt",
		"interviewd/kv/internal/engine: context",
		"interviewd/blobs: os",
		"interviewd/webui: embed",
		"interviewd/tagger: strings",
	)
}

func TestCheck_GoodGraphKeepsEveryRule(t *testing.T) {
	if got := Check(Module, goodGraph(), Rules); len(got) != 0 {
		t.Fatalf("breaches in a good graph: %v", got)
	}
}

// Each bad import is reported under its rule, with the chain that leads to it.
func TestCheck_BadImportsAreReported(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(map[string][]string)
		rule string
		want string // the breach, as printed
	}{
		{
			"kv imports server",
			func(g map[string][]string) { g["interviewd/kv"] = append(g["interviewd/kv"], "interviewd/server") },
			"kv imports nothing of ours",
			"interviewd/kv imports interviewd/server",
		},
		{
			"kv's engine reaches jobs through a third package",
			func(g map[string][]string) {
				g["interviewd/kv/internal/boltengine"] = append(g["interviewd/kv/internal/boltengine"], "interviewd/logbatch")
				g["interviewd/logbatch"] = []string{"interviewd/jobs"}
			},
			"kv imports nothing of ours",
			"interviewd/kv/internal/boltengine imports interviewd/jobs (via interviewd/logbatch)",
		},
		{
			"a surface imports another",
			func(g map[string][]string) {
				g["interviewd/server/rest"] = append(g["interviewd/server/rest"], "interviewd/server/mcp")
			},
			"surfaces never import each other",
			"interviewd/server/rest imports interviewd/server/mcp",
		},
		{
			"server imports kv's engine",
			func(g map[string][]string) {
				g["interviewd/server"] = append(g["interviewd/server"], "interviewd/kv/internal/boltengine")
			},
			"kv's storage engines",
			"interviewd/server imports interviewd/kv/internal/boltengine",
		},
		{
			"jobs imports server",
			func(g map[string][]string) { g["interviewd/jobs"] = append(g["interviewd/jobs"], "interviewd/server") },
			"jobs sit below server",
			"interviewd/jobs imports interviewd/server",
		},
		{
			"the rate limiter imports server",
			func(g map[string][]string) {
				g["interviewd/server/ratelimit"] = append(g["interviewd/server/ratelimit"], "interviewd/server")
			},
			"server/ratelimit imports nothing of server",
			"interviewd/server/ratelimit imports interviewd/server",
		},
		{
			"the rate limiter reaches the pipeline through a third package",
			func(g map[string][]string) {
				g["interviewd/server/ratelimit"] = append(g["interviewd/server/ratelimit"], "interviewd/logbatch")
				g["interviewd/logbatch"] = []string{"interviewd/server/internal/pipeline"}
			},
			"server/ratelimit imports nothing of server",
			"interviewd/server/ratelimit imports interviewd/server/internal/pipeline (via interviewd/logbatch)",
		},
		{
			"analysis imports kv",
			func(g map[string][]string) {
				g["interviewd/analysis"] = append(g["interviewd/analysis"], "interviewd/kv")
			},
			"analysis is pure",
			"interviewd/analysis imports interviewd/kv",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := map[string][]string{}
			var lines []string
			for _, p := range goodGraph() {
				g[p.ImportPath] = slices.Clone(p.Imports)
			}
			tc.edit(g)
			for p, imps := range g {
				lines = append(lines, p+": "+strings.Join(imps, " "))
			}
			slices.Sort(lines)
			got := Check(Module, graph(lines...), Rules)
			found := false
			for _, b := range got {
				if strings.HasPrefix(b.Rule, tc.rule) && strings.HasSuffix(b.String(), ": "+tc.want) {
					found = true
				}
			}
			if !found {
				t.Fatalf("breaches %v; want %q under the rule %q", got, tc.want, tc.rule)
			}
		})
	}
}

// The rule kinds on their own: a direct-only rule ignores what is reached indirectly,
// test imports count only where a rule says so, a package never breaches a rule by
// depending on packages of its own pattern, and nothing outside the module is judged.
func TestCheck_RuleKinds(t *testing.T) {
	pkgs := []Package{
		{ImportPath: "m/a", Imports: []string{"m/b"}, Deps: []string{"m/b", "m/c"}, TestImports: []string{"m/d"}},
		{ImportPath: "m/a/sub", Imports: []string{"m/a", "x.org/lib"}, Deps: []string{"m/a", "m/b", "m/c", "x.org/lib"}},
		{ImportPath: "m/b", Imports: []string{"m/c"}, Deps: []string{"m/c"}},
		{ImportPath: "m/c"},
		{ImportPath: "m/d"},
	}
	for _, tc := range []struct {
		name string
		rule Rule
		want []string
	}{
		{"DenyTransitive", Rule{From: []string{"m/a"}, Deny: []string{"m/c"}}, []string{"m/a imports m/c (via m/b)"}},
		{"DenyDirectOnly", Rule{From: []string{"m/a"}, Deny: []string{"m/c"}, Direct: true}, nil},
		{"TestsIgnored", Rule{From: []string{"m/a"}, Deny: []string{"m/d"}}, nil},
		{"TestsCounted", Rule{From: []string{"m/a"}, Deny: []string{"m/d"}, Tests: true}, []string{"m/a imports m/d"}},
		{"ClosedAllowsOwnAndOnly", Rule{From: []string{"m/a/..."}, Closed: true, Only: []string{"m/b"}},
			[]string{"m/a imports m/c (via m/b)", "m/a/sub imports m/c (via m/a → m/b)"}},
		{"Unless", Rule{From: []string{"m/..."}, Unless: []string{"m/a/..."}, Deny: []string{"m/c"}}, []string{"m/b imports m/c"}},
		{"Apart", Rule{From: []string{"m/a/...", "m/b", "m/d"}, Apart: true},
			[]string{"m/a imports m/b", "m/a/sub imports m/b (via m/a)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.rule.Name = tc.name
			var got []string
			for _, b := range Check("m", pkgs, []Rule{tc.rule}) {
				got = append(got, strings.TrimPrefix(b.String(), tc.name+": "))
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("breaches %q, want %q", got, tc.want)
			}
		})
	}
}

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, path string
		want          bool
	}{
		{"interviewd/kv", "interviewd/kv", true},
		{"interviewd/kv", "interviewd/kv/pgtest", false},
		{"interviewd/kv/...", "interviewd/kv", true},
		{"interviewd/kv/...", "interviewd/kv/internal/engine", true},
		{"interviewd/kv/...", "interviewd/kvx", false},
		{"interviewd/...", "interviewd", true},
	} {
		if got := Match(tc.pattern, tc.path); got != tc.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tc.pattern, tc.path, got, tc.want)
		}
	}
}
