package webui

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"html/template"
)

// Charts are drawn on the server as SVG: no chart library runs in the browser, and the
// page's Content-Security-Policy (no inline style or script) holds, as an SVG carries
// only presentation attributes and class names whose colours live in app_analysis.css.
// Every chart is an image with a title and a description for assistive technology, and
// each page sets a table of the same numbers beside it. A colour is never the only
// carrier of meaning: every bar is labelled in words.
//
// Widths are percentages of the chart's box and text is in the page's own pixels, so a
// chart fills a phone or a wide screen without its text shrinking or growing.

// Bar is one row of a horizontal bar chart.
type Bar struct {
	Label  string  // what the bar measures, shortened to fit a phone (the table has it whole)
	Detail string  // the number in words: "6 of 10 interviews (60%)"
	Share  float64 // the bar's length, 0 to 1
	// Kind picks the bar's colour class ("positive", "negative", "mixed", "neutral",
	// "accent", "warn"); Detail must say in words whatever the colour says.
	Kind string
}

// BarChart is a horizontal bar chart, one labelled bar per row.
type BarChart struct {
	ID    string // unique on the page: the title's and description's ids derive from it
	Title string
	Desc  string
	Bars  []Bar
}

// Column is one column of a column chart: a total and the part of it that is done.
type Column struct {
	Label string // "21 Nov"
	Total int
	Part  int // at most Total
}

// ColumnChart is a column chart of totals with their parts drawn inside them, over an
// axis labelled at its ends (the table beside it has every column).
type ColumnChart struct {
	ID, Title, Desc     string
	TotalName, PartName string // the legend: "Started", "Completed"
	Columns             []Column
	TotalKind, PartKind string // colour classes
}

// Chart geometry, in CSS pixels.
const (
	barRowHeight   = 64 // a label line, the bar, a detail line
	barThickness   = 14
	labelMaxRunes  = 40  // about 300 px at 14 px: a phone's panel
	columnsHeight  = 150 // the plot area of a column chart
	columnsTop     = 24
	columnsBottom  = 52 // the axis labels and the legend below the plot
	minVisibleBarP = 0.6
)

// shorten cuts s to at most n runes, with an ellipsis when cut.
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}

// pct formats a share of the chart's width as an SVG percentage length.
func pct(share float64) string {
	switch {
	case share < 0:
		share = 0
	case share > 1:
		share = 1
	}
	return strconv.FormatFloat(share*100, 'f', 2, 64) + "%"
}

// kindClass keeps a colour class to the known kinds.
func kindClass(kind string) string {
	switch kind {
	case "positive", "negative", "mixed", "neutral", "accent", "warn", "muted":
		return kind
	}
	return "accent"
}

// svgOpen writes the chart's opening tag with its accessible name and description.
func svgOpen(b *strings.Builder, class, id, title, desc string, height int) {
	b.WriteString(`<svg class="chart `)
	b.WriteString(class)
	b.WriteString(`" width="100%" height="`)
	b.WriteString(strconv.Itoa(height))
	b.WriteString(`" role="img" aria-labelledby="`)
	escape(b, id)
	b.WriteString(`-t `)
	escape(b, id)
	b.WriteString(`-d" focusable="false"><title id="`)
	escape(b, id)
	b.WriteString(`-t">`)
	escape(b, title)
	b.WriteString(`</title><desc id="`)
	escape(b, id)
	b.WriteString(`-d">`)
	escape(b, desc)
	b.WriteString(`</desc>`)
}

func svgText(b *strings.Builder, class, x string, y int, anchor, text string) {
	b.WriteString(`<text class="`)
	b.WriteString(class)
	b.WriteString(`" x="`)
	b.WriteString(x)
	b.WriteString(`" y="`)
	b.WriteString(strconv.Itoa(y))
	b.WriteString(`"`)
	if anchor != "" {
		b.WriteString(` text-anchor="`)
		b.WriteString(anchor)
		b.WriteString(`"`)
	}
	b.WriteString(`>`)
	escape(b, text)
	b.WriteString(`</text>`)
}

