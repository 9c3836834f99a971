package webui

// What participants see around the interview: a study's participant settings (its
// consent, texts and completion) and the organisation's brand on its participant pages.
const (
	PageStudyParticipants = "app_study_participants"
	PageSettingsBrand     = "app_settings_brand"
)

// StudyParticipantsPage is a study's participant settings form.
type StudyParticipantsPage struct {
	Tabs           StudyTabs
	ID, Name, Mode string
	// The settings as saved (or as posted, after a refusal).
	Consent, Welcome, ThankYou, Redirect string
	CompletionCode                       bool
	// CanEdit: the viewer may change the settings (studies:write); others read them.
	CanEdit  bool
	Errors   FieldErrors
	Problems []Problem
	Notice   string
	// InviteURL is the study's invite link, to see the page as a participant does.
	InviteURL                                        string
	MaxConsent, MaxWelcome, MaxThankYou, MaxRedirect int
}

// BrandPage is Settings → Participant pages: the organisation's name, colour,
// contact and logo on its participant pages.
type BrandPage struct {
	OrgName                           string // the organisation's own name, the default
	DisplayName, Accent, ContactEmail string
	// LogoURL previews the logo in the app; "" when there is none.
	LogoURL  string
	LogoInfo string // "PNG, 240 × 80 px, 12 KB"
	CanEdit  bool   // owners and admins
	Errors   FieldErrors
	Problems []Problem
	Notice   string
	MaxName  int
}
