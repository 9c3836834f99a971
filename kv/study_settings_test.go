package kv

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestValidateParticipantSettings: texts are trimmed and bounded; a redirect is an
// https URL template with only the two placeholders, never in the host.
func TestValidateParticipantSettings(t *testing.T) {
	ok, err := ValidateParticipantSettings(ParticipantSettings{ConsentText: "  I agree.\n", WelcomeText: "\tHello ",
		CompletionRedirectURL: " https://panel.example/done?cc={completion_code}&pid={interview_id} "})
	if err != nil || ok.ConsentText != "I agree." || ok.WelcomeText != "Hello" ||
		ok.CompletionRedirectURL != "https://panel.example/done?cc={completion_code}&pid={interview_id}" {
		t.Fatalf("got %+v, %v", ok, err)
	}
	for _, tc := range []struct {
		name  string
		in    ParticipantSettings
		field string
		typ   string
	}{
		{"ErrConsentTooLong", ParticipantSettings{ConsentText: strings.Repeat("é", MaxConsentText+1)}, "consent_text", "string_too_long"},
		{"ErrWelcomeTooLong", ParticipantSettings{WelcomeText: strings.Repeat("a", MaxWelcomeText+1)}, "welcome_text", "string_too_long"},
		{"ErrThanksNUL", ParticipantSettings{ThankYouText: "a\x00b"}, "thank_you_text", "string_pattern_mismatch"},
		{"ErrHTTP", ParticipantSettings{CompletionRedirectURL: "http://panel.example/?c={completion_code}"}, "completion_redirect_url", "url_parsing"},
		{"ErrJavascript", ParticipantSettings{CompletionRedirectURL: "javascript:alert(1)//{completion_code}"}, "completion_redirect_url", "url_parsing"},
		{"ErrRelative", ParticipantSettings{CompletionRedirectURL: "/done?c={completion_code}"}, "completion_redirect_url", "url_parsing"},
		{"ErrOtherPlaceholder", ParticipantSettings{CompletionRedirectURL: "https://panel.example/?c={code}"}, "completion_redirect_url", "url_parsing"},
		{"ErrPlaceholderHost", ParticipantSettings{CompletionRedirectURL: "https://{completion_code}.example/"}, "completion_redirect_url", "url_parsing"},
		{"ErrUserInfo", ParticipantSettings{CompletionRedirectURL: "https://me:pw@panel.example/"}, "completion_redirect_url", "url_parsing"},
		{"ErrFragment", ParticipantSettings{CompletionRedirectURL: "https://panel.example/#{completion_code}"}, "completion_redirect_url", "url_parsing"},
		{"ErrSpace", ParticipantSettings{CompletionRedirectURL: "https://panel.example/a b"}, "completion_redirect_url", "url_parsing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ValidateParticipantSettings(tc.in)
			var ke *Error
			if !asError(err, &ke) || ke.Code != EINVALID || len(ke.Fields) != 1 || ke.Fields[0].Loc[0] != tc.field || ke.Fields[0].Type != tc.typ {
				t.Fatalf("got %v (%+v), want %s at %s", err, ke, tc.typ, tc.field)
			}
		})
	}
}

// TestCompletionRedirect: the placeholders are filled, query-escaped.
func TestCompletionRedirect(t *testing.T) {
	id := NewV4()
	p := ParticipantSettings{CompletionRedirectURL: "https://panel.example/done?cc={completion_code}&iv={interview_id}"}
	if got, want := p.CompletionRedirect(id, "AB CD"), "https://panel.example/done?cc=AB+CD&iv="+id.String(); got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	if !p.IssuesCompletionCode() || (ParticipantSettings{}).IssuesCompletionCode() || (ParticipantSettings{}).CompletionRedirect(id, "x") != "" {
		t.Fatal("a redirect issues codes; no settings issue none")
	}
	seen := map[string]bool{}
	for range 200 {
		c := NewCompletionCode()
		if len(c) != CompletionCodeLength || strings.Trim(c, completionAlphabet) != "" || seen[c] {
			t.Fatalf("code %q (seen %v)", c, seen[c])
		}
		seen[c] = true
	}
}

