package app

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"interviewd/kv"
	"interviewd/server/pipeline"
	"interviewd/server/research"
	"interviewd/webui"
)

// The brief form: a study's brief edited directly, saved through update_study_brief as
// the API saves it. Its lists change shape without a script: each item's buttons (move
// up, move down, remove) and each list's add button post the whole form under the name
// "op", and the page comes back with the change made and nothing saved; only "save"
// saves. The form carries the design version it was opened at, so a save over a
// version made meanwhile (a refine that finished, a colleague's edit) is refused with
// what was typed kept, rather than overwriting that version unseen.

// briefLists are the brief's lists in the order the form shows them.
var briefLists = []struct {
	field, legend, hint, noun, add string
	max                            int
}{
	{"objectives", "Objectives", fmt.Sprintf("What the study sets out to learn. 1 to %d.", kv.BriefMaxObjectives), "Objective", "Add an objective", kv.BriefMaxObjectives},
	{"pre_interview_questions", "Screener questions", fmt.Sprintf("Asked before the interview, in this order. Up to %d.", kv.BriefMaxQuestions), "Screener question", "Add a screener question", kv.BriefMaxQuestions},
	{"verbatim_questions", "Verbatim questions", fmt.Sprintf("Asked word for word during the interview, in this order. 1 to %d.", kv.BriefMaxQuestions), "Verbatim question", "Add a verbatim question", kv.BriefMaxQuestions},
}

// briefForm is the brief form as posted (or as the current brief fills it).
type briefForm struct {
	version int
	title   string
	minutes string
	lists   [][]string // by briefLists
}

func briefFormOf(b kv.Brief, version int) briefForm {
	f := briefForm{version: version, lists: [][]string{b.Objectives, b.PreInterviewQuestions, b.VerbatimQuestions}}
	if b.Title != nil {
		f.title = *b.Title
	}
	if b.EstimatedDurationMinutes != nil {
		f.minutes = strconv.Itoa(*b.EstimatedDurationMinutes)
	}
	for i := range f.lists {
		f.lists[i] = append([]string{}, f.lists[i]...)
	}
	return f
}

// readBriefForm reads the posted form. Browsers send a textarea's line breaks as CR
// LF; the brief keeps them as LF, as the API takes them.
func readBriefForm(r *pipeline.Request) briefForm {
	f := briefForm{title: formValue(r, "title"), minutes: strings.TrimSpace(formValue(r, "estimated_duration_minutes"))}
	f.version, _ = strconv.Atoi(formValue(r, "version"))
	for _, l := range briefLists {
		items := []string{}
		for _, v := range formValues(r, l.field) {
			items = append(items, strings.ReplaceAll(v, "\r\n", "\n"))
		}
		f.lists = append(f.lists, items)
	}
	return f
}

// layoutChange applies a layout button (op "add:list", "up:list:i", "down:list:i",
// "remove:list:i") to f. It returns the id of the control to focus afterwards and what
// happened, or ok false for an op that is not one (a stale or crafted button changes
// nothing).
func (f *briefForm) layoutChange(op string) (focus, notice string, ok bool) {
	parts := strings.Split(op, ":")
	li := -1
	if len(parts) >= 2 {
		for i, l := range briefLists {
			if l.field == parts[1] {
				li = i
			}
		}
	}
	if li < 0 {
		return "", "", false
	}
	l, items := briefLists[li], f.lists[li]
	id := func(i int) string { return l.field + "-" + strconv.Itoa(i) }
	if parts[0] == "add" && len(parts) == 2 {
		if len(items) >= l.max {
			return l.field + "-add", "", false
		}
		f.lists[li] = append(items, "")
		return id(len(items)), fmt.Sprintf("%s %d added: write it, then save.", l.noun, len(items)+1), true
	}
	if len(parts) != 3 {
		return "", "", false
	}
	i, err := strconv.Atoi(parts[2])
	if err != nil || i < 0 || i >= len(items) {
		return "", "", false
	}
	switch parts[0] {
	case "up", "down":
		j := i - 1
		if parts[0] == "down" {
			j = i + 1
		}
		if j < 0 || j >= len(items) {
			return "", "", false
		}
		items[i], items[j] = items[j], items[i]
		// The button that moved it, at its new place, while it can move on that way;
		// else its text.
		focus = id(j) + "-" + parts[0]
		if (parts[0] == "up" && j == 0) || (parts[0] == "down" && j == len(items)-1) {
			focus = id(j)
		}
		return focus, fmt.Sprintf("%s %d is now %s %d.", l.noun, i+1, strings.ToLower(l.noun), j+1), true
	case "remove":
		f.lists[li] = append(items[:i:i], items[i+1:]...)
		switch {
		case i < len(f.lists[li]):
			focus = id(i)
		case i > 0:
			focus = id(i - 1)
		default:
			focus = l.field + "-add"
		}
		return focus, fmt.Sprintf("%s %d removed. Save to keep the change.", l.noun, i+1), true
	}
	return "", "", false
}

