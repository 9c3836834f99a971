package server

import (
	stdjson "encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"interviewd/kv"
	"interviewd/server/pipeline"
	"interviewd/server/research"
)

// briefBody is a PUT brief body: a valid brief, with fields replaced or removed
// (a nil value removes the field).
func briefBody(t *testing.T, change map[string]any) string {
	t.Helper()
	body := map[string]any{
		"title":                      "Weekly planning",
		"objectives":                 []any{"Learn how teams plan their week"},
		"pre_interview_questions":    []any{"Do you plan for a team?"},
		"verbatim_questions":         []any{"Tell me about the last week you planned.", "What got in the way?"},
		"estimated_duration_minutes": 20,
	}
	for k, v := range change {
		if v == nil {
			delete(body, k)
			continue
		}
		body[k] = v
	}
	raw, err := stdjson.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// validationItems decodes a 422 body's items.
func validationItems(t *testing.T, r response) []kv.FieldError {
	t.Helper()
	var body struct {
		Detail []kv.FieldError `json:"detail"`
	}
	r.json(t, &body)
	return body.Detail
}

// TestRESTStudyBriefPut: the whole brief replaces the current one as the next design
// version; the answer is the study as GET returns it; every refusal names its field.
func TestRESTStudyBriefPut(t *testing.T) {
	e := mustServe(t)
	p := kv.Partition{Org: e.orgA.ID, Env: kv.EnvLive}
	st := e.mustStudy(e.orgA.ID, kv.EnvLive, "Before")
	path := "/v1/api/studies/" + st.ID.String() + "/brief"

	r := e.do("PUT", path, "a_live", briefBody(t, map[string]any{"title": "  Weekly planning  ",
		"verbatim_questions": []any{"Tell me about the last week you planned.\n", " What got in the way?"}}))
	if r.status != 200 {
		t.Fatalf("PUT brief: %d %s", r.status, r.body)
	}
	var d research.StudyDetail
	r.json(t, &d)
	if d.Name != "Weekly planning" || d.Brief == nil || *d.Brief.Title != "Weekly planning" || d.Brief.VerbatimQuestions[1] != "What got in the way?" ||
		*d.Brief.EstimatedDurationMinutes != 20 || d.ID != st.ID || d.Mode != kv.ModeTest {
		t.Fatalf("answer %s", r.body)
	}
	if got := e.do("GET", "/v1/api/studies/"+st.ID.String(), "a_live", ""); got.status != 200 || string(got.body) != string(r.body) {
		t.Fatalf("GET after PUT differs:\n%s\n%s", got.body, r.body)
	}
	versions, err := e.db.FindBriefVersions(t.Context(), p, st.ID)
	if err != nil || len(versions) != 2 || versions[1].Source != kv.BriefEdited || *versions[0].Brief.Title != "Before" {
		t.Fatalf("versions %+v %v", versions, err)
	}

	t.Run("OK_UnchangedSavesNoVersion", func(t *testing.T) {
		again := e.do("PUT", path, "a_live", briefBody(t, nil))
		if again.status != 200 || string(again.body) != string(r.body) {
			t.Fatalf("same brief again: %d %s", again.status, again.body)
		}
		if vs, _ := e.db.FindBriefVersions(t.Context(), p, st.ID); len(vs) != 2 {
			t.Fatalf("%d versions after an unchanged PUT", len(vs))
		}
	})
	t.Run("OK_IdempotencyKey", func(t *testing.T) {
		body := briefBody(t, map[string]any{"title": "Keyed"})
		first := e.do("PUT", path, "a_live", body, "Idempotency-Key", "brief-1")
		replay := e.do("PUT", path, "a_live", body, "Idempotency-Key", "brief-1")
		if first.status != 200 || replay.status != 200 || replay.header.Get("Idempotent-Replayed") != "true" || string(replay.body) != string(first.body) {
			t.Fatalf("replay: %d %s / %d %q %s", first.status, first.body, replay.status, replay.header.Get("Idempotent-Replayed"), replay.body)
		}
		reused := e.do("PUT", path, "a_live", briefBody(t, map[string]any{"title": "Other"}), "Idempotency-Key", "brief-1")
		if reused.status != 409 || !strings.Contains(string(reused.body), `"code":"idempotency_key_reused"`) {
			t.Fatalf("key reused with another brief: %d %s", reused.status, reused.body)
		}
		if vs, _ := e.db.FindBriefVersions(t.Context(), p, st.ID); len(vs) != 3 {
			t.Fatalf("%d versions after a keyed PUT and its replay, want 3", len(vs))
		}
	})

	other := e.mustStudy(e.orgB.ID, kv.EnvLive, "Theirs")
	e.run(t, append(authCases("PUT", path), []scenario{
		{name: "ErrOtherOrg", method: "PUT", path: "/v1/api/studies/" + other.ID.String() + "/brief", key: "a_live", body: briefBody(t, nil), wantStatus: 404, wantBody: `"code":"not_found"`},
		{name: "ErrOtherOrgKey", method: "PUT", path: path, key: "b_live", body: briefBody(t, nil), wantStatus: 404, wantBody: `"code":"not_found"`},
		{name: "ErrOtherEnvironment", method: "PUT", path: path, key: "a_test", body: briefBody(t, nil), wantStatus: 404},
		{name: "ErrUnknownStudy", method: "PUT", path: "/v1/api/studies/" + kv.NewV4().String() + "/brief", key: "a_live", body: briefBody(t, nil), wantStatus: 404},
		{name: "ErrScopeMissing", method: "PUT", path: path, key: "a_studies_only", body: briefBody(t, nil), wantStatus: 403, wantBody: `"code":"insufficient_scope"`},
		{name: "ErrMethod", method: "POST", path: path, key: "a_live", body: briefBody(t, nil), wantStatus: 405},
	}...))

	bad := func(name string, change map[string]any, want ...kv.FieldError) {
		t.Run(name, func(t *testing.T) {
			before, _ := e.db.FindStudyByID(t.Context(), p, st.ID)
			r := e.do("PUT", path, "a_live", briefBody(t, change))
			if r.status != 422 {
				t.Fatalf("%d %s, want 422", r.status, r.body)
			}
			got := validationItems(t, r)
			if len(got) != len(want) {
				t.Fatalf("items %s, want %d", r.body, len(want))
			}
			for i, w := range want {
				// JSON numbers decode as float64: compare locations as printed.
				if fmt.Sprint(got[i].Loc) != fmt.Sprint(w.Loc) || got[i].Type != w.Type || (w.Msg != "" && got[i].Msg != w.Msg) {
					t.Errorf("item %d: %+v, want %+v", i, got[i], w)
				}
			}
			if after, _ := e.db.FindStudyByID(t.Context(), p, st.ID); after.Version != before.Version {
				t.Fatalf("a refused brief made version %d", after.Version)
			}
		})
	}
	loc := func(parts ...any) []any { return append([]any{"body"}, parts...) }
	bad("ErrTitleMissing", map[string]any{"title": nil}, kv.FieldError{Loc: loc("title"), Type: "missing"})
	bad("ErrTitleNull", map[string]any{"title": stdjson.RawMessage("null")}, kv.FieldError{Loc: loc("title"), Type: "string_type"})
	bad("ErrTitleBlank", map[string]any{"title": "   "}, kv.FieldError{Loc: loc("title"), Type: "string_too_short", Msg: "The title must not be empty."})
	bad("ErrTitleLong", map[string]any{"title": strings.Repeat("t", kv.BriefMaxTitle+1)}, kv.FieldError{Loc: loc("title"), Type: "string_too_long"})
	bad("ErrTitleTwoLines", map[string]any{"title": "One\ntwo"}, kv.FieldError{Loc: loc("title"), Type: "control_character"})
	bad("ErrDurationMissing", map[string]any{"estimated_duration_minutes": nil}, kv.FieldError{Loc: loc("estimated_duration_minutes"), Type: "missing"})
	bad("ErrDurationZero", map[string]any{"estimated_duration_minutes": 0}, kv.FieldError{Loc: loc("estimated_duration_minutes"), Type: "greater_than_equal"})
	bad("ErrDurationLong", map[string]any{"estimated_duration_minutes": kv.BriefMaxDuration + 1}, kv.FieldError{Loc: loc("estimated_duration_minutes"), Type: "less_than_equal"})
	bad("ErrDurationText", map[string]any{"estimated_duration_minutes": "ten"}, kv.FieldError{Loc: loc("estimated_duration_minutes"), Type: "int_type"})
	bad("ErrNoObjectives", map[string]any{"objectives": []any{}}, kv.FieldError{Loc: loc("objectives"), Type: "too_short", Msg: "At least 1 objective is needed."})
	bad("ErrObjectivesNull", map[string]any{"objectives": stdjson.RawMessage("null")}, kv.FieldError{Loc: loc("objectives"), Type: "list_type"})
	bad("ErrScreenerMissing", map[string]any{"pre_interview_questions": nil}, kv.FieldError{Loc: loc("pre_interview_questions"), Type: "missing"})
	bad("ErrNoVerbatim", map[string]any{"verbatim_questions": []any{}}, kv.FieldError{Loc: loc("verbatim_questions"), Type: "too_short"})
	bad("ErrTooManyVerbatim", map[string]any{"verbatim_questions": manyQuestions(kv.BriefMaxQuestions + 1)}, kv.FieldError{Loc: loc("verbatim_questions"), Type: "too_long"})
	bad("ErrVerbatimItemLong", map[string]any{"verbatim_questions": []any{"Fine?", strings.Repeat("q", kv.BriefMaxItem+1)}},
		kv.FieldError{Loc: loc("verbatim_questions", 1), Type: "string_too_long", Msg: "Verbatim question 2 must be at most 1000 characters."})
	bad("ErrScreenerItemBlank", map[string]any{"pre_interview_questions": []any{"Fine?", " "}}, kv.FieldError{Loc: loc("pre_interview_questions", 1), Type: "string_too_short"})
	bad("ErrItemNotText", map[string]any{"objectives": []any{"Fine", 7}}, kv.FieldError{Loc: loc("objectives", 1), Type: "string_type"})
	bad("ErrItemNUL", map[string]any{"objectives": []any{"Fi\x00ne"}}, kv.FieldError{Loc: loc("objectives", 0), Type: "null_character"})
	bad("ErrExtraField", map[string]any{"guidance": "more"}, kv.FieldError{Loc: loc("guidance"), Type: "extra_forbidden"})
	bad("ErrEveryFieldAtOnce", map[string]any{"title": " ", "objectives": []any{}, "verbatim_questions": []any{"", "Fine?"}},
		kv.FieldError{Loc: loc("title"), Type: "string_too_short"}, kv.FieldError{Loc: loc("objectives"), Type: "too_short"},
		kv.FieldError{Loc: loc("verbatim_questions", 0), Type: "string_too_short"})

	t.Run("OK_LiveStudyInterviewsKeepTheirVersion", func(t *testing.T) {
		live := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeLive, plainBrief("Live one", "How do you plan?"))
		early := e.participant(live.LinkToken)
		early.open()
		r := e.do("PUT", "/v1/api/studies/"+live.ID.String()+"/brief", "a_live", briefBody(t, map[string]any{"title": "Live two"}))
		if r.status != 200 || !strings.Contains(string(r.body), `"mode":"live"`) {
			t.Fatalf("PUT on a live study: %d %s", r.status, r.body)
		}
		e.participant(live.LinkToken).open()
		ivs := e.interviewsOf(live)
		if len(ivs) != 2 {
			t.Fatalf("%d interviews", len(ivs))
		}
		byVersion := map[int]int{}
		for _, iv := range ivs {
			byVersion[iv.DesignVersion]++
		}
		if byVersion[1] != 1 || byVersion[2] != 1 {
			t.Fatalf("interviews by design version %v: want one on 1 (started before) and one on 2", byVersion)
		}
	})
	t.Run("ErrClosed", func(t *testing.T) {
		closed := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeClosed, plainBrief("Closed", "Why?"))
		r := e.do("PUT", "/v1/api/studies/"+closed.ID.String()+"/brief", "a_live", briefBody(t, nil))
		if r.status != 409 || !strings.Contains(string(r.body), `"code":"study_closed"`) {
			t.Fatalf("PUT on a closed study: %d %s", r.status, r.body)
		}
		if got, _ := e.db.FindStudyByID(t.Context(), p, closed.ID); got.Version != 1 {
			t.Fatalf("a closed study got version %d", got.Version)
		}
		paused := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModePaused, plainBrief("Paused", "Why?"))
		if r := e.do("PUT", "/v1/api/studies/"+paused.ID.String()+"/brief", "a_live", briefBody(t, nil)); r.status != 200 {
			t.Fatalf("PUT on a paused study: %d %s", r.status, r.body)
		}
	})
}

