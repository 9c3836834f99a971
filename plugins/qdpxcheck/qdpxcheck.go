// Package qdpxcheck checks a REFI-QDA project file (.qdpx) against what the standard's
// Project.xsd (QDA-XML 1.0, namespace urn:QDA-XML:project:1.0) and its text describe,
// for the parts interviewd writes: the Project root and the order of its children,
// Users, the CodeBook's Codes, Variables, and text Sources with their selections,
// codings and variable values; every GUID well formed and unique, every reference to
// one that is defined, every source's text file in the archive, and every selection
// within its text. It returns what the selections select, so a test can compare them
// with the quotes they came from.
//
// It is the check the qdpx formatter's tests (plugins and server) share; the schema
// itself is not in the tree (no registry this project uses ships it), so the rules
// are written out here.
package qdpxcheck

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Namespace is the QDA-XML project namespace.
const Namespace = "urn:QDA-XML:project:1.0"

// Code is one code of the code book.
type Code struct {
	GUID, Name string
	Codable    bool
	Path       []string // the names from the top of the code book down to this one
}

// Selection is one PlainTextSelection with the text it selects.
type Selection struct {
	Source      string // the TextSource's name
	SourceGUID  string
	Start, End  int
	Text        string   // the source text's characters Start to End
	Codes       []string // the GUIDs its codings refer to
	Description string
}

// Source is one TextSource.
type Source struct {
	GUID, Name, Path string
	Text             string            // the plain-text file's content
	Values           map[string]string // variable name → text value
}

// Project is what a valid file holds.
type Project struct {
	Name, Origin string
	Codes        map[string]Code // by GUID
	Sources      []Source
	Selections   []Selection
	Description  string
}

// node is one XML element, parsed generically so every attribute and child is seen.
type node struct {
	name     xml.Name
	attrs    map[string]string
	children []*node
	text     strings.Builder
}

var guidPattern = regexp.MustCompile(`^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|\{[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\})$`)

var rgbPattern = regexp.MustCompile(`^#([0-9a-fA-F]{6}|[0-9a-fA-F]{3})$`)

// The order of each checked element's children (xsd:sequence); a child not listed is
// a violation.
var sequences = map[string][]string{
	"Project":            {"Users", "CodeBook", "Variables", "Cases", "Sources", "Notes", "Links", "Sets", "Graphs", "Description", "NoteRef"},
	"Users":              {"User"},
	"CodeBook":           {"Codes"},
	"Codes":              {"Code"},
	"Code":               {"Description", "NoteRef", "Code"},
	"Variables":          {"Variable"},
	"Variable":           {"Description"},
	"Sources":            {"TextSource"},
	"TextSource":         {"Description", "PlainTextContent", "PlainTextSelection", "Coding", "NoteRef", "VariableValue"},
	"PlainTextSelection": {"Description", "Coding", "NoteRef"},
	"Coding":             {"CodeRef", "NoteRef"},
	"VariableValue":      {"VariableRef", "TextValue", "BooleanValue", "IntegerValue", "FloatValue", "DateValue", "DateTimeValue"},
}

// checker collects violations rather than stopping at the first.
type checker struct {
	errs  []string
	guids map[string]string // GUID → the element that defines it
	refs  []reference
}

type reference struct {
	guid, from, kind string // kind: "user", "code", "variable"
}

func (c *checker) fail(format string, args ...any) {
	c.errs = append(c.errs, fmt.Sprintf(format, args...))
}

// Check opens the archive and checks it. It returns the project and nil, or an error
// listing every violation found.
func Check(qdpx []byte) (*Project, error) {
	zr, err := zip.NewReader(bytes.NewReader(qdpx), int64(len(qdpx)))
	if err != nil {
		return nil, fmt.Errorf("not a zip archive: %w", err)
	}
	files := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name, err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name, err)
		}
		if _, dup := files[f.Name]; dup {
			return nil, fmt.Errorf("the archive holds %s twice", f.Name)
		}
		files[f.Name] = b
	}
	doc, ok := files["project.qde"]
	if !ok {
		return nil, errors.New("the archive has no project.qde")
	}
	root, err := parse(doc)
	if err != nil {
		return nil, fmt.Errorf("project.qde: %w", err)
	}
	c := &checker{guids: map[string]string{}}
	p := c.project(root, files)
	if len(c.errs) > 0 {
		return nil, errors.New(strings.Join(c.errs, "\n"))
	}
	return p, nil
}

// parse reads an XML document into a tree, requiring well-formed UTF-8 XML.
func parse(doc []byte) (*node, error) {
	if !utf8.Valid(doc) {
		return nil, errors.New("not UTF-8")
	}
	d := xml.NewDecoder(bytes.NewReader(doc))
	d.Strict = true
	var stack []*node
	var root *node
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			n := &node{name: t.Name, attrs: map[string]string{}}
			for _, a := range t.Attr {
				if a.Name.Space == "" {
					n.attrs[a.Name.Local] = a.Value
				}
			}
			if len(stack) == 0 {
				if root != nil {
					return nil, errors.New("more than one root element")
				}
				root = n
			} else {
				parent := stack[len(stack)-1]
				parent.children = append(parent.children, n)
			}
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text.Write(t)
			}
		}
	}
	if root == nil {
		return nil, errors.New("no root element")
	}
	return root, nil
}

