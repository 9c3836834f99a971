package kv

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// Brief is a study's authored design as the API shows it. All five fields are always
// present on the wire; slices are never nil once normalised.
type Brief struct {
	Title                    *string  `json:"title"`
	Objectives               []string `json:"objectives"`
	PreInterviewQuestions    []string `json:"pre_interview_questions"`
	VerbatimQuestions        []string `json:"verbatim_questions"`
	EstimatedDurationMinutes *int     `json:"estimated_duration_minutes"`
}

// Normalised returns a copy whose slices are non-nil, so it encodes as [] rather than null.
func (b Brief) Normalised() Brief {
	out := b
	out.Objectives = nonNil(b.Objectives)
	out.PreInterviewQuestions = nonNil(b.PreInterviewQuestions)
	out.VerbatimQuestions = nonNil(b.VerbatimQuestions)
	return out
}

func nonNil(s []string) []string {
	return append(make([]string, 0, len(s)), s...)
}

// Limits on a brief, whoever writes it: an authoring engine, a person in the app, a
// client of the API. They leave room for any real study; a brief past them has lost
// its shape (an interview of a hundred verbatim questions is not an interview).
const (
	BriefMaxTitle       = 200  // characters, one line
	BriefMaxItem        = 1000 // characters per objective or question; line breaks allowed
	BriefMaxObjectives  = 20
	BriefMaxQuestions   = 50 // screener and verbatim questions, each list
	BriefMinDuration    = 1  // minutes, when an estimate is given
	BriefMaxDuration    = 480
	briefMinObjectives  = 1
	briefMinScreener    = 0
	briefMinVerbatim    = 1
	briefListObjectives = "objectives"
	briefListScreener   = "pre_interview_questions"
	briefListVerbatim   = "verbatim_questions"
)

// briefList is one list of a brief with its rules and the words that name an item.
type briefList struct {
	field    string
	items    []string
	min, max int
	one      string // "Objective", for "Objective 2 must not be empty."
	many     string // "objectives", for "At most 20 objectives."
}

func (b Brief) lists() []briefList {
	return []briefList{
		{briefListObjectives, b.Objectives, briefMinObjectives, BriefMaxObjectives, "Objective", "objectives"},
		{briefListScreener, b.PreInterviewQuestions, briefMinScreener, BriefMaxQuestions, "Screener question", "screener questions"},
		{briefListVerbatim, b.VerbatimQuestions, briefMinVerbatim, BriefMaxQuestions, "Verbatim question", "verbatim questions"},
	}
}

// ValidateBrief returns b with the surrounding whitespace of its title and items
// trimmed, or EINVALID naming every field that breaks the limits above: a title of 1
// to BriefMaxTitle characters on one line; 1 to BriefMaxObjectives objectives, up to
// BriefMaxQuestions screener questions and 1 to BriefMaxQuestions verbatim
// questions, each 1 to BriefMaxItem characters; an estimated duration, when given,
// from BriefMinDuration to BriefMaxDuration minutes. Text is valid UTF-8 without
// control characters (items may hold line breaks and tabs). Locations are the brief's
// JSON names: ["title"], ["verbatim_questions", 2], ...
func ValidateBrief(b Brief) (Brief, error) {
	var errs []FieldError
	out := Brief{EstimatedDurationMinutes: b.EstimatedDurationMinutes}
	title := ""
	if b.Title != nil {
		title = strings.TrimSpace(*b.Title)
	}
	out.Title = &title
	if fe := briefText(title, BriefMaxTitle, false, "The title", []any{"title"}); fe != nil {
		errs = append(errs, *fe)
	}
	trimmed := make([][]string, 0, 3)
	for _, l := range b.lists() {
		items := make([]string, len(l.items))
		switch n := len(l.items); {
		case n < l.min:
			errs = append(errs, FieldError{Loc: []any{l.field}, Type: "too_short", Ctx: map[string]any{"min_length": l.min},
				Msg: "At least " + itoa(l.min) + " " + plural(l.min, strings.ToLower(l.one), l.many) + " " + plural(l.min, "is", "are") + " needed."})
		case n > l.max:
			errs = append(errs, FieldError{Loc: []any{l.field}, Type: "too_long", Ctx: map[string]any{"max_length": l.max},
				Msg: "At most " + itoa(l.max) + " " + l.many + "."})
		}
		for i, s := range l.items {
			items[i] = strings.TrimSpace(s)
			if fe := briefText(items[i], BriefMaxItem, true, l.one+" "+itoa(i+1), []any{l.field, i}); fe != nil {
				errs = append(errs, *fe)
			}
		}
		trimmed = append(trimmed, items)
	}
	out.Objectives, out.PreInterviewQuestions, out.VerbatimQuestions = trimmed[0], trimmed[1], trimmed[2]
	if d := b.EstimatedDurationMinutes; d != nil && (*d < BriefMinDuration || *d > BriefMaxDuration) {
		typ, ctx := "greater_than_equal", map[string]any{"ge": BriefMinDuration}
		if *d > BriefMaxDuration {
			typ, ctx = "less_than_equal", map[string]any{"le": BriefMaxDuration}
		}
		errs = append(errs, FieldError{Loc: []any{"estimated_duration_minutes"}, Type: typ, Ctx: ctx,
			Msg: "The estimated duration must be from " + itoa(BriefMinDuration) + " to " + itoa(BriefMaxDuration) + " minutes."})
	}
	if errs != nil {
		return Brief{}, Invalid(errs...)
	}
	return out, nil
}

// briefText checks one trimmed text of a brief; what names it in messages
// ("The title", "Verbatim question 3").
func briefText(s string, limit int, multiline bool, what string, loc []any) *FieldError {
	switch {
	case s == "":
		return &FieldError{Loc: loc, Type: "string_too_short", Ctx: map[string]any{"min_length": 1}, Msg: what + " must not be empty."}
	case !utf8.ValidString(s):
		return &FieldError{Loc: loc, Type: "string_unicode", Msg: what + " is not valid UTF-8."}
	case utf8.RuneCountInString(s) > limit:
		return &FieldError{Loc: loc, Type: "string_too_long", Ctx: map[string]any{"max_length": limit},
			Msg: what + " must be at most " + itoa(limit) + " characters."}
	}
	for _, r := range s {
		if multiline && (r == '\n' || r == '\t') {
			continue
		}
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) || r == '\u2028' || r == '\u2029' {
			msg := what + " must be one line without control characters."
			if multiline {
				msg = what + " must not contain control characters other than line breaks and tabs."
			}
			return &FieldError{Loc: loc, Type: "control_character", Msg: msg}
		}
	}
	return nil
}

// Equal reports whether b and o say the same thing (nil and empty lists alike).
func (b Brief) Equal(o Brief) bool {
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	num := func(p *int) int {
		if p == nil {
			return 0
		}
		return *p
	}
	return str(b.Title) == str(o.Title) && num(b.EstimatedDurationMinutes) == num(o.EstimatedDurationMinutes) &&
		slices.Equal(b.Objectives, o.Objectives) && slices.Equal(b.PreInterviewQuestions, o.PreInterviewQuestions) &&
		slices.Equal(b.VerbatimQuestions, o.VerbatimQuestions)
}