// TestSetParticipantSettings: the settings are saved on the study (its detail and
// brief untouched), an equal save changes nothing, and clearing them returns the
// defaults.
func TestSetParticipantSettings(t *testing.T) {
	db := mustOpenDB(t, nil)
	ctx := context.Background()
	p := Partition{Org: mustOrg(t, db, "settings").ID, Env: EnvLive}
	st := mustStudy(t, db, p, "Settings")
	want := ParticipantSettings{ConsentText: "I agree to take part.", ThankYouText: "Thanks!", CompletionCode: true}
	saved, changed, err := db.SetParticipantSettings(ctx, ParticipantSettingsEdit{Partition: p, StudyID: st.ID, Settings: want})
	if err != nil || !changed || saved.ParticipantSettings() != want || saved.Version != st.Version {
		t.Fatalf("saved %+v changed %v %v", saved, changed, err)
	}
	got, err := db.FindStudyByID(ctx, p, st.ID)
	if err != nil || got.ParticipantSettings() != want || !got.Brief.Equal(*st.Brief) {
		t.Fatalf("stored %+v %v", got, err)
	}
	if _, changed, err := db.SetParticipantSettings(ctx, ParticipantSettingsEdit{Partition: p, StudyID: st.ID, Settings: want}); err != nil || changed {
		t.Fatalf("equal save: changed %v %v", changed, err)
	}
	other := Partition{Org: p.Org, Env: EnvTest}
	if _, _, err := db.SetParticipantSettings(ctx, ParticipantSettingsEdit{Partition: other, StudyID: st.ID, Settings: want}); ErrorCode(err) != ENOTFOUND {
		t.Fatalf("other partition: %v", err)
	}
	if _, _, err := db.SetParticipantSettings(ctx, ParticipantSettingsEdit{Partition: p, StudyID: st.ID,
		Settings: ParticipantSettings{CompletionRedirectURL: "http://x"}}); ErrorCode(err) != EINVALID {
		t.Fatalf("bad redirect: %v", err)
	}
	cleared, changed, err := db.SetParticipantSettings(ctx, ParticipantSettingsEdit{Partition: p, StudyID: st.ID})
	if err != nil || !changed || cleared.Participant != nil {
		t.Fatalf("cleared %+v %v", cleared.Participant, err)
	}
}

