package server

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"interviewd/kv"
	"interviewd/server/pipeline"
)

func TestParticipantLinks(t *testing.T) {
	e := mustServe(t)
	st := e.mustStudy(e.orgA.ID, kv.EnvLive, "Links")
	path := "/v1/api/studies/" + st.ID.String() + "/participant-links"
	other := e.mustStudy(e.orgB.ID, kv.EnvLive, "Other")
	long := func(n int, r string) string { return strings.Repeat(r, n) }
	ctxOf := func(n int) string {
		var parts []string
		for i := 0; i < n; i++ {
			parts = append(parts, fmt.Sprintf(`"k%02d":"v"`, i))
		}
		return `{"context":{` + strings.Join(parts, ",") + `}}`
	}
	cases := append(authCases("POST", path), []scenario{
		{name: "OK_Defaults", method: "POST", path: path, key: "a_live", body: `{}`, wantStatus: 200, check: func(t *testing.T, r response) {
			var got map[string]string
			r.json(t, &got)
			if len(got) != 3 || got["audience"] != "group" || got["mode"] != "test" || !strings.HasPrefix(got["url"], testBaseURL+"/i/") {
				t.Fatalf("link %v", got)
			}
			if tok := strings.TrimPrefix(got["url"], testBaseURL+"/i/"); len(tok) != 22 {
				t.Fatalf("token %q is not 128 bits in base64url", tok)
			}
		}},
		{name: "OK_PersonWithContext", method: "POST", path: path, key: "a_live", wantStatus: 200,
			body: `{"context":{"customer_id":"c-123","plan":"pro"},"audience":"person","note":"  ask about billing  "}`,
			check: func(t *testing.T, r response) {
				var got map[string]string
				r.json(t, &got)
				if got["audience"] != "person" || strings.Contains(got["url"], "c-123") || strings.Contains(got["url"], "pro") {
					t.Fatalf("link %v carries context in its URL", got)
				}
				l, err := e.db.FindLinkByToken(t.Context(), strings.TrimPrefix(got["url"], testBaseURL+"/i/"))
				if err != nil || l.Context["customer_id"] != "c-123" || l.Note != "ask about billing" || l.Audience != "person" {
					t.Fatalf("stored link %+v %v", l, err)
				}
			}},
		{name: "OK_20Keys", method: "POST", path: path, key: "a_live", body: ctxOf(20), wantStatus: 200},
		{name: "Err21Keys", method: "POST", path: path, key: "a_live", body: ctxOf(21), wantStatus: 422, wantBody: `"loc":["body","context"],"msg"`},
		{name: "OK_Key100", method: "POST", path: path, key: "a_live", body: `{"context":{"` + long(100, "é") + `":"v"}}`, wantStatus: 200},
		{name: "ErrKey101", method: "POST", path: path, key: "a_live", body: `{"context":{"` + long(101, "k") + `":"v"}}`, wantStatus: 422, wantBody: `"type":"string_too_long"`},
		{name: "OK_Value2048", method: "POST", path: path, key: "a_live", body: `{"context":{"k":"` + long(2048, "€") + `"}}`, wantStatus: 200},
		{name: "ErrValue2049", method: "POST", path: path, key: "a_live", body: `{"context":{"k":"` + long(2049, "v") + `"}}`, wantStatus: 422, wantBody: `"loc":["body","context","k"]`},
		{name: "ErrReservedFolded", method: "POST", path: path, key: "a_live", body: `{"context":{"ſtudy":"x"}}`, wantStatus: 422, wantBody: `"type":"reserved_key"`},
		{name: "ErrReservedUpper", method: "POST", path: path, key: "a_live", body: `{"context":{"TOKEN":"x"}}`, wantStatus: 422, wantBody: `"reserved_key"`},
		{name: "ErrControlKey", method: "POST", path: path, key: "a_live", body: `{"context":{"a\u0001b":"x"}}`, wantStatus: 422, wantBody: `"control_character"`},
		{name: "ErrNulValue", method: "POST", path: path, key: "a_live", body: `{"context":{"a":"x\u0000"}}`, wantStatus: 422, wantBody: `"null_character"`},
		{name: "ErrValueNotString", method: "POST", path: path, key: "a_live", body: `{"context":{"a":5}}`, wantStatus: 422, wantBody: `{"loc":["body","context","a"],"msg":"Input should be a valid string.","type":"string_type"}`},
		{name: "OK_Note2048Trimmed", method: "POST", path: path, key: "a_live", body: `{"note":"   ` + long(2048, "n") + `\n "}`, wantStatus: 200},
		{name: "ErrNote2049", method: "POST", path: path, key: "a_live", body: `{"note":"` + long(2049, "n") + `"}`, wantStatus: 422, wantBody: `"loc":["body","note"]`},
		{name: "ErrAudience", method: "POST", path: path, key: "a_live", body: `{"audience":"everyone"}`, wantStatus: 422, wantBody: `"type":"enum"`},
		{name: "ErrUnknownField", method: "POST", path: path, key: "a_live", body: `{"contexts":{}}`, wantStatus: 422, wantBody: `{"loc":["body","contexts"],"msg":"Extra inputs are not permitted.","type":"extra_forbidden"}`},
		{name: "ErrBadJSON", method: "POST", path: path, key: "a_live", body: `{"context":`, wantStatus: 422, wantBody: `"type":"json_invalid"`},
		{name: "ErrNoBody", method: "POST", path: path, key: "a_live", wantStatus: 422, wantBody: `"loc":["body"],"msg":"Field required."`},
		{name: "ErrScopeMissing", method: "POST", path: path, key: "a_links_only", body: `{}`, wantStatus: 403},
		{name: "ErrNotFound_OtherOrg", method: "POST", path: "/v1/api/studies/" + other.ID.String() + "/participant-links", key: "a_live", body: `{}`, wantStatus: 404},
	}...)
	e.run(t, cases)
	t.Run("OK_EncodedSizeBoundary", func(t *testing.T) {
		// {"k":"<v>"} is 10 bytes around the value: 16374 value bytes is exactly 16384.
		// Values are capped at 2048 characters, so spread the bytes over keys of 4-byte runes.
		body := func(extra int) string {
			var parts []string
			total := 2 // {}
			for i := 0; i < 2; i++ {
				k := fmt.Sprintf("k%d", i)
				v := strings.Repeat("😀", 1900)
				parts = append(parts, `"`+k+`":"`+v+`"`)
				total += len(k) + 2 + 1 + len(v) + 2
			}
			total++ // the comma between them
			pad := 16384 + extra - total - len(`,"pad":""`)
			parts = append(parts, `"pad":"`+strings.Repeat("a", pad)+`"`)
			return `{"context":{` + strings.Join(parts, ",") + `}}`
		}
		if r := e.do("POST", path, "a_live", body(0)); r.status != 200 {
			t.Fatalf("16384 bytes: %d %s", r.status, r.body)
		}
		if r := e.do("POST", path, "a_live", body(1)); r.status != 422 || !strings.Contains(string(r.body), `"type":"too_large"`) {
			t.Fatalf("16385 bytes: %d %s", r.status, r.body)
		}
	})
}