func svgRect(b *strings.Builder, class, x, width string, y, height int) {
	b.WriteString(`<rect class="`)
	b.WriteString(class)
	b.WriteString(`" x="`)
	b.WriteString(x)
	b.WriteString(`" y="`)
	b.WriteString(strconv.Itoa(y))
	b.WriteString(`" width="`)
	b.WriteString(width)
	b.WriteString(`" height="`)
	b.WriteString(strconv.Itoa(height))
	b.WriteString(`" rx="3"></rect>`)
}

// SVG returns the chart, every value escaped for SVG text and attributes; "" for a
// chart without bars (the page says there is nothing to draw).
func (c BarChart) SVG() template.HTML {
	if len(c.Bars) == 0 {
		return ""
	}
	var b strings.Builder
	b.Grow(400 + len(c.Bars)*420)
	svgOpen(&b, "chart-bars", c.ID, c.Title, c.Desc, len(c.Bars)*barRowHeight)
	for i, bar := range c.Bars {
		y := i * barRowHeight
		b.WriteString(`<g>`)
		svgText(&b, "chart-label", "0", y+16, "", shorten(bar.Label, labelMaxRunes))
		svgRect(&b, "chart-track", "0", "100%", y+24, barThickness)
		share := bar.Share
		if share > 0 && share*100 < minVisibleBarP {
			share = minVisibleBarP / 100 // a non-zero count never draws as nothing
		}
		if share > 0 {
			svgRect(&b, "bar bar-"+kindClass(bar.Kind), "0", pct(share), y+24, barThickness)
		}
		svgText(&b, "chart-detail", "0", y+56, "", bar.Detail)
		b.WriteString(`</g>`)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // every value above went through escape
}

// SVG returns the column chart; "" when it has no columns.
func (c ColumnChart) SVG() template.HTML {
	if len(c.Columns) == 0 {
		return ""
	}
	top := 1
	for _, col := range c.Columns {
		top = max(top, col.Total)
	}
	var b strings.Builder
	b.Grow(600 + len(c.Columns)*260)
	height := columnsTop + columnsHeight + columnsBottom
	svgOpen(&b, "chart-columns", c.ID, c.Title, c.Desc, height)
	base := columnsTop + columnsHeight
	svgText(&b, "chart-detail", "0", 14, "", "Most in a day: "+strconv.Itoa(top))
	svgRect(&b, "chart-axis", "0", "100%", base, 1)
	n := float64(len(c.Columns))
	slot := 1 / n
	for i, col := range c.Columns {
		x := pct(float64(i)*slot + slot*0.15)
		w := pct(slot * 0.7)
		b.WriteString(`<g>`)
		if col.Total > 0 {
			h := max(col.Total*columnsHeight/top, 2)
			svgRect(&b, "bar bar-"+kindClass(c.TotalKind), x, w, base-h, h)
		}
		if col.Part > 0 {
			h := max(min(col.Part, col.Total)*columnsHeight/top, 2)
			svgRect(&b, "bar bar-"+kindClass(c.PartKind), x, w, base-h, h)
		}
		b.WriteString(`<title>`)
		escape(&b, col.Label+": "+strconv.Itoa(col.Total)+" "+strings.ToLower(c.TotalName)+", "+strconv.Itoa(col.Part)+" "+strings.ToLower(c.PartName))
		b.WriteString(`</title></g>`)
	}
	svgText(&b, "chart-detail", "0", base+18, "", c.Columns[0].Label)
	if len(c.Columns) > 1 {
		svgText(&b, "chart-detail", "100%", base+18, "end", c.Columns[len(c.Columns)-1].Label)
	}
	// The legend names each colour in words.
	ly := base + 40
	svgRect(&b, "bar bar-"+kindClass(c.TotalKind), "0", "12", ly-11, 12)
	svgText(&b, "chart-detail", "18", ly, "", c.TotalName)
	svgRect(&b, "bar bar-"+kindClass(c.PartKind), "120", "12", ly-11, 12)
	svgText(&b, "chart-detail", "138", ly, "", c.PartName)
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // every value above went through escape
}
