package webui

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"sort"
)

// The research pages of the app: studies, interviews, transcripts, exports and the
// organisation's redaction and plugins. Their data is plain values the server fills
// in once per request (times already formatted, counts already counted), so rendering
// does no work beyond writing text.

// Research page names for Render.
const (
	PageStudies        = "app_studies"
	PageStudyNew       = "app_study_new"
	PageStudyAuthoring = "app_study_authoring"
	PageStudy          = "app_study"
	PageStudyGoLive    = "app_study_golive"
	PageStudyBrief     = "app_study_brief"
	PageSimulation     = "app_study_simulation"
	PageInterviews     = "app_interviews"
	PageTranscript     = "app_interview"
	PageExports        = "app_exports"
	PageExport         = "app_export"
	PageRedaction      = "app_settings_redaction"
)

// ResearchPages lists the research pages, each parsed with the app layout.
var ResearchPages = []string{PageStudies, PageStudyNew, PageStudyAuthoring, PageStudy, PageStudyGoLive, PageStudyBrief,
	PageSimulation, PageInterviews, PageTranscript, PageExports, PageExport, PageRedaction, PageFindings, PageDashboard}

// Stamp is a moment as a page shows it: the machine form for <time datetime> and
// the words a person reads.
type Stamp struct {
	ISO  string // RFC 3339, UTC
	Text string // "23 Nov 2026, 18:15 UTC"
}

// FieldErrors are a form's refusals by field name ("" for the whole form).
type FieldErrors map[string]string

// StudyRow is one study of the studies list.
type StudyRow struct {
	ID       string
	Name     string
	Mode     string // test, live, paused, closed
	Created  Stamp
	Updated  Stamp
	Launched *Stamp
}

// StudiesPage is the paged list of studies, newest first.
type StudiesPage struct {
	Studies  []StudyRow
	NextURL  string // the next page's address; "" on the last page
	FirstURL string // the first page's address when this is a later page; else ""
	CanWrite bool   // may create studies
}

// UploadedFile is a file attached to a study being created.
type UploadedFile struct {
	ID        string
	Filename  string
	Size      string // "12 KB"
	Extracted bool
}

// StudyNewPage is the form that authors a study from guidance.
type StudyNewPage struct {
	// UploadAction is where the attach form posts: the files attached so far ride in
	// its query, as a multipart body's other parts are not read.
	UploadAction string
	Guidance     string
	Files        []UploadedFile
	Errors       FieldErrors
}

// AuthoringPage is the live status of an authoring job. A failed job shows why and
// its guidance again in a form, to correct and send once more.
type AuthoringPage struct {
	JobID    string
	Status   string // working, ready, failed
	StudyURL string // the study's page once one exists
	Refine   bool   // the job refines an existing study
	Reason   string // why a failed job failed, as the job records it
	// Guidance is what the researcher typed; RetryAction where the form sends it again
	// ("" when the viewer may not write), with FileIDs riding along on a new study.
	Guidance    string
	RetryAction string
	FileIDs     []string
}

// Change is what changed in one part of a brief between two design versions.
type Change struct {
	Part    string   // "Title", "Objectives", ...
	Added   []string // new items (or the new value)
	Removed []string // items gone (or the old value)
}

// DesignVersion is one saved design version and what changed from the one before.
type DesignVersion struct {
	Number   int
	Created  Stamp
	Guidance string
	Edited   bool     // written directly (the brief form, the API) rather than authored
	Changes  []Change // empty for version 1
	Current  bool
}

// LinkRow is one participant link of a study.
type LinkRow struct {
	Label    string
	URL      string
	Audience string
	Context  []KeyValue
	Note     string
	Created  Stamp
	Claimed  bool // a person link whose interview has started
}

// KeyValue is one entry of a link's context, in key order.
type KeyValue struct {
	Key, Value string
}

// BriefView is a study's current brief as the page shows it.
type BriefView struct {
	Title      string
	Objectives []string
	Screener   []string
	Verbatim   []string
	Minutes    int // 0: not estimated
}

