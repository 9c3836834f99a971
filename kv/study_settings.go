package kv

import (
	"context"
	"crypto/rand"
	"net/url"
	"strings"
	"unicode/utf8"
)

// ParticipantSettings are what a study's participants are shown around the interview:
// a consent step before it starts, the welcome and thank-you texts, and for panels a
// completion code and a redirect back to the panel. The zero value is the defaults: no
// consent step, the built-in texts, no code, no redirect.
type ParticipantSettings struct {
	// ConsentText, when set, is shown with a checkbox before the interview starts; no
	// interview starts until the participant ticks it, and the interview records when
	// they did and the text they agreed to.
	ConsentText string `json:"consent_text,omitempty"`
	// WelcomeText replaces the welcome card's built-in introduction.
	WelcomeText string `json:"welcome_text,omitempty"`
	// ThankYouText replaces the built-in thank-you once the interview is complete.
	ThankYouText string `json:"thank_you_text,omitempty"`
	// CompletionCode issues each completed interview a code, shown on the thank-you
	// screen (a redirect with {completion_code} turns it on too).
	CompletionCode bool `json:"completion_code,omitempty"`
	// CompletionRedirectURL is an https URL template the thank-you screen sends the
	// participant to, with {completion_code} and {interview_id} filled in.
	CompletionRedirectURL string `json:"completion_redirect_url,omitempty"`
}

// Limits of the participant settings, in characters after trimming.
const (
	MaxConsentText  = 5000
	MaxWelcomeText  = 2000
	MaxThankYouText = 2000
	MaxRedirectURL  = 2000
)

// The placeholders a completion redirect may carry.
const (
	PlaceholderCompletionCode = "{completion_code}"
	PlaceholderInterviewID    = "{interview_id}"
)

// IssuesCompletionCode reports whether a completed interview gets a completion code.
func (p ParticipantSettings) IssuesCompletionCode() bool {
	return p.CompletionCode || p.CompletionRedirectURL != ""
}

// IsZero reports whether p is the defaults.
func (p ParticipantSettings) IsZero() bool { return p == ParticipantSettings{} }

// ParticipantSettings returns the study's settings (the zero value when it has none).
func (s Study) ParticipantSettings() ParticipantSettings {
	if s.Participant == nil {
		return ParticipantSettings{}
	}
	return *s.Participant
}

// CompletionRedirect returns the redirect for a completed interview with its
// placeholders filled in (each value query-escaped), or "" when the study has none.
func (p ParticipantSettings) CompletionRedirect(interview ID, code string) string {
	if p.CompletionRedirectURL == "" {
		return ""
	}
	return strings.NewReplacer(PlaceholderCompletionCode, url.QueryEscape(code),
		PlaceholderInterviewID, url.QueryEscape(interview.String())).Replace(p.CompletionRedirectURL)
}

// ValidateParticipantSettings trims the texts and checks every field at once:
// EINVALID with one FieldError per broken rule. A redirect must be an absolute https
// URL with a host, no user information and no fragment, whose only braces are the
// two placeholders.
func ValidateParticipantSettings(p ParticipantSettings) (ParticipantSettings, error) {
	var errs []FieldError
	for _, f := range []struct {
		v     *string
		field string
		max   int
	}{{&p.ConsentText, "consent_text", MaxConsentText}, {&p.WelcomeText, "welcome_text", MaxWelcomeText},
		{&p.ThankYouText, "thank_you_text", MaxThankYouText}, {&p.CompletionRedirectURL, "completion_redirect_url", MaxRedirectURL}} {
		*f.v = strings.TrimSpace(*f.v)
		switch {
		case !utf8.ValidString(*f.v):
			errs = append(errs, FieldError{Loc: []any{f.field}, Type: "string_unicode", Msg: "Text must be valid UTF-8."})
		case strings.ContainsRune(*f.v, 0):
			errs = append(errs, FieldError{Loc: []any{f.field}, Type: "string_pattern_mismatch", Msg: "Text must not contain NUL."})
		case utf8.RuneCountInString(*f.v) > f.max:
			errs = append(errs, FieldError{Loc: []any{f.field}, Type: "string_too_long", Ctx: map[string]any{"max_length": f.max},
				Msg: "String should have at most " + itoa(f.max) + " characters."})
		}
	}
	if p.CompletionRedirectURL != "" && len(errs) == 0 {
		if msg := redirectProblem(p.CompletionRedirectURL); msg != "" {
			errs = append(errs, FieldError{Loc: []any{"completion_redirect_url"}, Type: "url_parsing", Msg: msg})
		}
	}
	if errs != nil {
		return ParticipantSettings{}, Invalid(errs...)
	}
	return p, nil
}