func manyQuestions(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = "Question " + strings.Repeat("?", i%5+1)
	}
	return out
}

// TestMCPUpdateStudyBrief: the tool is the PUT's twin: the same study in its result,
// the same validation items, the same conflict code.
func TestMCPUpdateStudyBrief(t *testing.T) {
	e := mustServe(t)
	st := e.mustStudy(e.orgA.ID, kv.EnvLive, "Before")
	closed := e.studyWith(e.orgA.ID, kv.EnvLive, kv.ModeClosed, plainBrief("Closed", "Why?"))
	args := func(id kv.ID, change map[string]any) map[string]any {
		var m map[string]any
		if err := stdjson.Unmarshal([]byte(briefBody(t, change)), &m); err != nil {
			t.Fatal(err)
		}
		m["study_id"] = id.String()
		return m
	}
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			cs := e.mustMCP(t, "a_live", era)
			schemas := outputSchemas(t, cs)
			title := "Edited over MCP " + era
			res, sc := callTool(t, cs, "update_study_brief", args(st.ID, map[string]any{"title": title}))
			if res.IsError {
				t.Fatalf("isError: %v", sc)
			}
			mustConform(t, schemas, "update_study_brief", sc)
			rest := e.do("GET", "/v1/api/studies/"+st.ID.String(), "a_live", "")
			if want := restJSON(t, rest); !reflect.DeepEqual(any(sc), want) {
				t.Fatalf("tool result %v differs from GET %v", sc, want)
			}
			if sc["name"] != title {
				t.Fatalf("name %v", sc["name"])
			}

			change := map[string]any{"verbatim_questions": []any{"Fine?", strings.Repeat("q", kv.BriefMaxItem+1)}}
			res, sc = callTool(t, cs, "update_study_brief", args(st.ID, change))
			r := e.do("PUT", "/v1/api/studies/"+st.ID.String()+"/brief", "a_live", briefBody(t, change))
			var restBody map[string]any
			r.json(t, &restBody)
			if !res.IsError || sc["code"] != "validation_error" || r.status != 422 || !reflect.DeepEqual(sc["errors"], restBody["detail"]) {
				t.Fatalf("validation: MCP %v, REST %d %v", sc, r.status, restBody)
			}
			mustConform(t, schemas, "update_study_brief", sc)

			res, sc = callTool(t, cs, "update_study_brief", args(closed.ID, nil))
			if !res.IsError || sc["code"] != "study_closed" {
				t.Fatalf("closed study: %v", sc)
			}
			res, sc = callTool(t, cs, "update_study_brief", args(e.mustStudy(e.orgB.ID, kv.EnvLive, "Theirs").ID, nil))
			if !res.IsError || sc["code"] != "not_found" {
				t.Fatalf("another organisation's study: %v", sc)
			}
		})
	}
}

