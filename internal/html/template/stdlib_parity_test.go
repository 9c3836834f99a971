package template

import (
	stdtemplate "html/template"
	"strings"
	"testing"
)

// page is data with fields, a map, a method and a func field, as interviewd's pages have.
type page struct {
	Name  string
	URL   string
	Attrs map[string]string
	Items []string
	Fn    func() string
}

// Title is a method a template must not be able to call.
func (p page) Title() string { return "called " + p.Name }

// Shout is a pointer method a template must not be able to call either.
func (p *page) Shout() string { return strings.ToUpper(p.Name) }

var evil = page{
	Name:  `</script><script>alert("x")</script>' onmouseover='alert(1)`,
	URL:   `javascript:alert(1)`,
	Attrs: map[string]string{"q": `a&b "c" <d>`, "z": `x' y`},
	Items: []string{`<b>`, `"q"`, `&amp;`},
}

// TestEscapingMatchesStandardLibrary executes the same templates with the standard
// library's html/template and this copy: every context (text, attribute, URL, script,
// style, event handler, srcset, meta refresh) escapes byte for byte alike.
func TestEscapingMatchesStandardLibrary(t *testing.T) {
	for _, src := range []string{
		`<p>{{.Name}}</p>`,
		`<p title="{{.Name}}">x</p>`,
		`<p title='{{.Name}}'>x</p>`,
		`<p title={{.Name}}>x</p>`,
		`<a href="{{.URL}}">x</a>`,
		`<a href="/search?q={{.Attrs.q}}&z={{.Attrs.z}}">x</a>`,
		`<a href="/p/{{.Name}}">x</a>`,
		`<img srcset="{{.URL}} 1x, /a.png?{{.Name}} 2x">`,
		`<script>var n = {{.Name}}, m = {{.Attrs}}, l = {{.Items}};</script>`,
		`<script>var s = "{{.Name}}"; var t = '{{.Name}}'; var u = ` + "`{{.Name}}`" + `;</script>`,
		`<button onclick="go({{.Name}})">x</button>`,
		`<style>p { color: {{.Name}} } a { background: url({{.URL}}) }</style>`,
		`<p style="color: {{.Name}}">x</p>`,
		`<meta http-equiv="refresh" content="0; url={{.URL}}">`,
		`<textarea>{{.Name}}</textarea><title>{{.Name}}</title>`,
		`<!-- {{.Name}} --><p>{{range $k, $v := .Attrs}}{{$k}}={{$v}};{{end}}</p>`,
		`<ul>{{range .Items}}<li data-v="{{.}}">{{.}}</li>{{end}}</ul>`,
		`{{define "row"}}<td title="{{.}}">{{.}}</td>{{end}}<tr>{{range .Items}}{{template "row" .}}{{end}}</tr>`,
		`<p>{{.Name | printf "%q"}} {{len .Items}} {{index .Attrs "q"}} {{html .Name}} {{urlquery .Name}}</p>`,
	} {
		var ours, std strings.Builder
		if err := Must(New("t").Parse(src)).Execute(&ours, evil); err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if err := stdtemplate.Must(stdtemplate.New("t").Parse(src)).Execute(&std, evil); err != nil {
			t.Fatalf("%s: standard library: %v", src, err)
		}
		if ours.String() != std.String() {
			t.Errorf("%s:\n got %s\nwant %s", src, ours.String(), std.String())
		}
		if strings.Contains(ours.String(), `<script>alert`) || strings.Contains(ours.String(), `javascript:alert`) {
			t.Errorf("%s: unescaped: %s", src, ours.String())
		}
	}
}

// TestTrustedContentMatchesStandardLibrary: HTML, URL and JS values the program marks
// as safe pass as the standard library lets them.
func TestTrustedContentMatchesStandardLibrary(t *testing.T) {
	src := `<div>{{.H}}</div><img src="{{.U}}"><script>var x = {{.J}};</script>`
	ours := map[string]any{"H": HTML(`<b>ok</b>`), "U": URL(`data:image/png;base64,AAAA`), "J": JS(`1 + 2`)}
	std := map[string]any{"H": stdtemplate.HTML(`<b>ok</b>`), "U": stdtemplate.URL(`data:image/png;base64,AAAA`), "J": stdtemplate.JS(`1 + 2`)}
	var a, b strings.Builder
	if err := Must(New("t").Parse(src)).Execute(&a, ours); err != nil {
		t.Fatal(err)
	}
	if err := stdtemplate.Must(stdtemplate.New("t").Parse(src)).Execute(&b, std); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Errorf("got %s\nwant %s", a.String(), b.String())
	}
}

// TestMethodCallRefused: a template that names a method gets an execution error naming
// it, for value and pointer receivers, chained or not, and writes nothing past it;
// fields, map keys, func fields and funcs still work.
func TestMethodCallRefused(t *testing.T) {
	p := &page{Name: "n", Attrs: map[string]string{"Title": "from the map"}, Fn: func() string { return "fn" }}
	for _, c := range []struct {
		src, want string
	}{
		{`<p>{{.Title}}</p>`, "can't evaluate field Title in type *template.page"},
		{`<p>{{.Shout}}</p>`, "can't evaluate field Shout in type *template.page"},
		{`{{with $p := .}}<p>{{$p.Title}}</p>{{end}}`, "can't evaluate field Title"},
		{`<p>{{.Name.Len}}</p>`, "can't evaluate field Len in type string"},
		{`<p>{{(index .Items 0).String}}</p>`, "can't evaluate field String"},
	} {
		var b strings.Builder
		p.Items = []string{"x"}
		err := Must(New("t").Parse(c.src)).Execute(&b, p)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "never methods") {
			t.Errorf("%s: err = %v, want one containing %q", c.src, err, c.want)
		}
		if strings.Contains(b.String(), "called") || strings.Contains(b.String(), "N") {
			t.Errorf("%s: a method ran: %q", c.src, b.String())
		}
	}

	var b strings.Builder
	funcs := FuncMap{"title": page.Title}
	src := `{{.Name}} {{.Attrs.Title}} {{call .Fn}} {{title .}}`
	if err := Must(New("t").Funcs(funcs).Parse(src)).Execute(&b, p); err != nil {
		t.Fatal(err)
	}
	if got, want := b.String(), "n from the map fn called n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