// redirectProblem says what is wrong with a completion redirect template, or "".
func redirectProblem(tmpl string) string {
	rest := strings.NewReplacer(PlaceholderCompletionCode, "", PlaceholderInterviewID, "").Replace(tmpl)
	if strings.ContainsAny(rest, "{}") {
		return "The only placeholders allowed are {completion_code} and {interview_id}."
	}
	for _, r := range rest {
		if r <= ' ' || r == 0x7f {
			return "A URL cannot contain spaces or control characters."
		}
	}
	// Parse with the placeholders filled, as the participant's browser will see it.
	u, err := url.Parse(strings.NewReplacer(PlaceholderCompletionCode, "CODE", PlaceholderInterviewID, "ID").Replace(tmpl))
	switch {
	case err != nil:
		return "Not a valid URL."
	case u.Scheme != "https" || !strings.HasPrefix(tmpl, "https://"):
		return "The URL must start with https://."
	case u.Host == "" || u.Hostname() == "":
		return "The URL must name a host."
	case u.User != nil:
		return "The URL must not carry a user name or password."
	case u.Fragment != "" || strings.Contains(tmpl, "#"):
		return "The URL must not have a #fragment."
	}
	// The participant's code may go anywhere but to a host of its own choosing.
	authority := strings.TrimPrefix(tmpl, "https://")
	if i := strings.IndexAny(authority, "/?"); i >= 0 {
		authority = authority[:i]
	}
	if strings.Contains(authority, "{") {
		return "A placeholder cannot be part of the host."
	}
	return ""
}

// ParticipantSettingsEdit replaces a study's participant settings.
type ParticipantSettingsEdit struct {
	Partition Partition
	StudyID   ID
	Settings  ParticipantSettings
	// Idem, when set, returns the idempotency record of the request for the study as
	// saved; it is written in the edit's transaction.
	Idem func(Study) *IdemWrite
}

// SetParticipantSettings validates in.Settings (EINVALID) and replaces the study's
// settings with them, with the idempotency record, in one transaction. Settings equal
// to the current ones save nothing and report changed false. They apply to interviews
// that start (consent) or complete (codes, texts) from then on: a consent recorded
// earlier is kept as it was. ENOTFOUND for a study outside the partition.
func (db *DB) SetParticipantSettings(ctx context.Context, in ParticipantSettingsEdit) (st Study, changed bool, err error) {
	settings, err := ValidateParticipantSettings(in.Settings)
	if err != nil {
		return Study{}, false, err
	}
	err = db.update(ctx, func(tx Tx) error {
		var err error
		changed = false
		if st, err = studyByID(tx, in.Partition, in.StudyID); err != nil {
			return err
		}
		if st.ParticipantSettings() != settings {
			st.Participant = nil
			if !settings.IsZero() {
				s := settings
				st.Participant = &s
			}
			st.UpdatedAt = db.Now()
			if err := db.putStudy(tx, st); err != nil {
				return err
			}
			changed = true
		}
		if in.Idem != nil {
			return db.writeIdem(tx, in.Idem(st))
		}
		return nil
	})
	if err != nil {
		return Study{}, false, err
	}
	return st, changed, nil
}

// completionAlphabet avoids letters and digits read alike (0/O, 1/I/L), since a
// participant may copy the code by hand into a panel's form.
const completionAlphabet = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"

// CompletionCodeLength is the length of a completion code: 10 characters of a
// 31-letter alphabet, about 49 bits, so a code cannot be guessed for a payment.
const CompletionCodeLength = 10

// NewCompletionCode returns a random completion code.
func NewCompletionCode() string {
	var b [CompletionCodeLength]byte
	_, _ = rand.Read(b[:])
	for i := range b {
		// 256 is not a multiple of 31: reject the top values so every letter is as likely.
		for b[i] >= 248 {
			var one [1]byte
			_, _ = rand.Read(one[:])
			b[i] = one[0]
		}
		b[i] = completionAlphabet[int(b[i])%len(completionAlphabet)]
	}
	return string(b[:])
}