func linkCount(t *testing.T, e *testEnv, org kv.ID, st kv.Study) int {
	t.Helper()
	links, err := e.db.FindParticipantLinks(t.Context(), kv.Partition{Org: org, Env: kv.EnvLive}, st.ID)
	if err != nil {
		t.Fatal(err)
	}
	return len(links)
}

func TestIdempotency(t *testing.T) {
	clock := &testClock{now: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)}
	e := mustServe(t, withClock(clock))
	st := e.mustStudy(e.orgA.ID, kv.EnvLive, "Idem")
	path := "/v1/api/studies/" + st.ID.String() + "/participant-links"
	body := `{"context":{"a":"1","b":"2"},"audience":"person"}`

	t.Run("OK_ConcurrentIdenticalRequests", func(t *testing.T) {
		before := linkCount(t, e, e.orgA.ID, st)
		var wg sync.WaitGroup
		results := make([]response, 50)
		for i := range results {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i] = e.do("POST", path, "a_live", body, "Idempotency-Key", "concurrent-1")
			}()
		}
		wg.Wait()
		var firstBody string
		ok, replays, inFlight := 0, 0, 0
		for _, r := range results {
			switch {
			case r.status == 200 && r.header.Get("Idempotent-Replayed") == "true":
				replays++
			case r.status == 200:
				ok++
			case r.status == 409 && strings.Contains(string(r.body), "idempotency_key_in_flight"):
				inFlight++
				continue
			default:
				t.Fatalf("unexpected answer %d %s", r.status, r.body)
			}
			if firstBody == "" {
				firstBody = string(r.body)
			} else if string(r.body) != firstBody {
				t.Fatalf("replay differs:\n%s\n%s", r.body, firstBody)
			}
		}
		if ok != 1 || linkCount(t, e, e.orgA.ID, st) != before+1 {
			t.Fatalf("first executions %d (replays %d, in flight %d); links created %d", ok, replays, inFlight, linkCount(t, e, e.orgA.ID, st)-before)
		}
	})
	t.Run("OK_KeyOrderAndSpaceDoNotMatter", func(t *testing.T) {
		r := e.do("POST", path, "a_live", "{ \"audience\": \"person\", \"context\": {\"b\":\"2\",\"a\":\"1\"} }", "Idempotency-Key", "concurrent-1")
		if r.status != 200 || r.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
	t.Run("ErrReusedWithDifferentBody", func(t *testing.T) {
		before := linkCount(t, e, e.orgA.ID, st)
		r := e.do("POST", path, "a_live", `{"audience":"group"}`, "Idempotency-Key", "concurrent-1")
		if r.status != 409 || !strings.Contains(string(r.body), `"code":"idempotency_key_reused"`) {
			t.Fatalf("%d %s", r.status, r.body)
		}
		if linkCount(t, e, e.orgA.ID, st) != before {
			t.Fatal("a reused key created an object")
		}
	})
	t.Run("OK_SameKeyTwoOrganisations", func(t *testing.T) {
		stB := e.mustStudy(e.orgB.ID, kv.EnvLive, "B")
		rA := e.do("POST", path, "a_live", `{}`, "Idempotency-Key", "shared-key")
		rB := e.do("POST", "/v1/api/studies/"+stB.ID.String()+"/participant-links", "b_live", `{}`, "Idempotency-Key", "shared-key")
		if rA.status != 200 || rB.status != 200 || rB.header.Get("Idempotent-Replayed") != "" || string(rA.body) == string(rB.body) {
			t.Fatalf("A %d %s / B %d %s", rA.status, rA.body, rB.status, rB.body)
		}
	})
	t.Run("OK_RetryAfter422", func(t *testing.T) {
		if r := e.do("POST", path, "a_live", `{"audience":"nobody"}`, "Idempotency-Key", "fix-me"); r.status != 422 {
			t.Fatalf("%d", r.status)
		}
		r := e.do("POST", path, "a_live", `{"audience":"group"}`, "Idempotency-Key", "fix-me")
		if r.status != 200 || r.header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("corrected retry: %d %s", r.status, r.body)
		}
	})
	t.Run("ErrKeyShape", func(t *testing.T) {
		for _, k := range []string{strings.Repeat("k", 256), "tab\there"} {
			r := e.do("POST", path, "a_live", `{}`, "Idempotency-Key", k)
			if r.status != 422 || !strings.Contains(string(r.body), `"loc":["header","Idempotency-Key"]`) {
				t.Fatalf("key %q: %d %s", k, r.status, r.body)
			}
		}
		if r := e.do("POST", path, "a_live", `{}`, "Idempotency-Key", strings.Repeat("k", 255)); r.status != 200 {
			t.Fatalf("255-character key: %d %s", r.status, r.body)
		}
	})
	t.Run("OK_RememberedSevenDays", func(t *testing.T) {
		first := e.do("POST", path, "a_live", `{"note":"week"}`, "Idempotency-Key", "week-key")
		clock.Advance(7*24*time.Hour - time.Second)
		again := e.do("POST", path, "a_live", `{"note":"week"}`, "Idempotency-Key", "week-key")
		if again.header.Get("Idempotent-Replayed") != "true" || string(again.body) != string(first.body) {
			t.Fatalf("7 days - 1 s: not a replay: %s", again.body)
		}
		clock.Advance(2 * time.Second)
		later := e.do("POST", path, "a_live", `{"note":"week"}`, "Idempotency-Key", "week-key")
		if later.status != 200 || later.header.Get("Idempotent-Replayed") != "" || string(later.body) == string(first.body) {
			t.Fatalf("7 days + 1 s: want a new execution, got %d %s", later.status, later.body)
		}
		// Keys first used 7 days + 1 s ago (this test's earlier requests) are swept;
		// the one just executed again is kept and still replays.
		if n, err := e.db.SweepIdem(t.Context()); err != nil || n == 0 {
			t.Fatalf("sweep removed %d (%v)", n, err)
		}
		if r := e.do("POST", path, "a_live", `{"note":"week"}`, "Idempotency-Key", "week-key"); r.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("a fresh key was swept: %d %s", r.status, r.body)
		}
	})
}