// element checks n's namespace and the order of its children.
func (c *checker) element(n *node, where string) {
	if n.name.Space != Namespace {
		c.fail("%s: element %s is in namespace %q, want %q", where, n.name.Local, n.name.Space, Namespace)
	}
	order, ok := sequences[n.name.Local]
	if !ok {
		return
	}
	last := -1
	for _, ch := range n.children {
		i := indexOf(order, ch.name.Local)
		if i < 0 {
			c.fail("%s: %s may not hold %s", where, n.name.Local, ch.name.Local)
			continue
		}
		if i < last {
			c.fail("%s: %s comes after %s, out of the schema's order", where, ch.name.Local, order[last])
		}
		last = i
	}
}

// define records a required GUID attribute.
func (c *checker) define(n *node, where string) string {
	g, ok := n.attrs["guid"]
	switch {
	case !ok:
		c.fail("%s: no guid", where)
	case !guidPattern.MatchString(g):
		c.fail("%s: guid %q is not a GUID", where, g)
	case c.guids[strings.ToLower(g)] != "":
		c.fail("%s: guid %s is also %s's", where, g, c.guids[strings.ToLower(g)])
	default:
		c.guids[strings.ToLower(g)] = where
	}
	return g
}

func (c *checker) refer(n *node, attr, kind, where string, required bool) string {
	g, ok := n.attrs[attr]
	if !ok {
		if required {
			c.fail("%s: no %s", where, attr)
		}
		return ""
	}
	if !guidPattern.MatchString(g) {
		c.fail("%s: %s %q is not a GUID", where, attr, g)
	}
	c.refs = append(c.refs, reference{guid: g, from: where + " " + attr, kind: kind})
	return g
}

func (c *checker) project(root *node, files map[string][]byte) *Project {
	if root.name.Local != "Project" {
		c.fail("the root element is %s, not Project", root.name.Local)
		return nil
	}
	c.element(root, "Project")
	p := &Project{Name: root.attrs["name"], Origin: root.attrs["origin"], Codes: map[string]Code{}}
	if p.Name == "" {
		c.fail("Project: no name")
	}
	c.refer(root, "creatingUserGUID", "user", "Project", false)
	users := map[string]bool{}
	codes := map[string]bool{}
	vars := map[string]string{}
	for _, ch := range root.children {
		switch ch.name.Local {
		case "Users":
			c.element(ch, "Users")
			if len(ch.children) == 0 {
				c.fail("Users: no User")
			}
			for _, u := range ch.children {
				c.element(u, "User")
				users[strings.ToLower(c.define(u, "User "+u.attrs["name"]))] = true
			}
		case "CodeBook":
			c.element(ch, "CodeBook")
			if len(ch.children) != 1 {
				c.fail("CodeBook: want one Codes, have %d children", len(ch.children))
			}
			for _, cs := range ch.children {
				c.element(cs, "Codes")
				if len(cs.children) == 0 {
					c.fail("Codes: no Code")
				}
				for _, code := range cs.children {
					c.code(code, nil, p, codes)
				}
			}
		case "Variables":
			c.element(ch, "Variables")
			for _, v := range ch.children {
				c.element(v, "Variable")
				g := c.define(v, "Variable "+v.attrs["name"])
				if v.attrs["name"] == "" {
					c.fail("Variable %s: no name", g)
				}
				switch v.attrs["typeOfVariable"] {
				case "Text", "Boolean", "Integer", "Float", "Date", "DateTime":
				default:
					c.fail("Variable %s: typeOfVariable %q", g, v.attrs["typeOfVariable"])
				}
				vars[strings.ToLower(g)] = v.attrs["name"]
			}
		case "Sources":
			c.element(ch, "Sources")
			for _, s := range ch.children {
				c.source(s, p, files)
			}
		case "Description":
			p.Description = ch.text.String()
		}
	}
	for _, r := range c.refs {
		g := strings.ToLower(r.guid)
		switch {
		case r.kind == "user" && !users[g]:
			c.fail("%s: %s names no User", r.from, r.guid)
		case r.kind == "code" && !codes[g]:
			c.fail("%s: %s names no Code", r.from, r.guid)
		case r.kind == "code" && !p.Codes[g].Codable:
			c.fail("%s: Code %s is not codable", r.from, r.guid)
		case r.kind == "variable" && vars[g] == "":
			c.fail("%s: %s names no Variable", r.from, r.guid)
		}
	}
	for i := range p.Sources {
		byName := make(map[string]string, len(p.Sources[i].Values))
		for g, v := range p.Sources[i].Values {
			byName[vars[g]] = v
		}
		p.Sources[i].Values = byName
	}
	return p
}