// input is the operation's input for f, or the refusal of a duration that is not a
// whole number (kept apart: it never reaches the operation).
func (f briefForm) input(study kv.ID) (*research.UpdateBriefInput, *kv.FieldError) {
	in := &research.UpdateBriefInput{StudyID: study, Title: f.title, Objectives: f.lists[0], PreInterviewQuestions: f.lists[1],
		VerbatimQuestions: f.lists[2], BaseVersion: f.version}
	if f.minutes == "" {
		return in, nil
	}
	n, err := strconv.Atoi(f.minutes)
	if err != nil {
		return in, &kv.FieldError{Loc: []any{"estimated_duration_minutes"}, Type: "int_parsing",
			Msg: fmt.Sprintf("The estimated length is a whole number of minutes from %d to %d, or empty.", kv.BriefMinDuration, kv.BriefMaxDuration)}
	}
	in.EstimatedDurationMinutes = &n
	return in, nil
}

// briefFieldKey names a refusal's field on the form: "title", a list ("objectives") or
// one of its items ("objectives.2"), after any wire part of its location.
func briefFieldKey(loc []any) string {
	var parts []string
	for _, p := range loc {
		if len(parts) == 2 {
			break
		}
		switch v := p.(type) {
		case string:
			if len(parts) == 0 && (v == "body" || v == "path" || v == "query" || v == "header") {
				continue
			}
			parts = append(parts, v)
		case int:
			parts = append(parts, strconv.Itoa(v))
		}
	}
	return strings.Join(parts, ".")
}

// briefFormErrors turns a refusal of the brief into messages by form field (the first
// for each), or returns nil when err is not a validation failure.
func briefFormErrors(err error) webui.FieldErrors {
	ae := pipeline.ToAPIError(err)
	if ae.Status != 422 {
		return nil
	}
	out := webui.FieldErrors{}
	for _, f := range ae.Fields {
		if k := briefFieldKey(f.Loc); out[k] == "" {
			out[k] = f.Msg
		}
	}
	if len(ae.Fields) == 0 {
		out[""] = ae.Detail
	}
	return out
}

