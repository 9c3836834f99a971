package app

import (
	"net/url"
	"strconv"

	json "github.com/goccy/go-json"

	"interviewd/kv"
	"interviewd/server/pipeline"
	"interviewd/server/research"
	"interviewd/webui"
)

// The studies pages' routes. Go live needs studies:golive, which only owners and
// admins hold, so its confirmation page is admin-only; the mode post serves every
// target and leaves the scope for the target to the operation.
func (s *App) appStudyRoutes() []appRoute {
	return []appRoute{
		{"GET", "/studies", AccessMember, s.handleAppStudies},
		{"GET", "/studies/new", AccessResearch, s.handleAppStudyNew},
		{"POST", "/studies", AccessResearch, s.handleAppStudyCreate},
		{"POST", "/studies/files", AccessResearch, s.handleAppStudyFile},
		{"GET", "/studies/jobs/{job_id}", AccessMember, s.handleAppAuthoring},
		{"GET", "/studies/jobs/{job_id}/status", AccessMember, s.handleAppAuthoringStatus},
		{"GET", "/studies/{study_id}", AccessMember, s.handleAppStudy},
		{"GET", "/studies/{study_id}/golive", AccessAdmin, s.handleAppGoLive},
		{"POST", "/studies/{study_id}/mode", AccessAdmin, s.handleAppStudyMode},
		{"POST", "/studies/{study_id}/refine", AccessResearch, s.handleAppStudyRefine},
		{"GET", "/studies/{study_id}/brief", AccessResearch, s.handleAppStudyBrief},
		{"POST", "/studies/{study_id}/brief", AccessResearch, s.handleAppStudyBriefPost},
		{"POST", "/studies/{study_id}/simulate", AccessResearch, s.handleAppStudySimulate},
		{"POST", "/studies/{study_id}/links", AccessResearch, s.handleAppStudyLink},
		{"GET", "/simulations/{job_id}", AccessMember, s.handleAppSimulation},
		{"GET", "/simulations/{job_id}/status", AccessMember, s.handleAppSimulationStatus},
	}
}

// pathID returns the id in path parameter name; a malformed one is simply not found,
// as an unknown one is.
func pathID(r *pipeline.Request, name string) (kv.ID, error) {
	raw, _ := r.C.UserValue(name).(string)
	id, ok := kv.ParseID(raw)
	if !ok {
		return kv.ID{}, kv.Errorf(kv.ENOTFOUND, "not_found", "Not found.")
	}
	return id, nil
}

// studyInPath returns the study named by the path, after checking that the caller may
// read it in their partition: a post about another organisation's study is not found
// before anything in its form is looked at.
func (s *App) studyInPath(r *pipeline.Request) (kv.ID, error) {
	id, err := pathID(r, "study_id")
	if err != nil {
		return id, err
	}
	_, err = Call[research.StudyDetail](r.Ctx, s, r.P, "get_study", &research.StudyIDInput{StudyID: id})
	return id, err
}

func pathString(r *pipeline.Request, name string) string {
	v, _ := r.C.UserValue(name).(string)
	return v
}

// query returns a query parameter of the request.
func query(r *pipeline.Request, name string) string { return string(r.C.QueryArgs().Peek(name)) }

func queryAll(r *pipeline.Request, name string) []string {
	var out []string
	for _, v := range r.C.QueryArgs().PeekMulti(name) {
		out = append(out, string(v))
	}
	return out
}

// writeAppJSON answers a page's script (a job's status) with v as JSON.
func writeAppJSON(r *pipeline.Request, v any) error {
	body, err := json.MarshalNoEscape(v)
	if err != nil {
		return err
	}
	r.C.SetStatusCode(200)
	r.C.SetContentType("application/json")
	r.C.SetBody(body)
	r.Written = true
	return nil
}

func studyPage(title string, status int, data any, name string) *appPage {
	return &appPage{name: name, status: status, title: title, nav: webui.NavStudies, data: data}
}

