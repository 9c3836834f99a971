package server

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"interviewd/kv"
	"interviewd/server/app"
	"interviewd/server/research"
)

// appClient is a browser signed in to the app, driven over plain HTTP: its session
// cookie and the CSRF token its forms carry. It follows no redirect, so a test sees
// each 303 and where it leads.
type appClient struct {
	e      *testEnv
	cookie string
	csrf   string
	hc     *http.Client
}

// mustAppClient signs email in through the store exactly as the sign-in page does (the
// code the store hands out is the one the email would carry) and chooses org's env.
// A new address becomes a member of org first, with role.
func (e *testEnv) mustAppClient(t *testing.T, email string, org kv.ID, env kv.Environment, role kv.Role) *appClient {
	t.Helper()
	ctx := context.Background()
	if role != "" {
		if _, err := e.db.AddMember(ctx, org, email, role); err != nil && kv.ErrorCode(err) != kv.ECONFLICT {
			t.Fatal(err)
		}
	}
	code, err := e.db.RequestSignInCode(ctx, email, "")
	if err != nil || !code.Send {
		t.Fatalf("sign-in code for %s: %+v %v", email, code, err)
	}
	start, err := e.db.SignIn(ctx, kv.SignInInput{Email: email, Code: code.Code, UserAgent: "test", IP: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	auth, err := e.db.ChooseWorkspace(ctx, kv.WorkspaceInput{Token: start.Token, OrgID: org, Environment: env})
	if err != nil {
		t.Fatal(err)
	}
	return &appClient{e: e, cookie: start.Token, csrf: auth.Session.CSRF, hc: &http.Client{
		Timeout:       60 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

func (u *appClient) send(t *testing.T, method, path, contentType string, body io.Reader, headers ...string) response {
	t.Helper()
	req, err := http.NewRequest(method, u.e.url+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if u.cookie != "" {
		req.AddCookie(&http.Cookie{Name: app.SessionCookie, Value: u.cookie})
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := u.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{status: resp.StatusCode, body: b, header: resp.Header}
}

func (u *appClient) get(t *testing.T, path string) response {
	t.Helper()
	return u.send(t, "GET", path, "", nil)
}

// post submits a form with the session's CSRF token (unless form sets csrf itself).
func (u *appClient) post(t *testing.T, path string, form url.Values) response {
	t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if _, ok := form["csrf"]; !ok {
		form.Set("csrf", u.csrf)
	}
	return u.send(t, "POST", path, "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
}

// wantPage checks status and that the page says each of want.
func wantPage(t *testing.T, r response, status int, want ...string) string {
	t.Helper()
	page := string(r.body)
	if r.status != status {
		t.Fatalf("status %d, want %d (Location %q):\n%s", r.status, status, r.header.Get("Location"), page)
	}
	for _, w := range want {
		if !strings.Contains(page, w) {
			t.Fatalf("page lacks %q:\n%s", w, page)
		}
	}
	return page
}

func wantRedirect(t *testing.T, r response, prefix string) string {
	t.Helper()
	loc := r.header.Get("Location")
	if r.status != http.StatusSeeOther || !strings.HasPrefix(loc, prefix) {
		t.Fatalf("got %d to %q, want 303 to %s…:\n%s", r.status, loc, prefix, r.body)
	}
	return loc
}

// pollJSON polls a page's status endpoint until done says so (60 s at most).
func pollJSON[T any](t *testing.T, u *appClient, path string, done func(T) bool) T {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		r := u.get(t, path)
		if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
			t.Fatalf("%s: %d %s", path, r.status, r.body)
		}
		var v T
		if err := json.Unmarshal(r.body, &v); err != nil {
			t.Fatal(err)
		}
		if done(v) {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not done after 60 s: %s", path, r.body)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

var studyIDInURL = regexp.MustCompile(`/app/studies/([0-9a-f-]{36})`)

// TestAppStudyLifecycle: a study created from guidance becomes ready, shows its brief,
// design versions and invite link, refines into version 2 with what changed, goes live
// only through the confirmation, and takes a participant link.
func TestAppStudyLifecycle(t *testing.T) {
	e := mustServe(t)
	owner := e.mustAppClient(t, "a@example.com", e.orgA.ID, kv.EnvLive, "")

	wantPage(t, owner.get(t, "/app/studies"), 200, "No studies yet", `href="/app/studies/new"`)
	wantPage(t, owner.get(t, "/app/studies/new"), 200, `name="guidance"`, `enctype="multipart/form-data"`)

	// Empty guidance comes back as the form with the operation's message beside it.
	wantPage(t, owner.post(t, "/app/studies", url.Values{"guidance": {"   "}}), 422, `id="guidance-err"`, `aria-invalid="true"`)

	loc := wantRedirect(t, owner.post(t, "/app/studies", url.Values{"guidance": {"Understand how night-shift nurses plan their week and what breaks their rota."}}), "/app/studies/jobs/")
	// While drafting, the page polls; a draft finished first (a quick engine) is
	// answered with the study itself.
	if first := owner.get(t, loc); first.status != 303 {
		wantPage(t, first, 200, `data-poll="`+loc+`/status"`)
	}
	st := pollJSON(t, owner, loc+"/status", func(s app.AuthoringStatusJSON) bool { return s.Status != kv.AuthoringWorking })
	if st.Status != kv.AuthoringReady || !studyIDInURL.MatchString(st.StudyURL) {
		t.Fatalf("authoring ended %+v", st)
	}
	if got := wantRedirect(t, owner.get(t, loc), "/app/studies/"); got != st.StudyURL {
		t.Fatalf("the finished draft's page sends to %q, want the study %q", got, st.StudyURL)
	}
	studyID := studyIDInURL.FindStringSubmatch(st.StudyURL)[1]
	page := wantPage(t, owner.get(t, st.StudyURL), 200, "Verbatim questions", "Version 1", `class="mode mode-test"`,
		`data-copy="#invite-url"`, `src="data:image/png;base64,`, `href="/app/studies/`+studyID+`/golive"`, `action="/app/studies/`+studyID+`/simulate"`)
	d, err := e.db.FindStudyByID(t.Context(), kv.Partition{Org: e.orgA.ID, Env: kv.EnvLive}, mustID(t, studyID))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page, testBaseURL+"/i/"+d.LinkToken) {
		t.Fatalf("study page lacks its invite URL")
	}
	for _, q := range d.Brief.VerbatimQuestions {
		if !strings.Contains(page, htmlEscape(q)) {
			t.Fatalf("study page lacks verbatim question %q", q)
		}
	}
	wantPage(t, owner.get(t, "/app/studies"), 200, `href="/app/studies/`+studyID+`"`)

	// Refine: a new design version, with what changed from the first.
	loc = wantRedirect(t, owner.post(t, "/app/studies/"+studyID+"/refine", url.Values{"guidance": {"Add a question about handovers. Rename the study to Night Shift Rotas."}}), "/app/studies/jobs/")
	if st := pollJSON(t, owner, strings.SplitN(loc, "?", 2)[0]+"/status", func(s app.AuthoringStatusJSON) bool { return s.Status != kv.AuthoringWorking }); st.Status != kv.AuthoringReady {
		t.Fatalf("refine ended %+v", st)
	}
	wantPage(t, owner.get(t, "/app/studies/"+studyID), 200, "Version 2", "Rename the study to Night Shift Rotas.", "Night Shift Rotas", `class="added"`)

	// Go live: a post without the confirmation only leads to the confirmation page.
	wantRedirect(t, owner.post(t, "/app/studies/"+studyID+"/mode", url.Values{"mode": {"live"}}), "/app/studies/"+studyID+"/golive")
	if d, _ := e.db.FindStudyByID(t.Context(), kv.Partition{Org: e.orgA.ID, Env: kv.EnvLive}, mustID(t, studyID)); d.Mode != kv.ModeTest {
		t.Fatalf("went live without confirmation: %s", d.Mode)
	}
	wantPage(t, owner.get(t, "/app/studies/"+studyID+"/golive"), 200, `name="confirm" value="yes"`, "10 left")
	wantRedirect(t, owner.post(t, "/app/studies/"+studyID+"/mode", url.Values{"mode": {"live"}, "confirm": {"yes"}}), "/app/studies/"+studyID+"?done=live")
	wantPage(t, owner.get(t, "/app/studies/"+studyID+"?done=live"), 200, "The study is live", `class="mode mode-live"`, `value="paused"`)
	// A live study cannot be simulated: the operation's 409, as a page.
	wantPage(t, owner.post(t, "/app/studies/"+studyID+"/simulate", nil), 409, "live")

	// A participant link with context and a note; a reserved key is refused in place.
	wantPage(t, owner.post(t, "/app/studies/"+studyID+"/links", url.Values{"context_key": {"token"}, "context_value": {"x"}, "audience": {"group"}}), 422, `id="context-err"`)
	wantRedirect(t, owner.post(t, "/app/studies/"+studyID+"/links", url.Values{"context_key": {"segment", ""}, "context_value": {"enterprise", ""}, "note": {"Ask about the pilot"}, "audience": {"person"}}), "/app/studies/"+studyID+"?done=link")
	wantPage(t, owner.get(t, "/app/studies/"+studyID), 200, "segment=enterprise", "Ask about the pilot", `<span class="tag">person</span>`)

	// The credits notice: live, live environment, no credits left.
	if _, err := e.db.AddCredits(t.Context(), e.orgA.ID, -10); err != nil {
		t.Fatal(err)
	}
	wantPage(t, owner.get(t, "/app/studies/"+studyID), 200, "Not accepting interviews")
}

func htmlEscape(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;")
	return r.Replace(s)
}

func mustID(t *testing.T, s string) kv.ID {
	t.Helper()
	id, ok := kv.ParseID(s)
	if !ok {
		t.Fatalf("not an id: %q", s)
	}
	return id
}

// TestAppStudyDocuments: documents attach to a new study through the upload operation
// (its type and size rules) and ride along into authoring.
func TestAppStudyDocuments(t *testing.T) {
	e := mustServe(t)
	owner := e.mustAppClient(t, "a@example.com", e.orgA.ID, kv.EnvLive, "")
	ct, body := multipartFile(t, "notes.exe", []byte("MZ"))
	wantPage(t, owner.send(t, "POST", "/app/studies/files", ct, body, "X-CSRF-Token", owner.csrf), 422, `id="file-err"`, "File type not accepted")
	ct, body = multipartFile(t, "plan.txt", []byte("We want to learn how clinics book follow-up visits."))
	loc := wantRedirect(t, owner.send(t, "POST", "/app/studies/files", ct, body, "X-CSRF-Token", owner.csrf), "/app/studies/new?file=")
	first := strings.TrimPrefix(loc, "/app/studies/new?file=")
	ct, body = multipartFile(t, "more.md", []byte("# Also\nHow reminders work."))
	loc = wantRedirect(t, owner.send(t, "POST", "/app/studies/files?file_ids="+first, ct, body, "X-CSRF-Token", owner.csrf), "/app/studies/new?file="+first+"&file=")
	page := wantPage(t, owner.get(t, loc), 200, "plan.txt", "more.md", `name="file_ids" value="`+first+`"`, `action="/app/studies/files?file_ids=`+first+`&amp;file_ids=`)
	_ = page
	// Another organisation cannot see (or use) these files.
	b := e.mustAppClient(t, "b@example.com", e.orgB.ID, kv.EnvLive, "")
	if strings.Contains(string(b.get(t, loc).body), "plan.txt") {
		t.Fatal("another organisation sees the attached file")
	}
	wantPage(t, b.post(t, "/app/studies", url.Values{"guidance": {"Learn about booking."}, "file_ids": {first}}), 422, "No uploaded file with this id")

	jobLoc := wantRedirect(t, owner.post(t, "/app/studies", url.Values{"guidance": {"Learn how clinics book follow-up visits."}, "file_ids": {first}}), "/app/studies/jobs/")
	id, _ := kv.ParseID(strings.TrimPrefix(jobLoc, "/app/studies/jobs/"))
	j, err := e.db.FindJobByID(t.Context(), kv.Partition{Org: e.orgA.ID, Env: kv.EnvLive}, kv.JobAuthoring, id)
	if err != nil || len(j.FileIDs) != 1 || j.FileIDs[0].String() != first {
		t.Fatalf("authoring job %+v %v", j, err)
	}
}

// TestAppSimulation: a simulation started from the study page runs to its end and the
// page's status endpoint carries the transcript as the API does.
func TestAppSimulation(t *testing.T) {
	e := mustServe(t)
	owner := e.mustAppClient(t, "a@example.com", e.orgA.ID, kv.EnvLive, "")
	st := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeTest, plainBrief("Rehearse me", "How do you plan the week?", "What breaks the plan?"))
	wantPage(t, owner.post(t, "/app/studies/"+st.ID.String()+"/simulate", url.Values{"persona": {"A night nurse"}, "max_turns": {"0"}}), 422, `id="turns-err"`, `value="0"`, "A night nurse")
	wantPage(t, owner.post(t, "/app/studies/"+st.ID.String()+"/simulate", url.Values{"max_turns": {"many"}}), 422, `id="turns-err"`)
	loc := wantRedirect(t, owner.post(t, "/app/studies/"+st.ID.String()+"/simulate", url.Values{"persona": {"A night nurse"}, "max_turns": {"12"}}), "/app/simulations/")
	wantPage(t, owner.get(t, loc), 200, `data-kind="simulation"`, `href="/app/studies/`+st.ID.String()+`"`)
	done := pollJSON(t, owner, loc+"/status", func(s research.SimulationStatus) bool {
		return s.Status == kv.SimulationCompleted || s.Status == kv.SimulationFailed
	})
	if done.Status != kv.SimulationCompleted || len(done.Turns) == 0 {
		t.Fatalf("simulation ended %+v", done)
	}
	page := wantPage(t, owner.get(t, loc), 200, "Finished.", `data-poll=""`, htmlEscape(done.Turns[0].Text))
	if got := strings.Count(page, `<li class="msg msg-`); got != len(done.Turns) {
		t.Fatalf("page shows %d turns, the simulation has %d", got, len(done.Turns))
	}
	b := e.mustAppClient(t, "b@example.com", e.orgB.ID, kv.EnvLive, "")
	wantPage(t, b.get(t, loc), 404)
	wantPage(t, b.get(t, loc+"/status"), 404)
}

// mustAuthoringJob records an authoring job in p (not run: a fixture id).
func (e *testEnv) mustAuthoringJob(p kv.Partition) kv.ID {
	e.t.Helper()
	id := kv.NewV4()
	if _, err := e.db.CreateAuthoringJob(context.Background(), kv.AuthoringInput{Partition: p, JobID: id, ThreadID: kv.NewV4(), Guidance: "fixture"}, nil); err != nil {
		e.t.Fatal(err)
	}
	return id
}

// TestStampOf: the hand-written formats match time.Format's.
func TestStampOf(t *testing.T) {
	for _, at := range []time.Time{
		time.Date(2026, 11, 23, 18, 5, 9, 999e6, time.UTC),
		time.Date(999, 1, 2, 0, 0, 0, 0, time.UTC),
		time.Date(2027, 12, 31, 23, 59, 59, 0, time.FixedZone("x", 5*3600)),
	} {
		got := app.StampOf(at)
		u := at.UTC()
		if want := u.Format("2006-01-02T15:04:05Z"); got.ISO != want {
			t.Errorf("ISO %q, want %q", got.ISO, want)
		}
		if want := u.Format("2 Jan 2006, 15:04 UTC"); got.Text != want {
			t.Errorf("Text %q, want %q", got.Text, want)
		}
	}
}

// TestAppAuthoringFailureKeepsTheWords: a refine the engine cannot apply, or a new
// study it refuses, ends on a page that says why and holds what the researcher typed
// in a form ready to send again.
func TestAppAuthoringFailureKeepsTheWords(t *testing.T) {
	e := mustServe(t)
	owner := e.mustAppClient(t, "a@example.com", e.orgA.ID, kv.EnvLive, "")
	st := e.mustStudy(e.orgA.ID, kv.EnvLive, "Bakery rotas")
	typed := "Add a question about flour <prices>, then change objective 1."
	loc := wantRedirect(t, owner.post(t, "/app/studies/"+st.ID.String()+"/refine", url.Values{"guidance": {typed}}), "/app/studies/jobs/")
	job := strings.SplitN(loc, "?", 2)[0]
	if got := pollJSON(t, owner, job+"/status", func(s app.AuthoringStatusJSON) bool { return s.Status != kv.AuthoringWorking }); got.Status != kv.AuthoringFailed {
		t.Fatalf("refine ended %+v", got)
	}
	page := wantPage(t, owner.get(t, loc), 200, `role="alert"`,
		htmlEscape(`Nothing was changed: the built-in engine could not apply "change objective 1" (say what objective 1 should become, as in "change objective 1 to …").`),
		"It understands: ", `action="/app/studies/`+st.ID.String()+`/refine"`, htmlEscape(typed)+"</textarea>", `data-poll=""`)
	if strings.Contains(page, "may not describe a research study") {
		t.Fatal("the page still guesses instead of saying why")
	}
	// The form sends the corrected words as a refine.
	wantRedirect(t, owner.post(t, "/app/studies/"+st.ID.String()+"/refine", url.Values{"guidance": {"change objective 1 to learn how owners plan rotas"}}), "/app/studies/jobs/")

	loc = wantRedirect(t, owner.post(t, "/app/studies", url.Values{"guidance": {"Write me a poem about bread."}}), "/app/studies/jobs/")
	pollJSON(t, owner, loc+"/status", func(s app.AuthoringStatusJSON) bool { return s.Status != kv.AuthoringWorking })
	wantPage(t, owner.get(t, loc), 200, "No study was drafted: it asks for creative writing, not a research study.", "Nothing was saved.",
		`action="/app/studies"`, "Write me a poem about bread.</textarea>")
}
