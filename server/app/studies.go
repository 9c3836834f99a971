package app

import (
	"context"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"interviewd/kv"
	"interviewd/server/pipeline"
	"interviewd/server/research"
	"interviewd/webui"
)

// The studies pages: the list, authoring from guidance and its live status, the study
// page with its brief, design versions, invite link and participant links, and the
// actions on a study. Every rule is an operation's (appCall); where no operation exists
// (design versions, a study's participant links) one small function here reads kv under
// the scope the API would ask for.

// studiesPageSize is the studies list's page: a screenful, not the API's 50.
const studiesPageSize = 25

func (s *App) buildStudiesPage(ctx context.Context, p *pipeline.Principal, cursor string) (webui.StudiesPage, error) {
	limit := studiesPageSize
	list, err := Call[pipeline.List[research.StudySummary]](ctx, s, p, "list_studies", &research.ListStudiesInput{Limit: &limit, Cursor: cursor})
	if err != nil {
		return webui.StudiesPage{}, err
	}
	page := webui.StudiesPage{Studies: make([]webui.StudyRow, len(list.Items)), CanWrite: p.Has(kv.ScopeStudiesWrite)}
	for i, st := range list.Items {
		page.Studies[i] = webui.StudyRow{ID: st.ID.String(), Name: st.Name, Mode: string(st.Mode),
			Created: wireStamp(st.CreatedAt), Updated: wireStamp(st.UpdatedAt), Launched: wireStampPtr(st.LaunchedAt)}
	}
	if list.NextCursor != nil {
		page.NextURL = "/app/studies?cursor=" + url.QueryEscape(*list.NextCursor)
	}
	if cursor != "" {
		page.FirstURL = "/app/studies"
	}
	return page, nil
}

// buildStudyNewPage is the authoring form with the files already attached (by id, as
// the upload redirect names them); ids of other partitions are simply not found.
func (s *App) buildStudyNewPage(ctx context.Context, p *pipeline.Principal, guidance string, fileIDs []string) (webui.StudyNewPage, error) {
	if err := s.appMay(p, "create_study", nil); err != nil {
		return webui.StudyNewPage{}, err
	}
	page := webui.StudyNewPage{Guidance: guidance}
	ids := parseIDs(fileIDs)
	if len(ids) > research.MaxFileIDs {
		ids = ids[:research.MaxFileIDs]
	}
	files, err := s.DB.FindFilesByID(ctx, p.Partition, ids)
	if err != nil && kv.ErrorCode(err) != kv.ENOTFOUND {
		return page, err
	}
	v := url.Values{}
	for _, f := range files {
		page.Files = append(page.Files, webui.UploadedFile{ID: f.ID.String(), Filename: f.Filename, Size: byteSize(f.ByteSize), Extracted: f.Extracted})
		v.Add("file_ids", f.ID.String())
	}
	page.UploadAction = "/app/studies/files"
	if len(v) > 0 {
		page.UploadAction += "?" + v.Encode()
	}
	return page, nil
}

// appCreateStudy starts authoring; it returns the job's id.
func (s *App) appCreateStudy(ctx context.Context, p *pipeline.Principal, guidance string, fileIDs []string) (string, error) {
	in := &research.CreateStudyInput{Guidance: guidance, FileIDs: parseIDs(fileIDs)}
	job, err := Call[research.AuthoringJob](ctx, s, p, "create_study", in)
	return job.JobID, err
}

// appRefineStudy starts a refine of study; it returns the job's id.
func (s *App) appRefineStudy(ctx context.Context, p *pipeline.Principal, study kv.ID, guidance string) (string, error) {
	job, err := Call[research.AuthoringJob](ctx, s, p, "refine_study", &research.RefineStudyInput{StudyID: study, Guidance: guidance})
	return job.JobID, err
}