func (s *App) handleAppStudies(r *pipeline.Request) error {
	page, err := s.buildStudiesPage(r.Ctx, r.P, query(r, "cursor"))
	if err != nil {
		return err
	}
	r.Out = studyPage("Studies", 0, page, webui.PageStudies)
	return nil
}

func (s *App) handleAppStudyNew(r *pipeline.Request) error {
	page, err := s.buildStudyNewPage(r.Ctx, r.P, "", queryAll(r, "file"))
	if err != nil {
		return err
	}
	r.Out = studyPage("New study", 0, page, webui.PageStudyNew)
	return nil
}

func (s *App) handleAppStudyCreate(r *pipeline.Request) error {
	guidance, files := formValue(r, "guidance"), formValues(r, "file_ids")
	job, err := s.appCreateStudy(r.Ctx, r.P, guidance, files)
	if fe := formErrors(err); fe != nil {
		page, perr := s.buildStudyNewPage(r.Ctx, r.P, guidance, files)
		if perr != nil {
			return perr
		}
		page.Errors = fe
		r.Out = studyPage("New study", 422, page, webui.PageStudyNew)
		return nil
	}
	if err != nil {
		return err
	}
	r.Out = appRedirect{to: "/app/studies/jobs/" + job}
	return nil
}

// handleAppStudyFile takes one document for a study being created (multipart, part
// "file", through the upload operation) and returns to the form with it attached.
// A refused file comes back as the form with the reason beside the file field.
func (s *App) handleAppStudyFile(r *pipeline.Request) error {
	keep := queryAll(r, "file_ids") // the files attached so far ride in the action's query
	in, err := s.BindUpload(r.C)
	var fh research.FileHandle
	if err == nil {
		fh, err = Call[research.FileHandle](r.Ctx, s, r.P, "upload_file", in)
	}
	if fe := formErrors(err); fe != nil {
		page, perr := s.buildStudyNewPage(r.Ctx, r.P, "", keep)
		if perr != nil {
			return perr
		}
		if _, ok := fe["file"]; !ok {
			fe = webui.FieldErrors{"file": fe.List()[0]}
		}
		page.Errors = fe
		r.Out = studyPage("New study", 422, page, webui.PageStudyNew)
		return nil
	}
	if err != nil {
		return err
	}
	v := url.Values{}
	for _, id := range append(keep, fh.FileID.String()) {
		v.Add("file", id)
	}
	r.Out = appRedirect{to: "/app/studies/new?" + v.Encode()}
	return nil
}

func (s *App) handleAppAuthoring(r *pipeline.Request) error {
	page, err := s.buildAuthoringPage(r.Ctx, r.P, pathString(r, "job_id"))
	if err != nil {
		return err
	}
	if page.Status == "ready" && page.StudyURL != "" {
		// Drafted before the page was asked for (a quick engine, a slow browser): go
		// straight to the study, as the page's script would once it saw "ready".
		r.Out = appRedirect{to: page.StudyURL}
		return nil
	}
	page.Refine = page.Refine || query(r, "refine") == "1"
	r.Out = studyPage("Drafting the study", 0, page, webui.PageStudyAuthoring)
	return nil
}

// AuthoringStatusJSON is what the authoring page's script polls.
type AuthoringStatusJSON struct {
	Status   string `json:"status"`
	StudyURL string `json:"study_url,omitempty"`
}

func (s *App) handleAppAuthoringStatus(r *pipeline.Request) error {
	page, err := s.buildAuthoringPage(r.Ctx, r.P, pathString(r, "job_id"))
	if err != nil {
		return err
	}
	return writeAppJSON(r, AuthoringStatusJSON{Status: page.Status, StudyURL: page.StudyURL})
}

func (s *App) handleAppStudy(r *pipeline.Request) error {
	id, err := pathID(r, "study_id")
	if err != nil {
		return err
	}
	page, err := s.buildStudyPage(r.Ctx, r.P, id)
	if err != nil {
		return err
	}
	page.Notice = studyNotices[query(r, "done")]
	r.Out = studyPage(page.Name, 0, page, webui.PageStudy)
	return nil
}

