package webui

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"text/template/parse"
)

// TestTemplateNamesDeclared checks every page template, every branch of it, against
// the Go source of the packages whose types pages show (webui, server, kv): each .Name
// a template reads must be declared there as a struct field or a method. A misspelt
// name fails a page only when its branch runs (an error page, a rare state); this
// finds it before then.
func TestTemplateNamesDeclared(t *testing.T) {
	fields, methods := declaredNames(t, ".", "../server/...", "../kv")
	used := map[string][]string{} // name → templates reading it
	err := fs.WalkDir(templateFiles, "templates", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		text, err := fs.ReadFile(templateFiles, p)
		if err != nil {
			return err
		}
		tr := parse.New(p)
		tr.Mode = parse.SkipFuncCheck
		trees := map[string]*parse.Tree{}
		if _, err := tr.Parse(string(text), "", "", trees); err != nil {
			return err
		}
		for _, tree := range trees {
			walkNames(tree.Root, func(name string) { used[name] = append(used[name], filepath.Base(p)) })
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(used) < 100 {
		t.Fatalf("found only %d names in the templates: the walk misses nodes", len(used))
	}
	var bad []string
	for name, in := range used {
		if !fields[name] && !methods[name] {
			bad = append(bad, "."+name+" in "+strings.Join(in, ", "))
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Errorf("%s: no struct field or method of that name in webui, server or kv", b)
	}
}

// declaredNames returns the struct field names and method names declared in the Go
// files (tests excluded) of dirs; a dir ending in "/..." stands for its packages and
// every package below it (the server's surfaces are packages of their own).
func declaredNames(t *testing.T, dirs ...string) (fields, methods map[string]bool) {
	fields, methods = map[string]bool{}, map[string]bool{}
	fset := token.NewFileSet()
	for _, dir := range dirs {
		var files []string
		if root, ok := strings.CutSuffix(dir, "/..."); ok {
			err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() && strings.HasSuffix(p, ".go") && !strings.Contains(p, "testdata") {
					files = append(files, p)
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		} else {
			var err error
			if files, err = filepath.Glob(filepath.Join(dir, "*.go")); err != nil {
				t.Fatal(err)
			}
		}
		if len(files) == 0 {
			t.Fatalf("no Go files in %s", dir)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(file, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.StructType:
					for _, fl := range n.Fields.List {
						for _, id := range fl.Names {
							fields[id.Name] = true
						}
						if len(fl.Names) == 0 { // embedded: the type's name is the field's
							typ := fl.Type
							if s, ok := typ.(*ast.StarExpr); ok {
								typ = s.X
							}
							switch x := typ.(type) {
							case *ast.Ident:
								fields[x.Name] = true
							case *ast.SelectorExpr:
								fields[x.Sel.Name] = true
							}
						}
					}
				case *ast.FuncDecl:
					if n.Recv != nil {
						methods[n.Name.Name] = true
					}
				}
				return true
			})
		}
	}
	return fields, methods
}

// walkNames calls fn with every name a template reads from a value: .A.B gives A and
// B, $x.A gives A, (pipeline).A gives A.
func walkNames(n parse.Node, fn func(string)) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			walkNames(c, fn)
		}
	case *parse.ActionNode:
		walkNames(n.Pipe, fn)
	case *parse.PipeNode:
		if n == nil {
			return
		}
		for _, c := range n.Cmds {
			walkNames(c, fn)
		}
	case *parse.CommandNode:
		for _, a := range n.Args {
			walkNames(a, fn)
		}
	case *parse.FieldNode:
		for _, id := range n.Ident {
			fn(id)
		}
	case *parse.VariableNode:
		for _, id := range n.Ident[1:] {
			fn(id)
		}
	case *parse.ChainNode:
		walkNames(n.Node, fn)
		for _, id := range n.Field {
			fn(id)
		}
	case *parse.IfNode:
		walkBranch(&n.BranchNode, fn)
	case *parse.RangeNode:
		walkBranch(&n.BranchNode, fn)
	case *parse.WithNode:
		walkBranch(&n.BranchNode, fn)
	case *parse.TemplateNode:
		walkNames(n.Pipe, fn)
	}
}

func walkBranch(b *parse.BranchNode, fn func(string)) {
	walkNames(b.Pipe, fn)
	walkNames(b.List, fn)
	walkNames(b.ElseList, fn)
}