// buildBriefEditPage gathers the brief form for study, filled from f (nil: from the
// current brief). It needs studies:write, as saving does.
func (s *App) buildBriefEditPage(ctx context.Context, p *pipeline.Principal, study kv.ID, f *briefForm) (webui.BriefEditPage, error) {
	if err := s.appMay(p, "update_study_brief", nil); err != nil {
		return webui.BriefEditPage{}, err
	}
	d, err := Call[research.StudyDetail](ctx, s, p, "get_study", &research.StudyIDInput{StudyID: study})
	if err != nil {
		return webui.BriefEditPage{}, err
	}
	page := webui.BriefEditPage{Tabs: studyTabs(p, study, webui.TabStudy), ID: d.ID.String(), Name: d.Name, Mode: string(d.Mode),
		Closed: d.Mode == kv.ModeClosed, Errors: webui.FieldErrors{},
		MaxTitle: kv.BriefMaxTitle, MaxItem: kv.BriefMaxItem, MinMinutes: kv.BriefMinDuration, MaxMinutes: kv.BriefMaxDuration}
	if f == nil {
		// The version and the brief come from one read, so the form's version is the
		// one its text shows.
		st, err := s.DB.FindStudyByID(ctx, p.Partition, study)
		if err != nil {
			return page, err
		}
		var b kv.Brief
		if st.Brief != nil {
			b = *st.Brief
		}
		form := briefFormOf(b, st.Version)
		f = &form
	}
	page.Version, page.Title, page.Minutes = f.version, f.title, f.minutes
	for i, l := range briefLists {
		bl := webui.BriefList{Field: l.field, Legend: l.legend, Hint: l.hint, Noun: l.noun, Add: l.add, CanAdd: len(f.lists[i]) < l.max}
		for j, text := range f.lists[i] {
			bl.Items = append(bl.Items, webui.BriefItem{ID: l.field + "-" + strconv.Itoa(j), Index: j, Number: j + 1, Text: text,
				First: j == 0, Last: j == len(f.lists[i])-1})
		}
		page.Lists = append(page.Lists, bl)
	}
	return page, nil
}

// setProblems puts refusals on the page: beside each field, and in the summary in the
// form's order, each linked to its control.
func setProblems(page *webui.BriefEditPage, fe webui.FieldErrors) {
	page.Errors = fe
	add := func(key, target string) {
		if msg := fe[key]; msg != "" {
			page.Problems = append(page.Problems, webui.Problem{Target: target, Message: msg})
		}
	}
	add("", "")
	add("title", "brief-title")
	add("estimated_duration_minutes", "brief-minutes")
	for i := range page.Lists {
		l := &page.Lists[i]
		l.Error = fe[l.Field]
		add(l.Field, l.Field+"-list")
		for j := range l.Items {
			it := &l.Items[j]
			it.Error = fe[l.Field+"."+strconv.Itoa(it.Index)]
			add(l.Field+"."+strconv.Itoa(it.Index), it.ID)
		}
	}
	if len(page.Problems) > 0 {
		page.Focus = "brief-errors"
	}
}

// appSaveBrief saves the form through the operation. It returns the refusals to show
// on the form (nil when saved) with their status (422, or 409 for a conflict), the
// version the form should carry from now on, and an error for anything else (not
// found, forbidden, a failure).
func (s *App) appSaveBrief(ctx context.Context, p *pipeline.Principal, study kv.ID, f briefForm) (webui.FieldErrors, int, int, error) {
	in, durationErr := f.input(study)
	if durationErr != nil {
		// Check the rest without saving, so every refusal shows at once.
		o := s.Op("update_study_brief")
		if err := o.CheckScope(p); err != nil {
			return nil, 0, f.version, err
		}
		fe := briefFormErrors(o.Plan.Finish(in, nil))
		if fe == nil {
			fe = webui.FieldErrors{}
		}
		fe["estimated_duration_minutes"] = durationErr.Msg
		return fe, 422, f.version, nil
	}
	_, err := Call[research.StudyDetail](ctx, s, p, "update_study_brief", in)
	if fe := briefFormErrors(err); fe != nil {
		return fe, 422, f.version, nil
	}
	var ke *kv.Error
	if pipeline.AsKV(err, &ke) && ke.Code == kv.ECONFLICT {
		version, msg := f.version, ke.Message
		if ke.Reason == "brief_changed" {
			// From now on the form is a proposal over the current version: saving it
			// again replaces that version, knowingly.
			if st, ferr := s.DB.FindStudyByID(ctx, p.Partition, study); ferr == nil {
				version = st.Version
			}
			msg += " Nothing was saved. Compare with the study page, then save again to replace it with what you see here."
		}
		return webui.FieldErrors{"": msg}, 409, version, nil
	}
	return nil, 0, f.version, err
}