// studyNotices are the outcomes a redirect to the study page may name with ?done=: a
// fixed list, so a crafted link cannot put words on the page.
var studyNotices = map[string]string{
	"live":   "The study is live: its invite link now starts real interviews.",
	"test":   "Back in test mode: the invite link runs rehearsals.",
	"paused": "Paused: the invite link asks participants to come back later.",
	"closed": "Closed: the invite link no longer offers interviews.",
	"link":   "Participant link created.",
	"brief":  "Brief saved: it is the study's current design version.",
	"same":   "The brief was already so: no new version was saved.",
}

// studyFormError re-renders the study page with a form's refusal beside its field.
func (s *App) studyFormError(r *pipeline.Request, id kv.ID, fe webui.FieldErrors, keep func(*webui.StudyPage)) error {
	page, err := s.buildStudyPage(r.Ctx, r.P, id)
	if err != nil {
		return err
	}
	page.Errors = fe
	if keep != nil {
		keep(&page)
	}
	r.Out = studyPage(page.Name, 422, page, webui.PageStudy)
	return nil
}

func (s *App) handleAppGoLive(r *pipeline.Request) error {
	id, err := pathID(r, "study_id")
	if err != nil {
		return err
	}
	page, err := s.buildGoLivePage(r.Ctx, r.P, id)
	if err != nil {
		return err
	}
	r.Out = studyPage("Go live", 0, page, webui.PageStudyGoLive)
	return nil
}

// handleAppStudyMode sets a study's mode. Going live needs the confirmation page's
// "confirm" field, so no single click on the study page can spend credits.
func (s *App) handleAppStudyMode(r *pipeline.Request) error {
	id, err := s.studyInPath(r)
	if err != nil {
		return err
	}
	target := formValue(r, "mode")
	if target == string(kv.ModeLive) && formValue(r, "confirm") != "yes" {
		r.Out = appRedirect{to: "/app/studies/" + id.String() + "/golive"}
		return nil
	}
	res, err := s.appSetMode(r.Ctx, r.P, id, target)
	if fe := formErrors(err); fe != nil {
		if target == string(kv.ModeLive) {
			page, perr := s.buildGoLivePage(r.Ctx, r.P, id)
			if perr != nil {
				return perr
			}
			page.Errors = fe
			r.Out = studyPage("Go live", 422, page, webui.PageStudyGoLive)
			return nil
		}
		return s.studyFormError(r, id, fe, nil)
	}
	if err != nil {
		return err
	}
	r.Out = appRedirect{to: "/app/studies/" + id.String() + "?done=" + string(res.Mode)}
	return nil
}

func (s *App) handleAppStudyRefine(r *pipeline.Request) error {
	id, err := s.studyInPath(r)
	if err != nil {
		return err
	}
	guidance := formValue(r, "guidance")
	job, err := s.appRefineStudy(r.Ctx, r.P, id, guidance)
	if fe := formErrors(err); fe != nil {
		return s.studyFormError(r, id, fe, func(p *webui.StudyPage) { p.RefineGuidance = guidance })
	}
	if err != nil {
		return err
	}
	r.Out = appRedirect{to: "/app/studies/jobs/" + job + "?refine=1"}
	return nil
}

func (s *App) handleAppStudyBrief(r *pipeline.Request) error {
	id, err := pathID(r, "study_id")
	if err != nil {
		return err
	}
	page, err := s.buildBriefEditPage(r.Ctx, r.P, id, nil)
	if err != nil {
		return err
	}
	r.Out = studyPage("Edit brief", 0, page, webui.PageStudyBrief)
	return nil
}

