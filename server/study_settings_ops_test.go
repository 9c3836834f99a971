package server

import (
	"reflect"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"interviewd/kv"
	"interviewd/server/research"
)

// TestRESTParticipantSettings: PUT replaces the settings whole and answers them as GET
// does; every refusal names its field; the study's detail keeps exactly its contract
// fields; studies:read may look but not change.
func TestRESTParticipantSettings(t *testing.T) {
	e := mustServe(t)
	st := e.mustStudy(e.orgA.ID, kv.EnvLive, "Settings")
	path := "/v1/api/studies/" + st.ID.String() + "/participant-settings"

	r := e.do("GET", path, "a_live", "")
	want := `{"study_id":"` + st.ID.String() + `","consent_text":null,"welcome_text":null,"thank_you_text":null,"completion_code":false,"completion_redirect_url":null}`
	if r.status != 200 || string(r.body) != want {
		t.Fatalf("GET defaults: %d %s", r.status, r.body)
	}
	body := `{"consent_text":"  I agree to take part.\n","welcome_text":"Hello from Acme.","completion_redirect_url":"https://panel.example/done?cc={completion_code}&pid={interview_id}"}`
	r = e.do("PUT", path, "a_live", body)
	if r.status != 200 {
		t.Fatalf("PUT: %d %s", r.status, r.body)
	}
	var got research.ParticipantSettingsOut
	r.json(t, &got)
	if got.ConsentText == nil || *got.ConsentText != "I agree to take part." || !got.CompletionCode || got.ThankYouText != nil ||
		got.CompletionRedirectURL == nil || *got.CompletionRedirectURL != "https://panel.example/done?cc={completion_code}&pid={interview_id}" {
		t.Fatalf("answer %s", r.body)
	}
	if again := e.do("GET", path, "a_live", ""); again.status != 200 || string(again.body) != string(r.body) {
		t.Fatalf("GET after PUT differs:\n%s\n%s", again.body, r.body)
	}
	detail := e.do("GET", "/v1/api/studies/"+st.ID.String(), "a_live", "")
	var fields map[string]any
	detail.json(t, &fields)
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	if len(keys) != 7 || fields["brief"] == nil || strings.Contains(string(detail.body), "consent") {
		t.Fatalf("study detail grew: %s", detail.body)
	}

	for _, tc := range []struct {
		name, body string
		loc        []any
	}{
		{"ErrHTTPRedirect", `{"completion_redirect_url":"http://panel.example/?c={completion_code}"}`, []any{"body", "completion_redirect_url"}},
		{"ErrUnknownPlaceholder", `{"completion_redirect_url":"https://panel.example/?c={pid}"}`, []any{"body", "completion_redirect_url"}},
		{"ErrConsentTooLong", `{"consent_text":"` + strings.Repeat("a", kv.MaxConsentText+1) + `"}`, []any{"body", "consent_text"}},
		{"ErrExtraField", `{"consent":"yes"}`, []any{"body", "consent"}},
		{"ErrWrongType", `{"completion_code":"yes"}`, []any{"body", "completion_code"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do("PUT", path, "a_live", tc.body)
			items := validationItems(t, r)
			if r.status != 422 || len(items) != 1 || !reflect.DeepEqual(items[0].Loc, tc.loc) {
				t.Fatalf("%d %s", r.status, r.body)
			}
		})
	}
	if again := e.do("GET", path, "a_live", ""); string(again.body) != string(r.body) {
		t.Fatalf("a refused PUT changed the settings: %s", again.body)
	}

	t.Run("ErrScope", func(t *testing.T) {
		if r := e.do("GET", path, "a_studies_only", ""); r.status != 200 {
			t.Fatalf("read with studies:read: %d %s", r.status, r.body)
		}
		if r := e.do("PUT", path, "a_studies_only", `{}`); r.status != 403 || !strings.Contains(string(r.body), "insufficient_scope") {
			t.Fatalf("write with studies:read: %d %s", r.status, r.body)
		}
		if r := e.do("GET", path, "a_links_only", ""); r.status != 403 {
			t.Fatalf("read with links:read: %d %s", r.status, r.body)
		}
	})
	t.Run("ErrOtherOrganisation", func(t *testing.T) {
		if r := e.do("PUT", path, "b_live", `{}`); r.status != 404 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		if r := e.do("GET", path, "a_test", ""); r.status != 404 {
			t.Fatalf("other environment: %d %s", r.status, r.body)
		}
	})
	t.Run("OK_EmptyBodyClears", func(t *testing.T) {
		r := e.do("PUT", path, "a_live", `{}`)
		if r.status != 200 || string(r.body) != want {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
}

// TestMCPAndA2AParticipantSettings: the tool and the skill are the REST operation's
// twins: the same answer, the same validation items.
func TestMCPAndA2AParticipantSettings(t *testing.T) {
	e := mustServe(t)
	st := e.mustStudy(e.orgA.ID, kv.EnvLive, "Settings")
	path := "/v1/api/studies/" + st.ID.String() + "/participant-settings"
	for _, era := range eras {
		t.Run("MCP_"+era, func(t *testing.T) {
			cs := e.mustMCP(t, "a_live", era)
			schemas := outputSchemas(t, cs)
			res, sc := callTool(t, cs, "update_participant_settings", map[string]any{"study_id": st.ID.String(), "thank_you_text": "Thanks, " + era, "completion_code": true})
			if res.IsError {
				t.Fatalf("isError: %v", sc)
			}
			mustConform(t, schemas, "update_participant_settings", sc)
			if want := restJSON(t, e.do("GET", path, "a_live", "")); !reflect.DeepEqual(any(sc), want) {
				t.Fatalf("tool result %v differs from GET %v", sc, want)
			}
			res, sc = callTool(t, cs, "get_participant_settings", map[string]any{"study_id": st.ID.String()})
			if res.IsError || sc["thank_you_text"] != "Thanks, "+era || sc["completion_code"] != true {
				t.Fatalf("get: %v", sc)
			}
			bad := `{"completion_redirect_url":"ftp://panel.example/"}`
			res, sc = callTool(t, cs, "update_participant_settings", map[string]any{"study_id": st.ID.String(), "completion_redirect_url": "ftp://panel.example/"})
			var restBody map[string]any
			e.do("PUT", path, "a_live", bad).json(t, &restBody)
			if !res.IsError || sc["code"] != "validation_error" || !reflect.DeepEqual(sc["errors"], restBody["detail"]) {
				t.Fatalf("validation: MCP %v, REST %v", sc, restBody)
			}
		})
	}
	t.Run("A2A", func(t *testing.T) {
		e.mustKey("agent", e.orgA.ID, kv.EnvLive, allScopes)
		c := e.mustA2A(t, "agent")
		task := mustSend(t, c, skillMessage("update_participant_settings", map[string]any{"study_id": st.ID.String(), "consent_text": "I agree."}), false)
		if task.Status.State != a2a.TaskStateCompleted {
			t.Fatalf("state %s: %+v", task.Status.State, task.Status.Message)
		}
		var got map[string]any
		artifactJSON(t, task, "result", &got)
		if want := restJSON(t, e.do("GET", path, "a_live", "")); jsonText(t, got) != jsonText(t, want) || got["consent_text"] != "I agree." {
			t.Fatalf("artifact %v, REST %v", got, want)
		}
	})
}