func TestRateLimitsOverHTTP(t *testing.T) {
	clock := &testClock{now: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)}
	e := mustServe(t, withClock(clock), withRateLimits(pipeline.DefaultRateLimits()))
	for i := 1; i <= 120; i++ {
		r := e.do("GET", "/v1/api/me", "a_live", "")
		if r.status != 200 {
			t.Fatalf("read %d: %d", i, r.status)
		}
		if i == 1 && (r.header.Get("RateLimit-Policy") == "" || r.header.Get("RateLimit") == "") {
			t.Fatalf("no RateLimit headers: %v", r.header)
		}
	}
	r := e.do("GET", "/v1/api/me", "a_live", "")
	retry, _ := strconv.Atoi(r.header.Get("Retry-After"))
	if r.status != http.StatusTooManyRequests || retry < 1 || !strings.Contains(string(r.body), `"code":"rate_limited"`) {
		t.Fatalf("read 121: %d Retry-After %q %s", r.status, r.header.Get("Retry-After"), r.body)
	}
	// Writes are counted apart: reads are exhausted, writes still pass.
	st := e.mustStudy(e.orgA.ID, kv.EnvLive, "RL")
	if w := e.do("POST", "/v1/api/studies/"+st.ID.String()+"/participant-links", "a_live", `{}`); w.status != 200 {
		t.Fatalf("write while reads are limited: %d %s", w.status, w.body)
	}
	// A 403 carries the headers too, and consumes nothing.
	if f := e.do("GET", "/v1/api/studies", "a_links_only", ""); f.status != 403 || f.header.Get("RateLimit") == "" {
		t.Fatalf("403: %d headers %v", f.status, f.header)
	}
	// Another key of the same organisation has its own 120.
	if o := e.do("GET", "/v1/api/me", "a_links_only", ""); o.status != 200 {
		t.Fatalf("other key: %d", o.status)
	}
	clock.Advance(61 * time.Second)
	if r := e.do("GET", "/v1/api/me", "a_live", ""); r.status != 200 {
		t.Fatalf("after the window rolled: %d", r.status)
	}
}