// handleAppStudyBriefPost serves every button of the brief form: a layout button
// comes back as the form with its change made (nothing saved), "save" saves.
func (s *App) handleAppStudyBriefPost(r *pipeline.Request) error {
	id, err := s.studyInPath(r)
	if err != nil {
		return err
	}
	f := readBriefForm(r)
	if op := formValue(r, "op"); op != "" && op != "save" {
		focus, notice, _ := f.layoutChange(op)
		page, err := s.buildBriefEditPage(r.Ctx, r.P, id, &f)
		if err != nil {
			return err
		}
		page.Focus, page.Notice = focus, notice
		r.Out = studyPage("Edit brief", 0, page, webui.PageStudyBrief)
		return nil
	}
	fe, status, version, err := s.appSaveBrief(r.Ctx, r.P, id, f)
	if err != nil {
		return err
	}
	if fe != nil {
		f.version = version
		page, err := s.buildBriefEditPage(r.Ctx, r.P, id, &f)
		if err != nil {
			return err
		}
		setProblems(&page, fe)
		r.Out = studyPage("Edit brief", status, page, webui.PageStudyBrief)
		return nil
	}
	done := "brief"
	if st, err := s.DB.FindStudyByID(r.Ctx, r.P.Partition, id); err == nil && f.version > 0 && st.Version == f.version {
		done = "same"
	}
	r.Out = appRedirect{to: "/app/studies/" + id.String() + "?done=" + done + "#brief-h"}
	return nil
}

func (s *App) handleAppStudySimulate(r *pipeline.Request) error {
	id, err := s.studyInPath(r)
	if err != nil {
		return err
	}
	persona, turnsRaw := formValue(r, "persona"), formValue(r, "max_turns")
	var turns *int
	if turnsRaw != "" {
		n, convErr := strconv.Atoi(turnsRaw)
		if convErr != nil {
			return s.studyFormError(r, id, webui.FieldErrors{"max_turns": "Most turns is a whole number from 1 to 200."},
				func(p *webui.StudyPage) { p.Persona = persona })
		}
		turns = &n
	}
	job, err := s.appSimulate(r.Ctx, r.P, id, persona, turns)
	if fe := formErrors(err); fe != nil {
		return s.studyFormError(r, id, fe, func(p *webui.StudyPage) {
			p.Persona = persona
			if turns != nil {
				p.MaxTurns = *turns
			}
		})
	}
	if err != nil {
		return err
	}
	r.Out = appRedirect{to: "/app/simulations/" + job}
	return nil
}

func (s *App) handleAppStudyLink(r *pipeline.Request) error {
	id, err := s.studyInPath(r)
	if err != nil {
		return err
	}
	f := webui.LinkForm{Label: formValue(r, "label"), Audience: formValue(r, "audience"), Note: formValue(r, "note")}
	keys, values := formValues(r, "context_key"), formValues(r, "context_value")
	for i := range max(len(keys), len(values)) {
		var kv webui.KeyValue
		if i < len(keys) {
			kv.Key = keys[i]
		}
		if i < len(values) {
			kv.Value = values[i]
		}
		f.Rows = append(f.Rows, kv)
	}
	_, err = s.appCreateParticipantLink(r.Ctx, r.P, id, f)
	if fe := formErrors(err); fe != nil {
		for len(f.Rows) < linkFormRows {
			f.Rows = append(f.Rows, webui.KeyValue{})
		}
		return s.studyFormError(r, id, fe, func(p *webui.StudyPage) { p.LinkForm = f })
	}
	if err != nil {
		return err
	}
	r.Out = appRedirect{to: "/app/studies/" + id.String() + "?done=link#links-h"}
	return nil
}

func (s *App) handleAppSimulation(r *pipeline.Request) error {
	page, err := s.buildSimulationPage(r.Ctx, r.P, pathString(r, "job_id"))
	if err != nil {
		return err
	}
	r.Out = studyPage("Simulation", 0, page, webui.PageSimulation)
	return nil
}

// simulationStatusJSON is what the simulation page's script polls: the operation's
// own answer, so the page and the API show the same transcript.
func (s *App) handleAppSimulationStatus(r *pipeline.Request) error {
	st, err := Call[research.SimulationStatus](r.Ctx, s, r.P, "get_simulation_status", &research.JobIDInput{JobID: pathString(r, "job_id")})
	if err != nil {
		return err
	}
	return writeAppJSON(r, st)
}
