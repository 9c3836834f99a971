// Package depcheck keeps the house's dependency rules: which of the module's packages
// may depend on which. The rules are data (Rules); Check evaluates them over an import
// graph, and the package's test runs them over the module as `go list` reads it, so a
// change that imports against a rule fails the suite. It is a folder of its own because
// it belongs to no package it checks; nothing imports it.
package depcheck

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Rule is one dependency rule. A pattern is an import path, or a path ending in "/..."
// that matches the path and every package below it (as the go command reads it).
type Rule struct {
	// Name says the rule in words; every breach is reported under it.
	Name string
	// From are the packages the rule is about (patterns).
	From []string
	// Unless exempts importers From would match.
	Unless []string
	// Direct makes only direct imports count; otherwise every dependency does, direct
	// or not.
	Direct bool
	// Tests makes the imports of the packages' tests count too.
	Tests bool
	// Deny are packages the From packages must not depend on.
	Deny []string
	// Closed restricts the From packages to the module packages of their own From
	// pattern and those Only names.
	Closed bool
	Only   []string
	// Apart makes From's patterns a group whose members never depend on one another: a
	// package of one pattern may not depend on a package of another.
	Apart bool
}

// Package is one package of the graph, as go list describes it.
type Package struct {
	ImportPath string
	// Imports are its direct imports; Deps every dependency, direct or not.
	Imports, Deps []string
	// TestImports and XTestImports are its tests' direct imports.
	TestImports, XTestImports []string
}

// Breach is one import against a rule.
type Breach struct {
	Rule     string
	Importer string
	Imported string
	// Via is the chain of imports from Importer to Imported when it is not direct.
	Via []string
}

func (b Breach) String() string {
	s := fmt.Sprintf("%s: %s imports %s", b.Rule, b.Importer, b.Imported)
	if len(b.Via) > 0 {
		s += " (via " + strings.Join(b.Via, " → ") + ")"
	}
	return s
}

// Match reports whether path matches pattern.
func Match(pattern, path string) bool {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return path == base || strings.HasPrefix(path, base+"/")
	}
	return path == pattern
}

func matchAny(patterns []string, path string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool { return Match(p, path) })
}

// Check evaluates rules over pkgs, the packages of the module whose root import path
// is module, and returns every breach, sorted. Only the module's own packages are
// judged: a standard-library or third-party dependency is never a breach.
func Check(module string, pkgs []Package, rules []Rule) []Breach {
	byPath := make(map[string]*Package, len(pkgs))
	for i := range pkgs {
		byPath[pkgs[i].ImportPath] = &pkgs[i]
	}
	ours := func(path string) bool { return path == module || strings.HasPrefix(path, module+"/") }
	var out []Breach
	for _, r := range rules {
		for i := range pkgs {
			p := &pkgs[i]
			own := slices.IndexFunc(r.From, func(pat string) bool { return Match(pat, p.ImportPath) })
			if own < 0 || matchAny(r.Unless, p.ImportPath) {
				continue
			}
			for _, dep := range dependencies(p, byPath, r.Direct, r.Tests) {
				if dep == p.ImportPath || !ours(dep) || !breaks(r, own, dep) {
					continue
				}
				b := Breach{Rule: r.Name, Importer: p.ImportPath, Imported: dep}
				if !slices.Contains(direct(p, r.Tests), dep) {
					b.Via = chain(p, dep, byPath, r.Tests)
				}
				out = append(out, b)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Rule != b.Rule {
			return a.Rule < b.Rule
		}
		if a.Importer != b.Importer {
			return a.Importer < b.Importer
		}
		return a.Imported < b.Imported
	})
	return out
}

// breaks reports whether a package of r's From pattern own depending on dep breaks r.
func breaks(r Rule, own int, dep string) bool {
	if matchAny(r.Deny, dep) {
		return true
	}
	if r.Closed && !Match(r.From[own], dep) && !matchAny(r.Only, dep) {
		return true
	}
	if r.Apart {
		for i, pat := range r.From {
			if i != own && Match(pat, dep) && !Match(r.From[own], dep) {
				return true
			}
		}
	}
	return false
}

// direct returns p's direct imports (its tests' too when tests).
func direct(p *Package, tests bool) []string {
	out := slices.Clone(p.Imports)
	if tests {
		out = append(append(out, p.TestImports...), p.XTestImports...)
	}
	return out
}

// dependencies returns what p depends on: its direct imports, or with them everything
// they depend on in turn.
func dependencies(p *Package, byPath map[string]*Package, directOnly, tests bool) []string {
	if directOnly {
		return uniq(direct(p, tests))
	}
	out := slices.Clone(p.Deps)
	if tests {
		for _, t := range append(slices.Clone(p.TestImports), p.XTestImports...) {
			out = append(out, t)
			if q := byPath[t]; q != nil {
				out = append(out, q.Deps...)
			}
		}
	}
	return uniq(out)
}

func uniq(s []string) []string {
	slices.Sort(s)
	return slices.Compact(s)
}

// chain returns the packages between p and dep along a shortest chain of imports
// (nil when none is found in the graph).
func chain(p *Package, dep string, byPath map[string]*Package, tests bool) []string {
	prev := map[string]string{}
	queue := []string{}
	for _, d := range direct(p, tests) {
		if _, seen := prev[d]; !seen && d != p.ImportPath {
			prev[d] = ""
			queue = append(queue, d)
		}
	}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if cur == dep {
			var via []string
			for at := prev[cur]; at != ""; at = prev[at] {
				via = append(via, at)
			}
			slices.Reverse(via)
			return via
		}
		if q := byPath[cur]; q != nil {
			for _, d := range q.Imports {
				if _, seen := prev[d]; !seen {
					prev[d] = cur
					queue = append(queue, d)
				}
			}
		}
	}
	return nil
}