// buildAuthoringPage is an authoring job's page. A failed job's page says why and puts
// the guidance the researcher typed back in a form (refine for a study, create for a
// new one, with its files), so nothing they wrote is lost.
func (s *App) buildAuthoringPage(ctx context.Context, p *pipeline.Principal, jobID string) (webui.AuthoringPage, error) {
	st, err := Call[research.AuthoringStatus](ctx, s, p, "get_authoring_status", &research.JobIDInput{JobID: jobID})
	if err != nil {
		return webui.AuthoringPage{}, err
	}
	page := webui.AuthoringPage{JobID: jobID, Status: st.Status, Reason: st.Failure()}
	if st.StudyID != nil {
		page.StudyURL = "/app/studies/" + st.StudyID.String()
	}
	if st.Status != kv.AuthoringFailed {
		return page, nil
	}
	// The job was just found in this partition under the operation's scope; its
	// guidance is the caller's own words.
	id, _ := kv.ParseID(jobID)
	j, err := s.DB.FindJobByID(ctx, p.Partition, kv.JobAuthoring, id)
	if err != nil {
		return page, err
	}
	page.Guidance, page.Refine = j.Guidance, j.StudyID != nil
	if !p.Has(kv.ScopeStudiesWrite) {
		return page, nil
	}
	switch {
	case page.Refine && st.StudyID != nil: // a study since erased takes no refine
		page.RetryAction = "/app/studies/" + st.StudyID.String() + "/refine"
	case !page.Refine:
		page.RetryAction = "/app/studies"
		for _, f := range j.FileIDs {
			page.FileIDs = append(page.FileIDs, f.String())
		}
	}
	return page, nil
}

// findDesignVersions returns a study's design versions, oldest first: kept for the app,
// not on the wire (DECISIONS §4), so no operation serves them. studies:read, as
// get_study.
func (s *App) findDesignVersions(ctx context.Context, p *pipeline.Principal, study kv.ID) ([]kv.BriefVersion, error) {
	if err := s.appMay(p, "get_study", nil); err != nil {
		return nil, err
	}
	return s.DB.FindBriefVersions(ctx, p.Partition, study)
}

// findParticipantLinks returns a study's participant links, oldest first, under
// links:read as the study's invite link.
func (s *App) findParticipantLinks(ctx context.Context, p *pipeline.Principal, study kv.ID) ([]kv.Link, error) {
	if err := s.appMay(p, "get_interview_link", nil); err != nil {
		return nil, err
	}
	return s.DB.FindParticipantLinks(ctx, p.Partition, study)
}

// buildStudyPage gathers a study's page. Parts the principal may not read (links
// without links:read) are left out rather than refused: a member still sees the brief.
func (s *App) buildStudyPage(ctx context.Context, p *pipeline.Principal, study kv.ID) (webui.StudyPage, error) {
	d, err := Call[research.StudyDetail](ctx, s, p, "get_study", &research.StudyIDInput{StudyID: study})
	if err != nil {
		return webui.StudyPage{}, err
	}
	page := webui.StudyPage{Tabs: studyTabs(p, study, webui.TabStudy), ID: d.ID.String(), Name: d.Name, Mode: string(d.Mode), Launched: wireStampPtr(d.LaunchedAt),
		Created: wireStamp(d.CreatedAt), Updated: wireStamp(d.UpdatedAt),
		CanRead: p.Has(kv.ScopeLinksRead), CanLinks: p.Has(kv.ScopeLinksWrite), CanWrite: p.Has(kv.ScopeStudiesWrite),
		CanGoLive: p.Has(kv.ScopeStudiesGoLive), CanExport: p.MayExport(), CanTranscripts: p.Has(kv.ScopeExportRead),
		CanMode:  p.MayChangeMode(),
		MaxTurns: research.FullSimulationTurns(d.Brief), LinkForm: blankLinkForm()}
	if d.Brief != nil {
		page.Brief = briefView(*d.Brief)
	}
	versions, err := s.findDesignVersions(ctx, p, study)
	if err != nil {
		return page, err
	}
	page.Versions = designVersions(versions)
	if page.CanRead {
		link, err := Call[research.InviteLink](ctx, s, p, "get_interview_link", &research.StudyIDInput{StudyID: study})
		if err != nil {
			return page, err
		}
		page.InviteURL = link.URL
		if page.InviteQR, err = qrDataURI(link.URL); err != nil {
			return page, err
		}
		links, err := s.findParticipantLinks(ctx, p, study)
		if err != nil {
			return page, err
		}
		page.Links = linkRows(s, links)
	}
	if p.Partition.Env == kv.EnvLive {
		org, err := s.DB.FindOrgByID(ctx, p.Partition.Org)
		if err != nil {
			return page, err
		}
		credits := org.Credits
		page.Credits = &credits
		page.NoCredits = d.Mode == kv.ModeLive && credits <= 0
	}
	return page, nil
}

