package webui

import (
	"bytes"
	"html/template"
	"strings"
	"testing"
)

func renderApp(tb testing.TB, u *UI, page string, shell AppShell, data any) string {
	tb.Helper()
	var b bytes.Buffer
	if err := u.RenderApp(&b, page, AppPage{Shell: shell, Data: data}); err != nil {
		tb.Fatal(err)
	}
	return b.String()
}

// TestRenderResearchPages renders every research page with typical data and checks
// what a researcher must see, what a member must not, and that user text is escaped.
func TestRenderResearchPages(t *testing.T) {
	u := mustUI(t)
	owner := AppShell{SignedIn: true, OrgName: "Acme", Env: "live", Role: "owner", Credits: 3, CSRF: "tok123", Nav: NavStudies}
	member := owner
	member.Role = "member"
	at := Stamp{ISO: "2026-11-23T18:00:00Z", Text: "23 Nov 2026, 18:00 UTC"}
	title := "Rotas <b>"
	study := StudyPage{ID: "s1", Name: "Rotas <b>", Mode: "test", Created: at, Updated: at,
		Brief:     &BriefView{Title: title, Objectives: []string{"Learn why"}, Screener: []string{"Do you work shifts?"}, Verbatim: []string{"Tell me about your last rota."}, Minutes: 12},
		Versions:  []DesignVersion{{Number: 2, Created: at, Guidance: "add a question", Current: true, Changes: []Change{{Part: "Verbatim questions", Added: []string{"New Q"}, Removed: []string{"Old Q"}}}}, {Number: 1, Created: at, Guidance: "first"}},
		InviteURL: "http://x/i/tok", InviteQR: template.URL("data:image/png;base64,iVBORw0KGgo="),
		Links:    []LinkRow{{URL: "http://x/i/p1", Audience: "person", Context: []KeyValue{{"segment", "smb"}}, Note: "be kind", Created: at}},
		LinkForm: LinkForm{Audience: "group", Rows: make([]KeyValue, 3)},
		CanRead:  true, CanLinks: true, CanWrite: true, CanGoLive: true, CanExport: true, CanTranscripts: true, CanMode: true, MaxTurns: 12}
	memberStudy := study
	memberStudy.CanGoLive, memberStudy.CanExport, memberStudy.CanMode = false, false, false
	live := study
	live.Mode, live.NoCredits = "live", true
	brief := BriefEditPage{ID: "s1", Name: "Rotas <b>", Mode: "live", Version: 3, Title: "Rotas <b>", Minutes: "ten",
		Lists: []BriefList{
			{Field: "objectives", Legend: "Objectives", Noun: "Objective", Add: "Add an objective", CanAdd: true, Items: []BriefItem{{ID: "objectives-0", Number: 1, Text: "Learn why", First: true, Last: true}}},
			{Field: "pre_interview_questions", Legend: "Screener questions", Noun: "Screener question", Add: "Add a screener question", CanAdd: true},
			{Field: "verbatim_questions", Legend: "Verbatim questions", Noun: "Verbatim question", Items: []BriefItem{
				{ID: "verbatim_questions-0", Number: 1, Text: "First?", First: true},
				{ID: "verbatim_questions-1", Index: 1, Number: 2, Text: "Second </textarea>?", Last: true, Error: "Verbatim question 2 is too long."}}},
		},
		Errors:   FieldErrors{"estimated_duration_minutes": "A whole number, please."},
		Problems: []Problem{{Target: "brief-minutes", Message: "A whole number, please."}, {Target: "verbatim_questions-1", Message: "Verbatim question 2 is too long."}},
		Focus:    "brief-errors", MaxTitle: 200, MaxItem: 1000, MinMinutes: 1, MaxMinutes: 480}
	closedBrief := BriefEditPage{ID: "s1", Name: "Rotas", Mode: "closed", Closed: true}
	closedStudy := study
	closedStudy.Mode = "closed"
	transcript := TranscriptPage{ID: "i1", StudyID: "s1", StudyName: "Rotas", Status: "completed", Started: at, Duration: "4 min",
		Context: []KeyValue{{"segment", "smb"}}, Messages: []Message{{"interviewer", "Hi <b>", at, "0:00", nil}, {"participant", "Hello", at, "0:12", nil}}}
	transcript.Transcript, transcript.Count = transcript.MessagesHTML(), 2
	cases := []struct {
		name        string
		page        string
		shell       AppShell
		data        any
		want, never []string
	}{
		{"OK_Studies", PageStudies, owner, StudiesPage{Studies: []StudyRow{{ID: "s1", Name: "Rotas <b>", Mode: "live", Created: at, Updated: at}}, NextURL: "/app/studies?cursor=abc", CanWrite: true},
			[]string{`href="/app/studies/s1">Rotas &lt;b&gt;</a>`, `class="mode mode-live">live<`, `href="/app/studies?cursor=abc" rel="next"`, `href="/app/studies/new"`, "app_research.css"}, nil},
		{"OK_StudiesEmpty", PageStudies, member, StudiesPage{}, []string{"No studies yet"}, []string{"/app/studies/new"}},
		{"OK_New", PageStudyNew, owner, StudyNewPage{Guidance: "learn <x>", Files: []UploadedFile{{ID: "f1", Filename: "plan.pdf", Size: "2 KB"}}, Errors: FieldErrors{"guidance": "Guidance must not be empty."}},
			[]string{`name="csrf" value="tok123"`, `enctype="multipart/form-data"`, `name="file_ids" value="f1"`, `data-upload`, "plan.pdf", "learn &lt;x&gt;</textarea>", `id="guidance-err">Guidance must not be empty.`, `aria-invalid="true"`}, nil},
		{"OK_Authoring", PageStudyAuthoring, owner, AuthoringPage{JobID: "j1", Status: "working"},
			[]string{`data-poll="/app/studies/jobs/j1/status"`, `role="status"`, "app_research.js"}, nil},
		{"OK_AuthoringFailed", PageStudyAuthoring, owner, AuthoringPage{JobID: "j1", Status: "failed"},
			[]string{"did not work out", "Nothing was saved", `data-poll=""`}, []string{"<textarea"}},
		{"OK_AuthoringFailedSaysWhyAndKeepsTheWords", PageStudyAuthoring, owner, AuthoringPage{JobID: "j1", Status: "failed", Refine: true, StudyURL: "/app/studies/s1",
			Reason: `Nothing was changed: the built-in engine could not apply "change objective 1".`, Guidance: "change objective <1>", RetryAction: "/app/studies/s1/refine"},
			[]string{`role="alert">Nothing was changed: the built-in engine could not apply &#34;change objective 1&#34;.`, "The study keeps its last saved version",
				`action="/app/studies/s1/refine"`, `name="csrf" value="tok123"`, "change objective &lt;1&gt;</textarea>", `data-poll=""`}, []string{"did not work out"}},
		{"OK_AuthoringFailedNewStudyKeepsFiles", PageStudyAuthoring, owner, AuthoringPage{JobID: "j1", Status: "failed", Reason: "No study was drafted: it asks for creative writing, not a research study.",
			Guidance: "Write me a poem", RetryAction: "/app/studies", FileIDs: []string{"f1"}},
			[]string{`action="/app/studies"`, `name="file_ids" value="f1"`, "Write me a poem</textarea>", "Nothing was saved."}, nil},
		{"OK_StudyOwner", PageStudy, owner, study,
			[]string{`href="/app/studies/s1/golive"`, `name="mode" value="closed"`, `data-copy="#invite-url"`, `src="data:image/png;base64,iVBORw0KGgo="`, "Tell me about your last rota.", "Version 2", "Removed: ", "New Q", `name="context_key"`, "segment=smb", "be kind", `action="/app/studies/s1/simulate"`, `/app/exports?study=s1`},
			[]string{"Not accepting interviews"}},
		{"OK_StudyEditBrief", PageStudy, owner, study, []string{`href="/app/studies/s1/brief">Edit brief</a>`}, nil},
		{"OK_StudyClosedNoEditBrief", PageStudy, owner, closedStudy, []string{"set the mode to test or live to edit the brief"}, []string{`/app/studies/s1/brief"`}},
		{"OK_BriefForm", PageStudyBrief, owner, brief,
			[]string{`action="/app/studies/s1/brief"`, `name="version" value="3"`, `<button type="submit" name="op" value="save" hidden>`,
				`value="Rotas &lt;b&gt;"`, `value="ten"`, `id="brief-minutes-err">A whole number, please.`, `aria-describedby="brief-minutes-hint brief-minutes-err" aria-invalid="true"`,
				`Second &lt;/textarea&gt;?</textarea>`, `aria-invalid="true" aria-describedby="verbatim_questions-1-err"`, `href="#verbatim_questions-1"`,
				`id="brief-errors" tabindex="-1" autofocus`, `value="up:verbatim_questions:1"`, `id="verbatim_questions-0-up" class="secondary small-button" disabled`,
				`Remove<span class="visually-hidden">: Verbatim question 2</span>`, `value="add:pre_interview_questions"`, "Interviews already started keep the version"},
			[]string{`value="add:verbatim_questions"`, `id="brief-title-err"`}},
		{"OK_BriefFormClosed", PageStudyBrief, owner, closedBrief, []string{"cannot be edited"}, []string{`action="/app/studies/s1/brief"`}},
		{"OK_StudyMember", PageStudy, member, memberStudy, []string{"Refine", `href="/app/studies/s1/findings"`, `href="/app/interviews?study=s1"`}, []string{"/golive", "Go live", "/app/exports?study", `name="mode"`}},
		{"OK_StudyLiveNoCredits", PageStudy, owner, live, []string{"Not accepting interviews", `value="paused"`}, []string{"/golive", `action="/app/studies/s1/simulate"`}},
		{"OK_GoLive", PageStudyGoLive, owner, GoLivePage{ID: "s1", Name: "Rotas", FirstTime: true},
			[]string{`name="mode" value="live"`, `name="confirm" value="yes"`, "needs a title and at least one verbatim question", "has no credits"}, nil},
		{"OK_Simulation", PageSimulation, owner, SimulationPage{JobID: "j2", StudyID: "s1", Status: "running", Turns: []SimulationTurn{{"interviewer", "Hello <there>", 1}}},
			[]string{`data-poll="/app/simulations/j2/status"`, "Hello &lt;there&gt;", "msg-interviewer"}, nil},
		{"OK_SimulationDone", PageSimulation, owner, SimulationPage{JobID: "j2", Status: "completed", Finished: true}, []string{`data-poll=""`, "Finished."}, nil},
		{"OK_SimulationStoppedAtLimit", PageSimulation, owner, SimulationPage{JobID: "j2", Status: "completed", Finished: true,
			Notice: "Stopped after 12 turns, the turn limit: 2 of 7 scripted questions not reached."},
			[]string{"Stopped after 12 turns, the turn limit: 2 of 7 scripted questions not reached."}, []string{"Finished."}},
		{"OK_Interviews", PageInterviews, owner, InterviewsPage{Interviews: []InterviewRow{{ID: "i1", StudyName: "Rotas", Status: "completed", Rehearsal: true, Started: at, Duration: "4 min"}},
			Studies: []Option{{"", "All studies", false}, {"s1", "Rotas", true}}, Statuses: []Option{{"", "Any status", true}}, Rehearsals: []Option{{"yes", "Rehearsals only", true}}},
			[]string{`href="/app/interviews/i1"`, "rehearsal", `<option value="s1" selected>Rotas</option>`, `<option value="yes" selected>`, "4 min"}, nil},
		{"OK_Transcript", PageTranscript, owner, transcript,
			[]string{"Interview of Rotas", "Hi &lt;b&gt;", "msg-participant", "0:12", "segment", "smb", "Context from the link"}, nil},
		{"OK_Exports", PageExports, owner, ExportsPage{Studies: []Option{{"s1", "Rotas", false}}, Formats: []Option{{"csv", "CSV", true}}},
			[]string{`action="/app/exports"`, `name="study_id"`, `value="csv" selected`}, nil},
		{"OK_ExportsTest", PageExports, owner, ExportsPage{TestEnv: true}, []string{"test data cannot be exported"}, []string{`action="/app/exports"`}},
		{"OK_Export", PageExport, owner, ExportPage{JobID: "e1", Status: "running"}, []string{`data-poll="/app/exports/e1/status"`, `id="export-download" hidden`}, nil},
		{"OK_ExportReady", PageExport, owner, ExportPage{JobID: "e1", Status: "completed", Ready: true, DownloadURL: "/app/exports/e1/download"}, []string{`href="/app/exports/e1/download"`, "Ready to download"}, []string{`id="export-download" hidden`}},
		{"OK_Redaction", PageRedaction, owner, RedactionPage{Email: true, Patterns: []PatternRow{{"ACME", "ACME-[0-9]+", ""}, {"bad", "(", "A pattern name is 1 to 32 upper-case"}}, Plugins: []PluginRow{{Kind: "formatter", Name: "jsonl", MediaType: "application/x-ndjson", SHA256: "abcdef0123456789", Added: at}}, CanEdit: true},
			[]string{`name="email" value="on" checked`, `value="ACME-[0-9]&#43;"`, "A pattern name is 1 to 32 upper-case", "jsonl", "abcdef012345<", `action="/app/settings/plugins/remove"`, `action="/app/settings/plugins"`}, nil},
		{"OK_RedactionMember", PageRedaction, member, RedactionPage{Email: true}, []string{"Only owners and admins", "fieldset class=\"field\" disabled"}, []string{`action="/app/settings/plugins"`, "Save redaction"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			html := renderApp(t, u, c.page, c.shell, c.data)
			for _, w := range c.want {
				if !strings.Contains(html, w) {
					t.Errorf("page lacks %q", w)
				}
			}
			for _, n := range c.never {
				if strings.Contains(html, n) {
					t.Errorf("page shows %q", n)
				}
			}
			if strings.Contains(html, "ZgotmplZ") {
				t.Errorf("a value was refused by html/template (ZgotmplZ)")
			}
			if strings.Contains(html, "<script>") || strings.Contains(html, " style=") || strings.Contains(html, "onclick") {
				t.Errorf("inline script or style")
			}
			if t.Failed() {
				t.Log(html)
			}
		})
	}
}

