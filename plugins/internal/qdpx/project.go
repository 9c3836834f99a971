package qdpx

import (
	"bufio"
	"encoding/xml"
	"io"
	"strconv"
)

// The project.qde document, as REFI-QDA's Project.xsd (QDA-XML 1.0) lays it out, and
// its writer. The schema's sequences are ordered (Users, CodeBook, Variables, Cases,
// Sources, ..., Description), and an optional element whose type wants at least one
// child is left out rather than written empty. The document is written by hand, not
// by encoding/xml's reflection: under WebAssembly that reflection took most of a large
// study's run (seconds for ten thousand selections), and the layout is small and
// fixed. Every attribute value and text goes through xml.EscapeText.

// Namespace is the QDA-XML project namespace.
const Namespace = "urn:QDA-XML:project:1.0"

type project struct {
	Name, Origin, CreatingUser, Created string
	Users                               []user
	CodeBook                            []*code // top-level codes; none leaves CodeBook out
	Variables                           []variable
	Sources                             []textSource
	Description                         string
}

type user struct{ GUID, Name string }

type code struct {
	GUID, Name  string
	IsCodable   bool
	Color       string
	Description string
	Code        []*code
}

type variable struct{ GUID, Name, Type string }

type textSource struct {
	GUID, Name, PlainTextPath, CreatingUser, Created string
	Description                                      string
	Selections                                       []selection
	Values                                           []variableValue
}

type selection struct {
	GUID, Name            string
	Description           string // researchers' notes on the span
	Start, End            int
	CreatingUser, Created string
	Codings               []coding
}

type coding struct {
	GUID, CreatingUser, Created string
	CodeRef                     string // the code's GUID
}

type variableValue struct {
	VariableRef string // the variable's GUID
	TextValue   string
}

// xmlWriter writes elements; bufio.Writer keeps the first error.
type xmlWriter struct {
	w     *bufio.Writer
	depth int
}

func (x *xmlWriter) indent() {
	x.w.WriteByte('\n')
	for i := 0; i < x.depth; i++ {
		x.w.WriteString("  ")
	}
}

// open writes a start tag with the attributes given as name, value pairs; an empty
// value leaves its attribute out unless the name ends in "!" (written even if empty).
func (x *xmlWriter) open(name string, attrs ...string) {
	x.indent()
	x.w.WriteByte('<')
	x.w.WriteString(name)
	for i := 0; i+1 < len(attrs); i += 2 {
		k, v := attrs[i], attrs[i+1]
		if k[len(k)-1] == '!' {
			k = k[:len(k)-1]
		} else if v == "" {
			continue
		}
		x.w.WriteByte(' ')
		x.w.WriteString(k)
		x.w.WriteString(`="`)
		_ = xml.EscapeText(x.w, []byte(v))
		x.w.WriteByte('"')
	}
	x.w.WriteByte('>')
	x.depth++
}

func (x *xmlWriter) close(name string) {
	x.depth--
	x.indent()
	x.w.WriteString("</")
	x.w.WriteString(name)
	x.w.WriteByte('>')
}

// empty writes an element with attributes and no content.
func (x *xmlWriter) empty(name string, attrs ...string) {
	x.open(name, attrs...)
	x.depth--
	x.w.WriteString("</")
	x.w.WriteString(name)
	x.w.WriteByte('>')
}

// text writes an element holding text, unless the text is empty and optional.
func (x *xmlWriter) text(name, text string, optional bool) {
	if text == "" && optional {
		return
	}
	x.indent()
	x.w.WriteString("<" + name + ">")
	_ = xml.EscapeText(x.w, []byte(text))
	x.w.WriteString("</" + name + ">")
}

// write writes the document to out.
func (p *project) write(out io.Writer) error {
	x := &xmlWriter{w: bufio.NewWriterSize(out, 64<<10)}
	x.w.WriteString(xml.Header[:len(xml.Header)-1]) // without its newline: indent writes one
	x.open("Project", "xmlns", Namespace, "name!", p.Name, "origin", p.Origin, "creatingUserGUID", p.CreatingUser, "creationDateTime", p.Created)
	x.open("Users")
	for _, u := range p.Users {
		x.empty("User", "guid", u.GUID, "name", u.Name)
	}
	x.close("Users")
	if len(p.CodeBook) > 0 {
		x.open("CodeBook")
		x.open("Codes")
		for _, c := range p.CodeBook {
			c.write(x)
		}
		x.close("Codes")
		x.close("CodeBook")
	}
	if len(p.Variables) > 0 {
		x.open("Variables")
		for _, v := range p.Variables {
			x.empty("Variable", "guid", v.GUID, "name!", v.Name, "typeOfVariable", v.Type)
		}
		x.close("Variables")
	}
	if len(p.Sources) > 0 {
		x.open("Sources")
		for i := range p.Sources {
			p.Sources[i].write(x)
		}
		x.close("Sources")
	}
	x.text("Description", p.Description, true)
	x.close("Project")
	x.w.WriteByte('\n')
	return x.w.Flush()
}

func (c *code) write(x *xmlWriter) {
	x.open("Code", "guid", c.GUID, "name!", c.Name, "isCodable", strconv.FormatBool(c.IsCodable), "color", c.Color)
	x.text("Description", c.Description, true)
	for _, ch := range c.Code {
		ch.write(x)
	}
	x.close("Code")
}

func (s *textSource) write(x *xmlWriter) {
	x.open("TextSource", "guid", s.GUID, "name!", s.Name, "plainTextPath", s.PlainTextPath, "creatingUser", s.CreatingUser, "creationDateTime", s.Created)
	x.text("Description", s.Description, true)
	for _, sel := range s.Selections {
		x.open("PlainTextSelection", "guid", sel.GUID, "name", sel.Name, "startPosition", strconv.Itoa(sel.Start), "endPosition", strconv.Itoa(sel.End),
			"creatingUser", sel.CreatingUser, "creationDateTime", sel.Created)
		x.text("Description", sel.Description, true)
		for _, c := range sel.Codings {
			x.open("Coding", "guid", c.GUID, "creatingUser", c.CreatingUser, "creationDateTime", c.Created)
			x.empty("CodeRef", "targetGUID", c.CodeRef)
			x.close("Coding")
		}
		x.close("PlainTextSelection")
	}
	for _, v := range s.Values {
		x.open("VariableValue")
		x.empty("VariableRef", "targetGUID", v.VariableRef)
		x.text("TextValue", v.TextValue, false)
		x.close("VariableValue")
	}
	x.close("TextSource")
}
