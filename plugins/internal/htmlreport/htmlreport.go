// Package htmlreport writes a study's analysis as one standalone, printable HTML page.
// It is the logic of the built-in analysis-html formatter plugin, kept importable so it
// is tested natively as well as through the WebAssembly host.
//
// The page is one file with nothing to fetch: inline CSS (with a print stylesheet), no
// scripts, and a Content-Security-Policy that forbids them anyway. Every string from
// an interview or an engine goes through html/template's contextual escaping.
package htmlreport

import (
	"bufio"
	_ "embed"
	"html/template"
	"io"
	"strconv"

	"interviewd/plugins/internal/analysisdoc"
)

// MediaType is the media type of the artifact.
const MediaType = "text/html; charset=utf-8"

//go:embed report.html.tmpl
var reportTemplate string

// page is what the template renders.
type page struct {
	Title string
	analysisdoc.Head
	A *analysisdoc.Analysis
}

var funcs = template.FuncMap{
	"percent":     analysisdoc.Percent,
	"segments":    analysisdoc.Segments,
	"generatedAt": analysisdoc.GeneratedAtText,
	"plural": func(n int, noun string) string {
		if n == 1 {
			return "1 " + noun
		}
		return strconv.Itoa(n) + " " + noun + "s"
	},
	"inc": func(i int) int { return i + 1 },
}

// Run speaks the formatter side of the plugin ABI: it reads the configuration line and
// the analysis record (see package analysisdoc) and writes the page. Interview records,
// if any follow, are not needed and not read. It returns an error for missing or
// malformed records, a template that does not parse, or a failed write.
func Run(stdin io.Reader, stdout io.Writer) error {
	_, h, err := analysisdoc.Open(stdin)
	if err != nil {
		return err
	}
	t, err := template.New("report").Funcs(funcs).Parse(reportTemplate)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(stdout, 64<<10)
	if err := t.Execute(w, page{Title: h.Title(), Head: h, A: h.Analysis}); err != nil {
		return err
	}
	return w.Flush()
}
