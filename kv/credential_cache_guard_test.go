package kv

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestAuthWritesInvalidateCredentials reads the package's source: every function that
// writes (Put, Delete, putJSON) while naming the keys, key hashes or organisations
// bucket must register the credential cache's invalidation (authChanged, or putOrg which
// does). A new writer of those records that forgot it would let a cached credential
// outlive the change; this fails instead.
func TestAuthWritesInvalidateCredentials(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	guarded := map[string]bool{"bucketOrgs": true, "bucketKeys": true, "bucketKeyHashes": true}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil || fn.Name.Name == "putOrg" {
				continue
			}
			var names, writes, invalidates bool
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.Ident:
					if guarded[n.Name] {
						names = true
					}
				case *ast.CallExpr:
					switch f := n.Fun.(type) {
					case *ast.Ident:
						writes = writes || f.Name == "putJSON"
					case *ast.SelectorExpr:
						switch f.Sel.Name {
						case "Put", "Delete":
							writes = true
						case "authChanged", "putOrg":
							invalidates = true
						}
					}
				}
				return true
			})
			if names && writes {
				checked++
				if !invalidates {
					t.Errorf("%s: %s writes while naming a key or organisation bucket but never calls authChanged (or putOrg)", fset.Position(fn.Pos()), fn.Name.Name)
				}
			}
		}
	}
	if checked < 2 { // CreateKey and RevokeKey at least
		t.Fatalf("only %d writers of keys or organisations found: the check no longer sees them", checked)
	}
}