func (c *checker) code(n *node, path []string, p *Project, codes map[string]bool) {
	c.element(n, "Code")
	name := n.attrs["name"]
	where := "Code " + strings.Join(append(append([]string{}, path...), name), " / ")
	g := c.define(n, where)
	if name == "" {
		c.fail("%s: no name", where)
	}
	codable, err := strconv.ParseBool(n.attrs["isCodable"])
	if _, ok := n.attrs["isCodable"]; !ok || err != nil || (n.attrs["isCodable"] != "true" && n.attrs["isCodable"] != "false" && n.attrs["isCodable"] != "1" && n.attrs["isCodable"] != "0") {
		c.fail("%s: isCodable %q is not an xsd:boolean", where, n.attrs["isCodable"])
	}
	if col, ok := n.attrs["color"]; ok && !rgbPattern.MatchString(col) {
		c.fail("%s: color %q is not #RRGGBB", where, col)
	}
	path = append(append([]string{}, path...), name)
	codes[strings.ToLower(g)] = true
	p.Codes[strings.ToLower(g)] = Code{GUID: g, Name: name, Codable: codable, Path: path}
	for _, ch := range n.children {
		if ch.name.Local == "Code" {
			c.code(ch, path, p, codes)
		}
	}
}

func (c *checker) source(n *node, p *Project, files map[string][]byte) {
	if n.name.Local != "TextSource" {
		c.fail("Sources: %s is not checked here", n.name.Local)
		return
	}
	c.element(n, "TextSource")
	where := "TextSource " + n.attrs["name"]
	s := Source{GUID: c.define(n, where), Name: n.attrs["name"], Path: n.attrs["plainTextPath"], Values: map[string]string{}}
	c.refer(n, "creatingUser", "user", where, false)
	var content *node
	for _, ch := range n.children {
		if ch.name.Local == "PlainTextContent" {
			content = ch
		}
	}
	switch {
	case s.Path != "" && content != nil:
		c.fail("%s: both plainTextPath and PlainTextContent (the standard allows one)", where)
	case content != nil:
		s.Text = content.text.String()
	case !strings.HasPrefix(s.Path, "internal://"):
		c.fail("%s: plainTextPath %q is not internal://<file>", where, s.Path)
	default:
		file := "sources/" + strings.TrimPrefix(s.Path, "internal://")
		b, ok := files[file]
		if !ok {
			c.fail("%s: the archive has no %s", where, file)
		}
		if !utf8.Valid(b) {
			c.fail("%s: %s is not UTF-8", where, file)
		}
		s.Text = string(b)
	}
	runes := []rune(s.Text)
	for _, ch := range n.children {
		switch ch.name.Local {
		case "PlainTextSelection":
			c.element(ch, "PlainTextSelection")
			sw := where + " selection"
			g := c.define(ch, sw)
			c.refer(ch, "creatingUser", "user", sw, false)
			start, err1 := strconv.Atoi(ch.attrs["startPosition"])
			end, err2 := strconv.Atoi(ch.attrs["endPosition"])
			if err1 != nil || err2 != nil {
				c.fail("%s %s: startPosition %q, endPosition %q are not integers", sw, g, ch.attrs["startPosition"], ch.attrs["endPosition"])
				continue
			}
			if start < 0 || end < start || end > len(runes) {
				c.fail("%s %s: [%d, %d) is outside the text's %d characters", sw, g, start, end, len(runes))
				continue
			}
			sel := Selection{Source: s.Name, SourceGUID: s.GUID, Start: start, End: end, Text: string(runes[start:end])}
			for _, cd := range ch.children {
				if cd.name.Local == "Description" {
					sel.Description = cd.text.String()
				}
				if cd.name.Local != "Coding" {
					continue
				}
				c.element(cd, "Coding")
				c.define(cd, sw+" coding")
				c.refer(cd, "creatingUser", "user", sw+" coding", false)
				var refs int
				for _, cr := range cd.children {
					if cr.name.Local == "CodeRef" {
						c.element(cr, "CodeRef")
						refs++
						sel.Codes = append(sel.Codes, strings.ToLower(c.refer(cr, "targetGUID", "code", sw+" CodeRef", true)))
					}
				}
				if refs != 1 {
					c.fail("%s: a Coding holds %d CodeRefs, want 1", sw, refs)
				}
			}
			p.Selections = append(p.Selections, sel)
		case "Coding":
			c.fail("%s: whole-source codings are not expected", where)
		case "VariableValue":
			c.element(ch, "VariableValue")
			var varGUID, value string
			values := 0
			for _, vv := range ch.children {
				switch vv.name.Local {
				case "VariableRef":
					c.element(vv, "VariableRef")
					varGUID = strings.ToLower(c.refer(vv, "targetGUID", "variable", where+" VariableRef", true))
				default:
					c.element(vv, vv.name.Local)
					value = vv.text.String()
					values++
				}
			}
			if varGUID == "" || values > 1 {
				c.fail("%s: a VariableValue wants one VariableRef and at most one value", where)
			}
			s.Values[varGUID] = value
		}
	}
	p.Sources = append(p.Sources, s)
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}