// StudyPage is one study: its brief, design versions, invite link and actions.
type StudyPage struct {
	Tabs     StudyTabs
	ID       string
	Name     string
	Mode     string
	Launched *Stamp
	Created  Stamp
	Updated  Stamp
	Brief    *BriefView
	Versions []DesignVersion // newest first

	InviteURL string
	InviteQR  template.URL // data:image/png;base64,... of the invite URL (trusted: the server made it)

	Links     []LinkRow
	LinkForm  LinkForm
	CanLinks  bool // may create participant links
	CanRead   bool // may read links
	CanWrite  bool // may refine, simulate, pause, close or return to test
	CanGoLive bool // may go live
	CanExport bool // may export interviews
	// CanTranscripts: may read the study's interviews, findings and dashboard.
	CanTranscripts bool
	// CanMode: may pause, close or return the study to test (owners and admins).
	CanMode bool

	// NoCredits is set when the study is live in the live environment while the
	// organisation has no credits: the link accepts no interviews until credits arrive.
	NoCredits bool
	Credits   *int // the organisation's credits in the live environment; nil in test

	RefineGuidance string
	Persona        string
	MaxTurns       int
	Errors         FieldErrors
	Notice         string // a one-line outcome of the last action ("Study paused.")
}

// LinkForm is the participant-link form, kept on a refusal so nothing typed is lost.
type LinkForm struct {
	Label    string
	Audience string
	Note     string
	Rows     []KeyValue // context rows; always at least a few blank ones
}

// ModeTargets are the modes a study can be moved to from mode, except live: every
// target but paused (valid only from live), minus the mode itself.
func (p StudyPage) ModeTargets() []string {
	var out []string
	for _, m := range []string{"test", "paused", "closed"} {
		if m == p.Mode || (m == "paused" && p.Mode != "live") {
			continue
		}
		out = append(out, m)
	}
	return out
}

// BriefEditPage is the form that edits a study's brief directly: its title and
// estimated length, and its lists, whose items are added, changed, removed and moved
// with buttons that post the form (no script needed). It is kept on a refusal or a
// change of layout, so nothing typed is lost.
type BriefEditPage struct {
	Tabs    StudyTabs
	ID      string
	Name    string
	Mode    string
	Version int  // the design version the form was opened at
	Closed  bool // a closed study's brief cannot be edited: no form
	Title   string
	Minutes string // as typed; "" for no estimate
	Lists   []BriefList
	// Errors are the refusals by field: "title", "estimated_duration_minutes", a list
	// ("objectives") or one of its items ("objectives.2"), and "" for the whole form.
	Errors FieldErrors
	// Problems are the same refusals in the order of the form, each with the id of
	// the control it is about, for the summary above the form.
	Problems []Problem
	// Focus is the id of the control to focus when the page loads: the item a button
	// just moved, added or removed, so the keyboard stays where the person was.
	Focus  string
	Notice string // what the last layout button did, announced politely

	MaxTitle, MaxItem, MinMinutes, MaxMinutes int
}

// Problem is one refusal of a form, linked to its control.
type Problem struct {
	Target  string // id of the control
	Message string
}

// BriefList is one list of the brief form.
type BriefList struct {
	Field  string // the form and wire name: "objectives", "pre_interview_questions", "verbatim_questions"
	Legend string // "Objectives"
	Hint   string
	Noun   string // one item, capitalised: "Objective"
	Add    string // the add button's words: "Add an objective"
	Items  []BriefItem
	Error  string // about the list as a whole ("At least 1 objective is needed.")
	CanAdd bool   // below its limit
}

// BriefItem is one objective or question of the brief form.
type BriefItem struct {
	ID     string // the textarea's id, "verbatim_questions-2"
	Index  int
	Number int // Index+1, as people count
	Text   string
	Error  string
	First  bool
	Last   bool
}

// GoLivePage confirms going live.
type GoLivePage struct {
	ID        string
	Name      string
	FirstTime bool // the study has never been live: validation runs and launched_at is set
	Credits   *int
	Errors    FieldErrors
}

// SimulationTurn is one message of a simulation's transcript.
type SimulationTurn struct {
	Speaker string // interviewer or participant
	Text    string
	Turn    int
}

// SimulationPage is a simulation growing turn by turn.
type SimulationPage struct {
	JobID    string
	StudyID  string
	Status   string // queued, running, completed, failed
	Turns    []SimulationTurn
	Error    string
	Notice   string // a completed run its turn limit stopped: where it stopped
	Finished bool
}