func briefView(b kv.Brief) *webui.BriefView {
	v := &webui.BriefView{Objectives: b.Objectives, Screener: b.PreInterviewQuestions, Verbatim: b.VerbatimQuestions}
	if b.Title != nil {
		v.Title = *b.Title
	}
	if b.EstimatedDurationMinutes != nil {
		v.Minutes = *b.EstimatedDurationMinutes
	}
	return v
}

// designVersions lists versions newest first, each with what changed from the one
// before it.
func designVersions(vs []kv.BriefVersion) []webui.DesignVersion {
	out := make([]webui.DesignVersion, len(vs))
	for i, v := range vs {
		dv := webui.DesignVersion{Number: v.Version, Created: StampOf(v.CreatedAt), Guidance: v.Guidance, Edited: v.Source == kv.BriefEdited,
			Current: i == len(vs)-1}
		if i > 0 {
			dv.Changes = briefChanges(vs[i-1].Brief, v.Brief)
		}
		out[len(vs)-1-i] = dv
	}
	return out
}

// briefChanges says what changed from a to b, part by part; parts that did not change
// are left out.
func briefChanges(a, b kv.Brief) []webui.Change {
	var out []webui.Change
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	if ta, tb := str(a.Title), str(b.Title); ta != tb {
		out = append(out, webui.Change{Part: "Title", Added: nonEmpty(tb), Removed: nonEmpty(ta)})
	}
	for _, part := range []struct {
		name string
		a, b []string
	}{
		{"Objectives", a.Objectives, b.Objectives},
		{"Screener questions", a.PreInterviewQuestions, b.PreInterviewQuestions},
		{"Verbatim questions", a.VerbatimQuestions, b.VerbatimQuestions},
	} {
		added, removed := listDiff(part.a, part.b)
		if len(added)+len(removed) > 0 {
			out = append(out, webui.Change{Part: part.name, Added: added, Removed: removed})
		} else if strings.Join(part.a, "\x00") != strings.Join(part.b, "\x00") {
			out = append(out, webui.Change{Part: part.name + " (order)", Added: []string{"Same items in a new order."}})
		}
	}
	num := func(p *int) string {
		if p == nil {
			return ""
		}
		return strconv.Itoa(*p) + " min"
	}
	if da, db := num(a.EstimatedDurationMinutes), num(b.EstimatedDurationMinutes); da != db {
		out = append(out, webui.Change{Part: "Estimated length", Added: nonEmpty(db), Removed: nonEmpty(da)})
	}
	return out
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

// listDiff returns the items of b not in a and of a not in b, each in its list's
// order (counting repeats).
func listDiff(a, b []string) (added, removed []string) {
	count := map[string]int{}
	for _, x := range a {
		count[x]++
	}
	for _, x := range b {
		if count[x] > 0 {
			count[x]--
			continue
		}
		added = append(added, x)
	}
	for _, x := range a {
		if count[x] > 0 {
			count[x]--
			removed = append(removed, x)
		}
	}
	return added, removed
}

func linkRows(s *App, links []kv.Link) []webui.LinkRow {
	out := make([]webui.LinkRow, len(links))
	for i, l := range links {
		row := webui.LinkRow{Label: l.Label, URL: s.LinkURL(l.Token), Audience: l.Audience, Note: l.Note, Created: StampOf(l.CreatedAt),
			Claimed: l.InterviewID != nil, Context: sortedPairs(l.Context)}
		if row.Audience == "" {
			row.Audience = "group"
		}
		out[len(links)-1-i] = row // newest first
	}
	return out
}

func sortedPairs(m map[string]string) []webui.KeyValue {
	out := make([]webui.KeyValue, 0, len(m))
	for k, v := range m {
		out = append(out, webui.KeyValue{Key: k, Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// linkFormRows is how many context rows the participant-link form offers.
const linkFormRows = 3

func blankLinkForm() webui.LinkForm {
	return webui.LinkForm{Audience: "group", Rows: make([]webui.KeyValue, linkFormRows)}
}

// appCreateParticipantLink mints a participant link from the form's context rows
// (blank rows are skipped; a key given twice is the operation's to refuse).
func (s *App) appCreateParticipantLink(ctx context.Context, p *pipeline.Principal, study kv.ID, f webui.LinkForm) (research.ParticipantLink, error) {
	in := &research.ParticipantLinkInput{StudyID: study, Audience: f.Audience, Note: f.Note, Label: f.Label}
	for _, row := range f.Rows {
		k := strings.TrimSpace(row.Key)
		if k == "" && row.Value == "" {
			continue
		}
		if in.Context == nil {
			in.Context = map[string]string{}
		}
		if _, dup := in.Context[k]; dup {
			return research.ParticipantLink{}, kv.Invalid(kv.FieldError{Loc: []any{"body", "context", k}, Type: "duplicate_key",
				Msg: "The context key " + strconv.Quote(k) + " is given twice."})
		}
		in.Context[k] = row.Value
	}
	if in.Audience == "" {
		in.Audience = "group"
	}
	return Call[research.ParticipantLink](ctx, s, p, "create_participant_link", in)
}

// appSetMode moves a study to target. Go live needs the confirmation the page asks
// for; the operation checks the scope (studies:golive for live) and the validation.
func (s *App) appSetMode(ctx context.Context, p *pipeline.Principal, study kv.ID, target string) (research.ModeResult, error) {
	return Call[research.ModeResult](ctx, s, p, "set_study_mode", &research.SetModeInput{StudyID: study, Mode: kv.Mode(target)})
}

func (s *App) buildGoLivePage(ctx context.Context, p *pipeline.Principal, study kv.ID) (webui.GoLivePage, error) {
	if err := s.appMay(p, "set_study_mode", &research.SetModeInput{StudyID: study, Mode: kv.ModeLive}); err != nil {
		return webui.GoLivePage{}, err
	}
	d, err := Call[research.StudyDetail](ctx, s, p, "get_study", &research.StudyIDInput{StudyID: study})
	if err != nil {
		return webui.GoLivePage{}, err
	}
	page := webui.GoLivePage{ID: d.ID.String(), Name: d.Name, FirstTime: d.LaunchedAt == nil}
	if p.Partition.Env == kv.EnvLive {
		org, err := s.DB.FindOrgByID(ctx, p.Partition.Org)
		if err != nil {
			return page, err
		}
		page.Credits = &org.Credits
	}
	return page, nil
}

// appSimulate starts a simulation; it returns the job's id.
func (s *App) appSimulate(ctx context.Context, p *pipeline.Principal, study kv.ID, persona string, maxTurns *int) (string, error) {
	in := &research.SimulateStudyInput{StudyID: study, MaxTurns: maxTurns}
	if persona = strings.TrimSpace(persona); persona != "" {
		in.Persona = &persona
	}
	job, err := Call[research.SimulationJob](ctx, s, p, "simulate_study", in)
	return job.JobID, err
}

func (s *App) buildSimulationPage(ctx context.Context, p *pipeline.Principal, jobID string) (webui.SimulationPage, error) {
	st, err := Call[research.SimulationStatus](ctx, s, p, "get_simulation_status", &research.JobIDInput{JobID: jobID})
	if err != nil {
		return webui.SimulationPage{}, err
	}
	page := webui.SimulationPage{JobID: jobID, Status: st.Status, Finished: st.Status == kv.SimulationCompleted || st.Status == kv.SimulationFailed,
		Turns: make([]webui.SimulationTurn, len(st.Turns))}
	for i, t := range st.Turns {
		page.Turns[i] = webui.SimulationTurn{Speaker: t.Speaker, Text: t.Text, Turn: t.TurnNumber}
	}
	if st.Error != nil {
		page.Error = *st.Error
	}
	if st.Notice != nil {
		page.Notice = *st.Notice
	}
	// The simulation's study, for the way back; the job was just found in this
	// partition, so a miss here is only a study erased since.
	if id, ok := kv.ParseID(jobID); ok {
		if j, err := s.DB.FindJobByID(ctx, p.Partition, kv.JobSimulation, id); err == nil && j.StudyID != nil {
			page.StudyID = j.StudyID.String()
		}
	}
	return page, nil
}