// TestResearchListWritersEscape: the hand-written list writers escape what a template
// would: element text and quoted attributes, NUL included.
func TestResearchListWritersEscape(t *testing.T) {
	evil := `"><script>alert('x')</script>&` + "\x00"
	at := Stamp{ISO: evil, Text: evil}
	tr := string(TranscriptPage{Messages: []Message{{Speaker: evil, Text: evil, At: at, Offset: evil}, {Speaker: "interviewer", Text: "Hi", At: at, Offset: "0:00"}}}.MessagesHTML())
	rows := string(StudiesPage{Studies: []StudyRow{{ID: evil, Name: evil, Mode: evil, Created: at, Updated: at}}}.RowsHTML())
	for name, out := range map[string]string{"transcript": tr, "rows": rows} {
		if strings.Contains(out, "<script>") || strings.Contains(out, "'x'") || strings.ContainsRune(out, 0) {
			t.Errorf("%s: unescaped input:\n%s", name, out)
		}
		if !strings.Contains(out, "&#34;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;\uFFFD") {
			t.Errorf("%s: input not escaped as expected:\n%s", name, out)
		}
	}
	if !strings.Contains(tr, `<li class="msg msg-participant" id="m0"><span class="who">Participant</span>`) || !strings.Contains(tr, `<li class="msg msg-interviewer" id="m1"><span class="who">Interviewer</span>`) {
		t.Errorf("speakers: %s", tr)
	}
}