// InterviewRow is one interview of the interviews list.
type InterviewRow struct {
	ID        string
	StudyID   string
	StudyName string
	Status    string
	Rehearsal bool
	Started   Stamp
	Duration  string // "4 min 10 s"; "" until the participant answers
	Audience  string
	Modality  string     // text or voice
	LinkLabel string     // the participant link's label; "" for none or an unlabelled link
	Context   []KeyValue // what the link's context stored on the interview
}

// Option is one choice of a select.
type Option struct {
	Value, Label string
	Selected     bool
}

// InterviewsPage is the filtered, paged list of interviews.
type InterviewsPage struct {
	Interviews []InterviewRow
	Studies    []Option // the study filter
	Statuses   []Option
	Rehearsals []Option
	Modalities []Option
	Lengths    []Option // the length filter
	Links      []Option // the chosen study's participant links, by label; empty without a study
	ContextHas string
	NextURL    string
	FirstURL   string
	Filtered   bool
	// SearchStudy, when the list is narrowed to one study, is its id: the page offers
	// a search of its transcripts.
	SearchStudy string
}

// Message is one line of a transcript.
type Message struct {
	Speaker string // interviewer or participant
	Text    string
	At      Stamp
	Offset  string // time since the interview started, "3:05"
	Marks   []Mark // highlights of a participant message (app_annotations.go)
}

// TranscriptPage is an interview's transcript: the permalink every interview carries.
type TranscriptPage struct {
	ID            string
	StudyID       string
	StudyName     string
	Status        string
	Rehearsal     bool
	Modality      string
	Audience      string
	DesignVersion int
	Started       Stamp
	Completed     *Stamp
	Duration      string
	Context       []KeyValue
	// Consented is when the participant agreed to the study's consent (nil: none was
	// asked), ConsentText what they agreed to; CompletionCode the code they were given.
	Consented      *Stamp
	ConsentText    string
	CompletionCode string
	Messages       []Message // when Transcript is empty: the messages to show
	// Transcript is the messages already rendered (see MessagesHTML) and Count how
	// many they are; the server keeps renders of transcripts that have not grown.
	Transcript template.HTML
	Count      int
	// Body, when set, is the whole content already rendered (RenderAppPart with
	// "interview_body"); the page then only wraps it in the layout.
	Body template.HTML
	// Notes are the tags, highlights and neighbours shown beside the transcript.
	Notes *TranscriptNotes
}

// ExportsPage starts an export.
type ExportsPage struct {
	Studies    []Option
	Formats    []Option
	TestEnv    bool // test-environment data cannot be exported
	Errors     FieldErrors
	NoStudies  bool
	LiveNotice string
}

// ExportPage is one export's progress.
type ExportPage struct {
	JobID       string
	Status      string
	Ready       bool
	Failed      bool
	DownloadURL string
}

// PluginRow is one of the organisation's plugins.
type PluginRow struct {
	Kind      string
	Name      string
	MediaType string
	SHA256    string
	Added     Stamp
}

// PatternRow is one custom redaction pattern.
type PatternRow struct {
	Name, Regex string
	Error       string // why this row was refused
}

// RedactionPage is Settings → Redaction and plugins.
type RedactionPage struct {
	Email, Phone, Card, IP bool
	Patterns               []PatternRow // saved ones plus a blank row to add one
	Plugins                []PluginRow
	Errors                 FieldErrors
	Notice                 string
	CanEdit                bool
}

// List returns the form's refusals for the summary above it, the whole form's first.
func (e FieldErrors) List() []string {
	if len(e) == 0 {
		return nil
	}
	keys := make([]string, 0, len(e))
	for k := range e {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = e[k]
	}
	return out
}

// RenderAppPart writes the template part of app page name with data (not the layout):
// a piece the server renders once and keeps. It returns an error for an unknown page
// or part, or a failed execution or write.
func (u *UI) RenderAppPart(w io.Writer, name, part string, data any) error {
	t, err := u.app.page(name)
	if err != nil {
		return err
	}
	buf, _ := u.bufs.Get().(*bytes.Buffer)
	if buf == nil {
		buf = new(bytes.Buffer)
	}
	defer func() {
		buf.Reset()
		u.bufs.Put(buf)
	}()
	if err := t.ExecuteTemplate(buf, part, data); err != nil {
		return fmt.Errorf("webui: render %s %s: %w", name, part, err)
	}
	_, err = w.Write(buf.Bytes())
	return err
}
