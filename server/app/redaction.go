package app

import (
	"context"
	"strings"

	"interviewd/kv"
	"interviewd/server/pipeline"
	"interviewd/webui"
)

// Settings → Redaction and plugins: the organisation's redaction settings (the same
// record and rules as `interviewd org redaction`) and its own plugins. Organisation
// settings are for owners and admins; the page itself is readable by every member.

// redactionBlankRows is how many empty custom-pattern rows the form offers.
const redactionBlankRows = 2

func (s *App) buildRedactionPage(ctx context.Context, p *pipeline.Principal, canEdit bool) (webui.RedactionPage, error) {
	r, err := s.DB.FindRedaction(ctx, p.Partition.Org)
	if err != nil {
		return webui.RedactionPage{}, err
	}
	page := redactionPage(r)
	page.CanEdit = canEdit
	list, err := s.DB.FindPlugins(ctx, p.Partition.Org)
	if err != nil {
		return page, err
	}
	for _, pl := range list {
		page.Plugins = append(page.Plugins, webui.PluginRow{Kind: pl.Kind, Name: pl.Name, MediaType: pl.MediaType,
			SHA256: pl.SHA256, Added: StampOf(pl.CreatedAt)})
	}
	return page, nil
}

func redactionPage(r kv.Redaction) webui.RedactionPage {
	page := webui.RedactionPage{Email: r.Email, Phone: r.Phone, Card: r.Card, IP: r.IP}
	for _, pt := range r.Patterns {
		page.Patterns = append(page.Patterns, webui.PatternRow{Name: pt.Name, Regex: pt.Regex})
	}
	for range redactionBlankRows {
		page.Patterns = append(page.Patterns, webui.PatternRow{})
	}
	return page
}

// RedactionForm is the redaction form as posted: the four classes and the pattern rows
// (blank rows are dropped; a row with only one half filled is kept so kv refuses it).
type RedactionForm struct {
	Email, Phone, Card, IP bool
	Names, Regexes         []string
}

func (f RedactionForm) redaction() kv.Redaction {
	r := kv.Redaction{Email: f.Email, Phone: f.Phone, Card: f.Card, IP: f.IP, Patterns: []kv.RedactionPattern{}}
	for i := range max(len(f.Names), len(f.Regexes)) {
		var name, re string
		if i < len(f.Names) {
			name = strings.TrimSpace(f.Names[i])
		}
		if i < len(f.Regexes) {
			re = f.Regexes[i]
		}
		if name == "" && strings.TrimSpace(re) == "" {
			continue
		}
		r.Patterns = append(r.Patterns, kv.RedactionPattern{Name: name, Regex: re})
	}
	return r
}

// appSetRedaction replaces the organisation's redaction settings. On a refusal it
// returns the page as posted with the refusal beside its row.
func (s *App) appSetRedaction(ctx context.Context, p *pipeline.Principal, f RedactionForm) (webui.RedactionPage, error) {
	r := f.redaction()
	saved, err := s.DB.SetRedaction(ctx, p.Partition.Org, r)
	if err != nil {
		page := redactionPage(r)
		page.CanEdit = true
		if !redactionErrors(err, &page) {
			return page, err
		}
		return page, nil
	}
	page := redactionPage(saved)
	page.CanEdit = true
	page.Notice = "Redaction settings saved. They apply to every export started from now on."
	return page, nil
}

// redactionErrors puts each refusal beside its pattern row, or on the form.
func redactionErrors(err error, page *webui.RedactionPage) bool {
	var ke *kv.Error
	if !pipeline.AsKV(err, &ke) || ke.Code != kv.EINVALID {
		return false
	}
	page.Errors = webui.FieldErrors{}
	for _, f := range ke.Fields {
		row := -1
		for _, part := range f.Loc {
			if i, ok := part.(int); ok {
				row = i
			}
		}
		switch {
		case row >= 0 && row < len(page.Patterns):
			if page.Patterns[row].Error == "" {
				page.Patterns[row].Error = f.Msg
			}
		case page.Errors[""] == "":
			page.Errors[""] = f.Msg
		}
	}
	return true
}