// TestBriefLimitsDocumented: the bounds the brief's schema documents (OpenAPI and the
// MCP tool alike) are the ones kv.ValidateBrief enforces.
func TestBriefLimitsDocumented(t *testing.T) {
	e := mustServe(t)
	sc := e.srv.app.Op("update_study_brief").Plan.InputSchema(pipeline.SrcPath, pipeline.SrcQuery, pipeline.SrcBody)
	props := sc["properties"].(pipeline.Schema)
	at := func(field string, keys ...string) any {
		var v any = props[field]
		for _, k := range keys {
			v = v.(pipeline.Schema)[k]
		}
		return v
	}
	cases := []struct {
		name      string
		got, want any
	}{
		{"title minLength", at("title", "minLength"), 1},
		{"title maxLength", at("title", "maxLength"), kv.BriefMaxTitle},
		{"objectives minItems", at("objectives", "minItems"), 1},
		{"objectives maxItems", at("objectives", "maxItems"), kv.BriefMaxObjectives},
		{"objective maxLength", at("objectives", "items", "maxLength"), kv.BriefMaxItem},
		{"screener maxItems", at("pre_interview_questions", "maxItems"), kv.BriefMaxQuestions},
		{"screener maxLength", at("pre_interview_questions", "items", "maxLength"), kv.BriefMaxItem},
		{"verbatim minItems", at("verbatim_questions", "minItems"), 1},
		{"verbatim maxItems", at("verbatim_questions", "maxItems"), kv.BriefMaxQuestions},
		{"verbatim maxLength", at("verbatim_questions", "items", "maxLength"), kv.BriefMaxItem},
		{"duration minimum", at("estimated_duration_minutes", "minimum"), kv.BriefMinDuration},
		{"duration maximum", at("estimated_duration_minutes", "maximum"), kv.BriefMaxDuration},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: schema says %v, kv enforces %v", c.name, c.got, c.want)
		}
	}
	if len(sc["required"].([]string)) != 6 { // the study and the five parts of a brief
		t.Fatalf("required %v", sc["required"])
	}
}
