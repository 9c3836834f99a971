package server

import (
	"bytes"
	"context"
	"encoding/base64"
	stdjson "encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"interviewd/kv"
	"interviewd/server/a2a"
	"interviewd/server/mcp"
	"interviewd/server/pipeline"
	"interviewd/server/research"
)

// The tenancy matrix: every operation of the table × every credential state, over every
// surface of the research pipeline: REST, MCP (both protocol eras through the fast path,
// and the SDK path), A2A skills (the SendMessage fast path for quick skills, the SDK's
// binding for background jobs) and the web app's actions (tenancy_pipeline_test.go).
//
//	own               the object's own organisation and environment: it works
//	other org         404, byte for byte the answer to an object that does not exist
//	other environment the same, for the organisation's other environment
//	missing scope     403 insufficient_scope, for an existing object and a missing one alike
//	revoked, expired  401 with WWW-Authenticate, the same body as an unknown key
//	malformed         401 with WWW-Authenticate
//
// Cases are derived from the table: a field named *_id or *_ids is a reference to an
// object, a path reference must answer 404, the scope comes from Scope, AnyScope and
// ScopeFor. The only thing an operation added later needs is its entry in
// tenancyFixtures (its arguments against the own partition's objects); without one the
// test fails and names it. Every call that reaches its operation is checked to have
// passed every step of the pipeline on its surface (checkResearchPasses).

// tenancyFixture is an operation's arguments against objects of organisation A's live
// environment, and for operations that take no JSON over REST, how to send them.
type tenancyFixture struct {
	args     map[string]any
	restBody func(args map[string]any) (contentType string, body []byte)
	// fresh, for an operation that works once on an object (a delete), gives the own
	// partition's call on each surface arguments naming a new one.
	fresh func(t *testing.T) map[string]any
}

// tenancyWorld is the server, its objects, and a key for every credential state.
type tenancyWorld struct {
	e        *testEnv
	clock    *testClock
	fixtures map[string]tenancyFixture
	ownIDs   []string          // ids of own objects: no other tenant's answer may contain one
	scoped   map[string]string // sorted scope list → key secret (org A, live)
	revoked  string
	expiring string // expires 30 days after creation: the clock is moved past it
	sdk      *mcp.Endpoint
	// agent is the A2A twin of a key (secret → secret): the same organisation,
	// environment and scopes, with agent:run, which A2A asks of every key.
	agent map[string]string
	// app is the web app's principal standing for a key (secret → principal): a real
	// session's, in the key's organisation and environment, with the key's scopes.
	app      map[string]*pipeline.Principal
	sessions map[kv.Partition]kv.SessionAuth // the app's sessions by partition
}