// TestConsentBeforeInterview: a study asking for consent starts no interview and
// spends no credit without it (for the prepared and the committed path alike); with it
// the interview records when and to what text; an interview under way continues
// without asking again.
func TestConsentBeforeInterview(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	db := mustOpenDB(t, (&fixedClock{now: t0}).Now)
	ctx := context.Background()
	org := mustOrg(t, db, "consent")
	if _, err := db.AddCredits(ctx, org.ID, 5); err != nil {
		t.Fatal(err)
	}
	p := Partition{Org: org.ID, Env: EnvLive}
	st := mustStudy(t, db, p, "Consent")
	if _, err := db.SetStudyMode(ctx, p, st.ID, ModeLive); err != nil {
		t.Fatal(err)
	}
	const text = "I agree that my answers are used for this research."
	if _, _, err := db.SetParticipantSettings(ctx, ParticipantSettingsEdit{Partition: p, StudyID: st.ID,
		Settings: ParticipantSettings{ConsentText: text}}); err != nil {
		t.Fatal(err)
	}
	open := func(Brief, Interview, Link) Turn {
		return Turn{Status: InterviewInProgress, Messages: []Message{msg(SpeakerInterviewer, "Hello", t0)}}
	}
	for _, tc := range []struct {
		name string
		open Opening
	}{{"Prepared", open}, {"Committed", nil}} {
		t.Run("ErrNoConsentStartsNothing_"+tc.name, func(t *testing.T) {
			o, err := db.ResumeLinkConsented(ctx, st.LinkToken, "", "s-"+tc.name, false, tc.open)
			if err != nil || o.State != LinkConsentRequired || o.Interview != nil || o.Started {
				t.Fatalf("%+v %v", o, err)
			}
			if got, _ := db.FindOrgByID(ctx, org.ID); got.Credits != 5 {
				t.Fatalf("credits %d, want 5", got.Credits)
			}
			if page, _ := db.FindInterviews(ctx, InterviewFilter{Partition: p, Limit: 10}); len(page.Items) != 0 {
				t.Fatalf("interviews %+v", page.Items)
			}
		})
	}
	var id ID
	t.Run("OK_ConsentRecorded", func(t *testing.T) {
		o, err := db.ResumeLinkConsented(ctx, st.LinkToken, "", "s1", true, open)
		if err != nil || o.State != LinkOpen || !o.Started {
			t.Fatalf("%+v %v", o, err)
		}
		iv, err := db.FindInterviewByID(ctx, p, o.Interview.ID)
		if err != nil || iv.ConsentedAt == nil || !iv.ConsentedAt.Equal(t0) || iv.ConsentText != text {
			t.Fatalf("stored %+v %v", iv, err)
		}
		id = iv.ID
	})
	t.Run("OK_ResumedWithoutAskingAgain", func(t *testing.T) {
		o, err := db.ResumeLinkConsented(ctx, st.LinkToken, "s1", "s2", false, open)
		if err != nil || o.State != LinkOpen || o.Started || o.Interview.ID != id {
			t.Fatalf("%+v %v", o, err)
		}
	})
	t.Run("OK_NoConsentAskedNoneRecorded", func(t *testing.T) {
		if _, _, err := db.SetParticipantSettings(ctx, ParticipantSettingsEdit{Partition: p, StudyID: st.ID}); err != nil {
			t.Fatal(err)
		}
		o, err := db.ResumeLinkConsented(ctx, st.LinkToken, "", "s3", true, open)
		if err != nil || !o.Started || o.Interview.ConsentedAt != nil || o.Interview.ConsentText != "" {
			t.Fatalf("%+v %v", o.Interview, err)
		}
	})
}

// TestCompletionCodeStoredWithCompletion: the code a completing turn carries is stored
// in the transaction that completes the interview; a turn that does not complete it
// stores none.
func TestCompletionCodeStoredWithCompletion(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	db := mustOpenDB(t, (&fixedClock{now: t0}).Now)
	ctx := context.Background()
	p := Partition{Org: mustOrg(t, db, "codes").ID, Env: EnvTest}
	st := mustStudy(t, db, p, "Codes")
	open := func(Brief, Interview, Link) Turn {
		return Turn{Status: InterviewInProgress, Messages: []Message{msg(SpeakerInterviewer, "Why?", t0)}}
	}
	o, err := db.ResumeLinkOpening(ctx, st.LinkToken, "", "s1", open)
	if err != nil {
		t.Fatal(err)
	}
	iv, err := db.AppendTurn(ctx, p, o.Interview.ID, Turn{Session: "s1", ExpectLen: 1, Status: InterviewInProgress, CompletionCode: "EARLY",
		Messages: []Message{msg(SpeakerParticipant, "Because", t0)}})
	if err != nil || iv.CompletionCode != "" {
		t.Fatalf("in progress: %+v %v", iv, err)
	}
	iv, err = db.AppendTurn(ctx, p, o.Interview.ID, Turn{Session: "s1", ExpectLen: 2, Status: InterviewCompleted, CompletionCode: "K7P2M9QX4R",
		Messages: []Message{msg(SpeakerInterviewer, "Thanks", t0)}})
	if err != nil || iv.CompletionCode != "K7P2M9QX4R" || iv.Status != InterviewCompleted {
		t.Fatalf("completed: %+v %v", iv, err)
	}
	stored, err := db.FindInterviewByID(ctx, p, iv.ID)
	if err != nil || stored.CompletionCode != "K7P2M9QX4R" {
		t.Fatalf("stored %+v %v", stored, err)
	}
}