func TestTenancyMatrix(t *testing.T) {
	clock := &testClock{now: time.Now().UTC()}
	passes := &researchPasses{}
	e := mustServe(t, withClock(clock), withResearchTrace(passes.add))
	w := &tenancyWorld{e: e, clock: clock, scoped: map[string]string{}, sdk: e.srv.mcp.NewEndpoint(false),
		agent: map[string]string{}, app: map[string]*pipeline.Principal{}}
	w.build(t)

	ops := e.srv.Operations()
	for _, o := range ops {
		if _, ok := w.fixtures[o.Name]; !ok {
			t.Errorf("operation %s has no tenancy fixture: add its arguments to tenancyWorld.build", o.Name)
		}
	}
	for name := range w.fixtures {
		if !slices.ContainsFunc(ops, func(o *pipeline.Operation) bool { return o.Name == name }) {
			t.Errorf("tenancy fixture %s names no operation of the table", name)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	// The revoked key worked before it was revoked, and the expiring key works now:
	// what follows is revocation and expiry, not keys that never worked.
	if r := w.rest(t, "GET", "/v1/api/me", "Bearer "+w.expiring, "", nil); r.status != 200 {
		t.Fatalf("the expiring key before its expiry: %d %s", r.status, r.body)
	}

	cases := 0
	for _, o := range ops {
		t.Run(o.Name, func(t *testing.T) {
			f := w.fixtures[o.Name]
			cases += w.own(t, o, f)
			cases += w.otherTenant(t, o, f, "OtherOrg", "b_live")
			cases += w.otherTenant(t, o, f, "OtherEnvironment", "a_test")
			cases += w.scope(t, o, f)
			cases += w.credentials(t, o, f, false)
		})
	}
	// Expiry last: the shared clock moves past the expiring key's expiry.
	clock.Advance(31 * 24 * time.Hour)
	for _, o := range ops {
		t.Run(o.Name, func(t *testing.T) {
			cases += w.credentials(t, o, w.fixtures[o.Name], true)
		})
	}
	// No surface may skip a step: every call that reached its operation, on every
	// surface, passed the whole pipeline.
	for _, problem := range checkResearchPasses(passes.all(), ops) {
		t.Error(problem)
	}
	t.Logf("%d operations, %d cases over %d surfaces", len(ops), cases, len(tenancySurfaces))
}

// build creates organisation A's objects (through the API where a job must run) and
// the keys of every credential state.
func (w *tenancyWorld) build(t *testing.T) {
	e := w.e
	a := e.orgA.ID
	study := e.studyWith(a, kv.EnvLive, kv.ModeTest, plainBrief("Tenancy", "What did you plan this week?", "What got in the way?"))
	goLive := e.studyWith(a, kv.EnvLive, kv.ModeTest, plainBrief("Go live", "What did you plan?"))
	exported := e.studyWith(a, kv.EnvLive, kv.ModeLive, plainBrief("Exported", "What did you plan?"))

	p := e.participant(e.linkFor(study, "group", map[string]string{"segment": "a"}, "note"))
	p.open()
	p.mustSay("We plan on Sundays, together.")
	ivs := e.interviewsOf(study)
	if len(ivs) != 1 {
		t.Fatalf("%d interviews, want the participant's one", len(ivs))
	}
	notes := w.annotationFixtures(t, study, ivs[0])

	fileContent := []byte("Notes: people plan on Sundays.")
	up := w.rest(t, "POST", "/v1/api/files", "Bearer "+e.keys["a_live"], "", func() (string, []byte) {
		return uploadBody(t, "notes.txt", fileContent)
	})
	var file research.FileHandle
	mustJSON(t, up, &file)

	authoring := w.mustJob(t, "POST", "/v1/api/studies", `{"guidance":"Learn how teams plan."}`, "/v1/api/studies/jobs/", "ready")
	simulation := w.mustJob(t, "POST", "/v1/api/studies/"+study.ID.String()+":simulate", `{"max_turns":1}`, "/v1/api/simulations/", "completed")
	export := w.mustJob(t, "POST", "/v1/api/exports", `{"study_id":"`+exported.ID.String()+`"}`, "/v1/api/exports/", "completed")
	analysed := w.mustJob(t, "POST", "/v1/api/studies/"+exported.ID.String()+"/analysis", `{}`, "/v1/api/analyses/", "completed")

	w.ownIDs = []string{study.ID.String(), goLive.ID.String(), exported.ID.String(), ivs[0].ID.String(), file.FileID.String(),
		authoring, simulation, export, analysed, study.LinkToken, goLive.LinkToken, exported.LinkToken, p.session, kv.LinkIDOf(p.token).String()}

	upload := func(args map[string]any) (string, []byte) {
		raw, _ := base64.StdEncoding.DecodeString(args["content_base64"].(string))
		return uploadBody(t, args["filename"].(string), raw)
	}
	w.fixtures = map[string]tenancyFixture{
		"whoami":               {args: map[string]any{}},
		"list_studies":         {args: map[string]any{"limit": 20}},
		"get_study":            {args: map[string]any{"study_id": study.ID.String()}},
		"create_study":         {args: map[string]any{"guidance": "Learn how teams plan.", "file_ids": []any{file.FileID.String()}}},
		"get_authoring_status": {args: map[string]any{"job_id": authoring}},
		"refine_study":         {args: map[string]any{"study_id": study.ID.String(), "guidance": "Ask about tools too.", "file_ids": []any{file.FileID.String()}}},
		"update_study_brief": {args: map[string]any{"study_id": study.ID.String(), "title": "Tenancy, edited", "objectives": []any{"Learn how weeks are planned"},
			"pre_interview_questions": []any{}, "verbatim_questions": []any{"What did you plan this week?", "What got in the way?"}, "estimated_duration_minutes": 20}},
		"get_participant_settings": {args: map[string]any{"study_id": study.ID.String()}},
		"update_participant_settings": {args: map[string]any{"study_id": study.ID.String(), "consent_text": "I agree to take part.", "completion_code": true,
			"completion_redirect_url": "https://panel.example/done?cc={completion_code}"}},
		"set_study_mode":           {args: map[string]any{"study_id": goLive.ID.String(), "mode": "live"}},
		"upload_file":              {args: map[string]any{"filename": "notes.txt", "content_base64": base64.StdEncoding.EncodeToString(fileContent)}, restBody: upload},
		"start_export":             {args: map[string]any{"study_id": exported.ID.String()}},
		"get_export_status":        {args: map[string]any{"job_id": export}},
		"get_export_download":      {args: map[string]any{"job_id": export}},
		"create_participant_link":  {args: map[string]any{"study_id": study.ID.String(), "context": map[string]any{"segment": "b"}, "audience": "person", "note": "n"}},
		"list_interviews":          {args: map[string]any{"study_id": study.ID.String(), "limit": 20}},
		"list_participant_links":   {args: map[string]any{"study_id": study.ID.String()}},
		"update_participant_link":  {args: map[string]any{"study_id": study.ID.String(), "link_id": kv.LinkIDOf(p.token).String(), "label": "Tenancy"}},
		"create_participant_links": {args: map[string]any{"study_id": study.ID.String(), "csv": "label,segment\nTenancy,c\n"}},
		"get_study_quota":          {args: map[string]any{"study_id": study.ID.String()}},
		"set_study_quota":          {args: map[string]any{"study_id": study.ID.String(), "quota": 30}},
		"get_interview":            {args: map[string]any{"interview_id": ivs[0].ID.String()}},
		"get_interview_link":       {args: map[string]any{"study_id": study.ID.String()}},
		"simulate_study":           {args: map[string]any{"study_id": study.ID.String(), "max_turns": 1}},
		"get_simulation_status":    {args: map[string]any{"job_id": simulation}},
		"start_analysis":           {args: map[string]any{"study_id": exported.ID.String()}},
		"get_analysis_status":      {args: map[string]any{"job_id": analysed}},
		"get_analysis":             {args: map[string]any{"study_id": exported.ID.String()}},
	}
	for name, f := range notes {
		w.fixtures[name] = f
	}

	ctx := context.Background()
	k, secret, err := e.db.CreateKey(ctx, kv.KeyInput{OrgID: a, Name: "revoked", Environment: kv.EnvLive, Scopes: kv.AllScopes})
	if err != nil {
		t.Fatal(err)
	}
	if r := w.rest(t, "GET", "/v1/api/me", "Bearer "+secret, "", nil); r.status != 200 {
		t.Fatalf("the key to revoke, before revocation: %d %s", r.status, r.body)
	}
	if _, err := e.db.RevokeKey(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	w.revoked = secret
	if _, w.expiring, err = e.db.CreateKey(ctx, kv.KeyInput{OrgID: a, Name: "expiring", Environment: kv.EnvLive, Scopes: kv.AllScopes, ExpiresDays: 30}); err != nil {
		t.Fatal(err)
	}
	w.twins(t)
}

// mustJob starts a job through REST with organisation A's live key and polls it until
// its status is want.
func (w *tenancyWorld) mustJob(t *testing.T, method, path, body, statusPath, want string) string {
	t.Helper()
	r := w.rest(t, method, path, "Bearer "+w.e.keys["a_live"], body, nil)
	var handle struct {
		JobID string `json:"job_id"`
	}
	mustJSON(t, r, &handle)
	if r.status != 202 || handle.JobID == "" {
		t.Fatalf("%s %s: %d %s", method, path, r.status, r.body)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		r := w.rest(t, "GET", statusPath+handle.JobID, "Bearer "+w.e.keys["a_live"], "", nil)
		var st struct {
			Status string `json:"status"`
		}
		mustJSON(t, r, &st)
		switch {
		case st.Status == want:
			return handle.JobID
		case st.Status == "failed" || r.status != 200:
			t.Fatalf("job %s: %d %s", path, r.status, r.body)
		case time.Now().After(deadline):
			t.Fatalf("job %s not %s within 60 s: %s", path, want, r.body)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func uploadBody(t *testing.T, filename string, content []byte) (string, []byte) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	part, err := mw.CreateFormFile("file", filename)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = part.Write(content)
	_ = mw.Close()
	return mw.FormDataContentType(), buf.Bytes()
}

func mustJSON(t *testing.T, r tenancyAnswer, v any) {
	t.Helper()
	if err := stdjson.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %d %s: %v", r.status, r.body, err)
	}
}

// tenancyAnswer is one surface's answer, reduced to what the matrix asserts.
type tenancyAnswer struct {
	status int // HTTP status
	header http.Header
	body   []byte
	// ok: the operation succeeded (REST 2xx; MCP a result without isError). code: the
	// error code (REST body, or the MCP result's structuredContent) when it did not.
	ok   bool
	code string
}

// tenancySurface sends one operation with one Authorization value ("" for none).
type tenancySurface struct {
	name string
	// pipeline names the research surface its calls run on (researchPass.surface).
	pipeline string
	// inBand: refusals of the operation are answered inside a 200 (an MCP tool result,
	// an A2A task or JSON-RPC error, the app's page), so only their code is compared.
	inBand bool
	// challenge is the WWW-Authenticate value of a 401 (with error="invalid_token" added
	// when a credential was sent); nil for a surface without bearer credentials (the
	// app: its sessions have their own tests).
	challenge string
	send      func(w *tenancyWorld, t *testing.T, o *pipeline.Operation, f tenancyFixture, auth string, args map[string]any, idem string) tenancyAnswer
}

func resourceChallenge(resource string) string {
	return `Bearer resource_metadata="` + testBaseURL + `/.well-known/oauth-protected-resource` + resource + `"`
}

var tenancySurfaces = []tenancySurface{
	{name: "REST", pipeline: "rest", challenge: resourceChallenge(pipeline.ResourceAPI), send: (*tenancyWorld).sendREST},
	{name: "MCP-" + eraLegacy, pipeline: "mcp_tool", inBand: true, challenge: resourceChallenge(pipeline.ResourceMCP),
		send: func(w *tenancyWorld, t *testing.T, o *pipeline.Operation, _ tenancyFixture, auth string, args map[string]any, _ string) tenancyAnswer {
			return w.sendMCP(t, o, auth, args, eraLegacy)
		}},
	{name: "MCP-" + eraModern, pipeline: "mcp_tool", inBand: true, challenge: resourceChallenge(pipeline.ResourceMCP),
		send: func(w *tenancyWorld, t *testing.T, o *pipeline.Operation, _ tenancyFixture, auth string, args map[string]any, _ string) tenancyAnswer {
			return w.sendMCP(t, o, auth, args, eraModern)
		}},
	{name: "MCP-SDK", pipeline: "mcp_tool", inBand: true, challenge: resourceChallenge(pipeline.ResourceMCP),
		send: func(w *tenancyWorld, t *testing.T, o *pipeline.Operation, _ tenancyFixture, auth string, args map[string]any, _ string) tenancyAnswer {
			return w.sendMCPSDK(t, o, auth, args)
		}},
	{name: "A2A", pipeline: "a2a_skill", inBand: true, challenge: `Bearer realm="` + testBaseURL + a2a.Resource + `", scope="` + kv.ScopeAgentRun + `"`,
		send: (*tenancyWorld).sendA2A},
	{name: "App", pipeline: "app_action", inBand: true, send: (*tenancyWorld).sendApp},
}

// rest sends one request over the socket. body, when mkBody is nil, is JSON.
func (w *tenancyWorld) rest(t *testing.T, method, path, auth, body string, mkBody func() (string, []byte), headers ...string) tenancyAnswer {
	t.Helper()
	var rd io.Reader
	ct := ""
	switch {
	case mkBody != nil:
		var raw []byte
		ct, raw = mkBody()
		rd = bytes.NewReader(raw)
	case body != "":
		ct, rd = "application/json", strings.NewReader(body)
	}
	req, err := http.NewRequest(method, w.e.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	a := tenancyAnswer{status: resp.StatusCode, header: resp.Header, body: raw, ok: resp.StatusCode/100 == 2}
	if !a.ok {
		var eb struct {
			Code string `json:"code"`
		}
		_ = stdjson.Unmarshal(raw, &eb)
		a.code = eb.Code
		if resp.StatusCode == 422 {
			a.code = "validation_error"
		}
	}
	return a
}

// sendREST sends the operation over REST; idem, when set and the operation takes one,
// is its Idempotency-Key (MCP has no equivalent).
func (w *tenancyWorld) sendREST(t *testing.T, o *pipeline.Operation, f tenancyFixture, auth string, args map[string]any, idem string) tenancyAnswer {
	t.Helper()
	path, body := restRequest(o, args)
	var mk func() (string, []byte)
	if o.RESTBind != nil {
		if f.restBody == nil {
			t.Fatalf("operation %s takes no JSON over REST: its tenancy fixture needs restBody", o.Name)
		}
		mk = func() (string, []byte) { return f.restBody(args) }
	}
	var headers []string
	if idem != "" && o.Idempotent {
		headers = []string{"Idempotency-Key", idem}
	}
	return w.rest(t, o.Method, path, auth, body, mk, headers...)
}

// toolCall is a tools/call of either era, as a client sends it by hand.
func toolCall(o *pipeline.Operation, args map[string]any, era string) (string, []string) {
	rawArgs, _ := stdjson.Marshal(args)
	headers := []string{"Accept", acceptBoth, "Mcp-Protocol-Version", era}
	meta := ""
	if era == eraModern {
		headers = append(headers, "Mcp-Method", "tools/call", "Mcp-Name", o.Name)
		meta = "," + modernMeta
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":%q,"arguments":%s%s}}`, o.Name, rawArgs, meta), headers
}

func (w *tenancyWorld) sendMCP(t *testing.T, o *pipeline.Operation, auth string, args map[string]any, era string) tenancyAnswer {
	t.Helper()
	body, headers := toolCall(o, args, era)
	req, err := http.NewRequest("POST", w.e.url+"/v1/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return mcpAnswer(t, resp.StatusCode, resp.Header, raw)
}

// sendMCPSDK sends the legacy-era call to an endpoint without the fast path, so the
// SDK answers it: both ways to a tool must keep tenants apart.
func (w *tenancyWorld) sendMCPSDK(t *testing.T, o *pipeline.Operation, auth string, args map[string]any) tenancyAnswer {
	t.Helper()
	body, headers := toolCall(o, args, eraLegacy)
	var req fasthttp.Request
	req.Header.SetMethod("POST")
	req.SetRequestURI("/v1/mcp")
	req.Header.SetContentType("application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	req.SetBodyString(body)
	var c fasthttp.RequestCtx
	c.Init(&req, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}, nil)
	w.sdk.Serve(&c)
	h := http.Header{}
	for k, v := range c.Response.Header.All() {
		h.Add(string(k), string(v))
	}
	return mcpAnswer(t, c.Response.StatusCode(), h, bytes.Clone(c.Response.Body()))
}

func mcpAnswer(t *testing.T, status int, h http.Header, raw []byte) tenancyAnswer {
	t.Helper()
	a := tenancyAnswer{status: status, header: h, body: raw}
	if status != 200 {
		var eb struct {
			Code string `json:"code"`
		}
		_ = stdjson.Unmarshal(raw, &eb)
		a.code = eb.Code
		return a
	}
	var msg struct {
		Result *struct {
			IsError           bool           `json:"isError"`
			StructuredContent map[string]any `json:"structuredContent"`
		} `json:"result"`
		Error any `json:"error"`
	}
	if err := stdjson.Unmarshal(raw, &msg); err != nil || msg.Result == nil {
		t.Fatalf("MCP answered %d without a tool result: %s", status, raw)
	}
	a.ok = !msg.Result.IsError
	if !a.ok {
		a.code, _ = msg.Result.StructuredContent["code"].(string)
	}
	return a
}

// awaitSimulationSlot waits until organisation A holds fewer simulations than its
// limit, so the next one is admitted.
func (w *tenancyWorld) awaitSimulationSlot(t *testing.T) {
	t.Helper()
	org, limit := w.e.orgA.ID, w.e.runner.SimulationLimit()
	for deadline := time.Now().Add(3 * time.Minute); w.e.runner.SimulationsHeld(org) >= limit; {
		if time.Now().After(deadline) {
			t.Fatalf("organisation A still holds %d simulations after 3 minutes", w.e.runner.SimulationsHeld(org))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// own: organisation A's live key with every scope, on A's live objects, succeeds. Over
// REST an idempotent operation carries the Idempotency-Key (over A2A, the messageId)
// the other tenants then reuse: their requests must not replay A's answer.
func (w *tenancyWorld) own(t *testing.T, o *pipeline.Operation, f tenancyFixture) int {
	for _, s := range tenancySurfaces {
		args := f.args
		if f.fresh != nil {
			args = f.fresh(t)
		}
		if o.Name == "simulate_study" {
			// Each surface starts one simulation and the organisation may hold three
			// at once: wait until an earlier one has finished (slowly on a loaded
			// machine). The call is not sent early and retried: an A2A message refused
			// for the limit is a failed task its messageId replays.
			w.awaitSimulationSlot(t)
		}
		a := s.send(w, t, o, f, "Bearer "+w.e.keys["a_live"], args, tenancyIdemKey(o))
		if !a.ok || (!s.inBand && a.status != o.Status) {
			t.Errorf("OK_Own/%s: %d %s, want %d", s.name, a.status, a.body, o.Status)
		}
		// Whatever A's answers name (new jobs, studies, files) is A's too.
		for _, id := range uuidPattern.FindAllString(string(a.body), -1) {
			if id != w.e.orgA.ID.String() && !slices.Contains(w.ownIDs, id) {
				w.ownIDs = append(w.ownIDs, id)
			}
		}
	}
	return len(tenancySurfaces)
}

// tenancyIdemKey is the Idempotency-Key organisation A uses for o, and other tenants
// reuse with the same body.
func tenancyIdemKey(o *pipeline.Operation) string { return "tenancy-" + o.Name }

// refFields are the operation's fields that name objects, by the API's naming rule
// (study_id, job_id, interview_id, file_ids). path says whether one is in the path;
// filter whether all are query filters (a list narrowed to another tenant's study is
// the list narrowed to a study that does not exist: empty, not refused).
func refFields(o *pipeline.Operation) (names []string, path, filter bool) {
	filter = true
	for _, fp := range o.Plan.Fields {
		if strings.HasSuffix(fp.Name, "_id") || strings.HasSuffix(fp.Name, "_ids") {
			names = append(names, fp.Name)
			path = path || fp.Src == pipeline.SrcPath
			filter = filter && fp.Src == pipeline.SrcQuery
		}
	}
	return names, path, filter && len(names) > 0
}

// missingLike returns an id that names nothing, of the same UUID version as ref.
func missingLike(ref string) string {
	id, ok := kv.ParseID(ref)
	fresh := kv.NewV4()
	if ok {
		fresh[6] = id[6]&0xf0 | fresh[6]&0x0f
	}
	return fresh.String()
}

// withMissing replaces every reference in args by an id that names nothing, and
// returns the ids it replaced and put in.
func withMissing(args map[string]any, refs []string) (map[string]any, []string) {
	out := map[string]any{}
	var ids []string
	for k, v := range args {
		out[k] = v
	}
	for _, name := range refs {
		switch v := args[name].(type) {
		case string:
			m := missingLike(v)
			out[name], ids = m, append(ids, v, m)
		case []any:
			list := make([]any, len(v))
			for i, item := range v {
				m := missingLike(item.(string))
				list[i], ids = m, append(ids, item.(string), m)
			}
			out[name] = list
		}
	}
	return out, ids
}

var uuidPattern = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

var requestIDPattern = regexp.MustCompile(`req_[0-9a-f]+_[0-9a-z]+`)

// normalised is an answer's body with what may differ between two requests for the
// same thing removed: the request id, and the ids the request itself named.
func normalised(a tenancyAnswer, sent []string) string {
	body := requestIDPattern.ReplaceAllString(string(a.body), "{request_id}")
	for _, id := range sent {
		body = strings.ReplaceAll(body, id, "{sent}")
	}
	return body
}

// otherTenant: another organisation's key (or A's other environment's) on A's objects
// answers exactly what it answers for objects that do not exist, and no answer names
// any of A's live objects.
func (w *tenancyWorld) otherTenant(t *testing.T, o *pipeline.Operation, f tenancyFixture, name, key string) int {
	refs, inPath, filter := refFields(o)
	missing, sent := withMissing(f.args, refs)
	for _, s := range tenancySurfaces {
		auth := "Bearer " + w.e.keys[key]
		theirs := s.send(w, t, o, f, auth, f.args, tenancyIdemKey(o))
		body := normalised(theirs, sent)
		for _, id := range w.ownIDs {
			if strings.Contains(body, id) {
				t.Errorf("Err%s/%s: the answer names own object %s: %s", name, s.name, id, theirs.body)
			}
		}
		if len(refs) == 0 {
			if !theirs.ok {
				t.Errorf("OK_%s/%s: an operation naming no object failed: %d %s", name, s.name, theirs.status, theirs.body)
			}
			continue
		}
		absent := s.send(w, t, o, f, auth, missing, tenancyIdemKey(o)+"-absent")
		if theirs.ok && !filter {
			t.Errorf("Err%s/%s: another tenant's object was accepted: %d %s", name, s.name, theirs.status, theirs.body)
		}
		if theirs.status != absent.status || body != normalised(absent, sent) {
			t.Errorf("Err%s/%s: another tenant's object and a missing one answer differently:\n%d %s\n%d %s",
				name, s.name, theirs.status, theirs.body, absent.status, absent.body)
		}
		if inPath && !s.inBand && theirs.status != 404 && theirs.code != "test_environment" {
			t.Errorf("Err%s/%s: %d, want 404: %s", name, s.name, theirs.status, theirs.body)
		}
		if inPath && s.inBand && theirs.code != "not_found" && theirs.code != "test_environment" {
			t.Errorf("Err%s/%s: code %q, want not_found: %s", name, s.name, theirs.code, theirs.body)
		}
	}
	return 2 * len(tenancySurfaces)
}

// scopeKey returns organisation A's live key holding every scope but those named.
func (w *tenancyWorld) scopeKey(t *testing.T, without ...string) (string, []string) {
	var scopes []string
	for _, s := range kv.AllScopes {
		if !slices.Contains(without, s) {
			scopes = append(scopes, s)
		}
	}
	sort.Strings(scopes)
	name := strings.Join(scopes, ",")
	if secret, ok := w.scoped[name]; ok {
		return secret, scopes
	}
	_, secret, err := w.e.db.CreateKey(context.Background(), kv.KeyInput{OrgID: w.e.orgA.ID, Name: "scoped", Environment: kv.EnvLive, Scopes: scopes})
	if err != nil {
		t.Fatal(err)
	}
	w.scoped[name] = secret
	w.twin(t, secret, w.e.orgA.ID, kv.EnvLive, scopes)
	return secret, scopes
}

// scope: a key lacking the scope the operation needs is refused with 403 before
// anything about the object is known: the same answer for an existing object and a
// missing one. The scopes come from the table: Scope, AnyScope, and ScopeFor on the
// fixture's input (setting mode live needs studies:golive even with studies:write).
func (w *tenancyWorld) scope(t *testing.T, o *pipeline.Operation, f tenancyFixture) int {
	gates := [][]string{append([]string{o.Scope}, o.AnyScope...)}
	if o.ScopeFor != nil {
		in := o.NewInput()
		raw, _ := stdjson.Marshal(f.args)
		if err := o.Plan.BindArgs(in, raw); err != nil {
			t.Fatalf("fixture arguments of %s do not bind: %v", o.Name, err)
		}
		if need := o.RequiredScope(in); need != "" && !slices.Contains(gates[0], need) {
			gates = append(gates, []string{need})
		}
	}
	refs, _, _ := refFields(o)
	missing, sent := withMissing(f.args, refs)
	n := 0
	for _, without := range gates {
		if len(without) == 1 && without[0] == "" {
			// No scope needed: a key with the fewest scopes still works.
			secret, _ := w.scopeKey(t, kv.AllScopes[1:]...)
			for _, s := range tenancySurfaces {
				if a := s.send(w, t, o, f, "Bearer "+secret, f.args, ""); !a.ok {
					t.Errorf("OK_NoScopeNeeded/%s: %d %s", s.name, a.status, a.body)
				}
				n++
			}
			continue
		}
		secret, held := w.scopeKey(t, without...)
		for _, s := range tenancySurfaces {
			mine := s.send(w, t, o, f, "Bearer "+secret, f.args, "")
			absent := s.send(w, t, o, f, "Bearer "+secret, missing, "")
			n += 2
			if mine.code != "insufficient_scope" || (!s.inBand && mine.status != 403) {
				t.Errorf("ErrScopeMissing(%v)/%s: holding %v: %d %s", without, s.name, held, mine.status, mine.body)
				continue
			}
			if !s.inBand && !strings.HasPrefix(mine.header.Get("WWW-Authenticate"), `Bearer error="insufficient_scope"`) {
				t.Errorf("ErrScopeMissing(%v)/%s: WWW-Authenticate %q", without, s.name, mine.header.Get("WWW-Authenticate"))
			}
			if mine.status != absent.status || normalised(mine, sent) != normalised(absent, sent) {
				t.Errorf("ErrScopeMissing(%v)/%s: an existing object and a missing one answer differently:\n%s\n%s", without, s.name, mine.body, absent.body)
			}
		}
	}
	return n
}

// credentials: every bad credential is 401 with a challenge naming the surface; a
// revoked key, an expired key and a key that never existed are indistinguishable.
// With expired set, only the expiring key is tried (the clock has moved past it).
func (w *tenancyWorld) credentials(t *testing.T, o *pipeline.Operation, f tenancyFixture, expired bool) int {
	good := w.e.keys["a_live"]
	last := "A"
	if strings.HasSuffix(good, "A") {
		last = "B"
	}
	unknown := good[:len(good)-1] + last // well formed, never issued
	cases := []struct {
		name, auth, code string
		sameAsUnknown    bool
	}{
		{"Revoked", "Bearer " + w.revoked, "invalid_token", true},
		{"UnknownKey", "Bearer " + unknown, "invalid_token", true},
		{"Missing", "", "missing_token", false},
		{"NotBearer", "Basic dXNlcjpwYXNz", "invalid_token", false},
		{"EmptyBearer", "Bearer", "invalid_token", false},
		{"Truncated", "Bearer " + good[:20], "invalid_token", false},
		{"OtherEnvPrefix", "Bearer jsk_test_" + strings.TrimPrefix(good, "jsk_live_"), "invalid_token", false},
		{"Padded", "Bearer " + good + "x", "invalid_token", false},
		{"OAuthShaped", "Bearer svca_" + strings.Repeat("x", 40), "invalid_token", false},
		{"Garbage", "Bearer !!!", "invalid_token", false},
	}
	if expired {
		cases = cases[:2]
		cases[0] = struct {
			name, auth, code string
			sameAsUnknown    bool
		}{"Expired", "Bearer " + w.expiring, "invalid_token", true}
	}
	n := 0
	for _, s := range tenancySurfaces {
		if s.challenge == "" {
			continue
		}
		challenge := s.challenge
		var unknownBody string
		for _, c := range cases {
			a := s.send(w, t, o, f, c.auth, f.args, "")
			n++
			if a.status != 401 || a.code != c.code {
				t.Errorf("ErrCredential%s/%s: %d %s, want 401 %s", c.name, s.name, a.status, a.body, c.code)
				continue
			}
			want := challenge
			if c.auth != "" {
				want += `, error="invalid_token"`
			}
			if s.pipeline == "mcp_tool" { // the scopes a connection asks for (mcp/scope.go)
				want += `, scope="` + mcp.DefaultScope() + `"`
			}
			if got := a.header.Get("WWW-Authenticate"); got != want {
				t.Errorf("ErrCredential%s/%s: WWW-Authenticate %q, want %q", c.name, s.name, got, want)
			}
			if c.sameAsUnknown {
				body := normalised(a, nil)
				if unknownBody == "" {
					unknownBody = body
				} else if body != unknownBody {
					t.Errorf("ErrCredential%s/%s: answers differently from a key that never existed:\n%s\n%s", c.name, s.name, body, unknownBody)
				}
			}
		}
	}
	return n
}
