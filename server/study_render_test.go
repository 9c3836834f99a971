package server

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"interviewd/kv"
	"interviewd/server/research"
)

// decodeEncodeDetail is the reference: the study read through kv's decoder and its
// detail encoded field by field, as get_study answered before renderings were kept.
func decodeEncodeDetail(t *testing.T, db *kv.DB, p kv.Partition, id kv.ID) []byte {
	t.Helper()
	st, err := db.FindStudyByID(context.Background(), p, id)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.MarshalNoEscape(research.PlainStudyDetail(research.NewStudyDetail(st)))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func ptr[T any](v T) *T { return &v }

// TestGetStudy_RenderedMatchesDecodePath reads a set of unlike studies twice each (the
// first read renders, the second is served from the kept rendering) and after a change,
// and compares every answer byte for byte with the decode-and-encode path.
func TestGetStudy_RenderedMatchesDecodePath(t *testing.T) {
	e := mustServe(t)
	p := kv.Partition{Org: e.orgA.ID, Env: kv.EnvLive}
	briefs := map[string]kv.Brief{
		"plain":        {Title: ptr("Onboarding"), Objectives: []string{"Learn"}, VerbatimQuestions: []string{"Why?"}},
		"untitled":     {Objectives: []string{"Learn"}},
		"empty title":  {Title: ptr(""), VerbatimQuestions: []string{"Only a question"}},
		"nothing":      {},
		"html":         {Title: ptr(`<script>alert("x")</script> & co`), Objectives: []string{"a < b > c & d"}, VerbatimQuestions: []string{"Is <b>bold</b> ok?"}},
		"escapes":      {Title: ptr("tab\there \"quoted\" back\\slash"), Objectives: []string{"line\nbreak", "ctl \u0001\u001f", "sep \u2028\u2029"}},
		"unicode":      {Title: ptr("Études café — 日本語 🎤"), PreInterviewQuestions: []string{"Ça va ?", "ſtudy Kelvin \u212a"}},
		"duration":     {Title: ptr("Timed"), EstimatedDurationMinutes: ptr(45), VerbatimQuestions: []string{"One", "Two", "Three"}},
		"zero minutes": {Title: ptr("Zero"), EstimatedDurationMinutes: ptr(0)},
		"long":         {Title: ptr(strings.Repeat("long title ", 90)), Objectives: []string{strings.Repeat("objective ", 200)}, VerbatimQuestions: strings.Split(strings.Repeat("question?|", 40), "|")},
	}
	modes := []kv.Mode{kv.ModeTest, kv.ModeLive, kv.ModePaused, kv.ModeClosed}
	var ids []kv.ID
	i := 0
	for name, b := range briefs {
		mode := modes[i%len(modes)]
		if b.Title == nil || *b.Title == "" || len(b.VerbatimQuestions) == 0 {
			mode = kv.ModeTest // cannot go live
		}
		st := e.studyWith(p.Org, p.Env, mode, b)
		ids = append(ids, st.ID)
		i++
		t.Run(name, func(t *testing.T) {
			path := "/v1/api/studies/" + st.ID.String()
			want := decodeEncodeDetail(t, e.db, p, st.ID)
			for read := 1; read <= 2; read++ {
				r := e.do("GET", path, "a_live", "")
				if r.status != 200 || !bytes.Equal(r.body, want) {
					t.Fatalf("read %d: status %d\n got %s\nwant %s", read, r.status, r.body, want)
				}
			}
			err := e.db.ViewStudyRecord(context.Background(), p, st.ID, func(raw []byte) error {
				e.srv.research.StudyRenders.Mu.RLock()
				defer e.srv.research.StudyRenders.Mu.RUnlock()
				if k := e.srv.research.StudyRenders.M[st.ID]; k == nil || !bytes.Equal(k.Record, raw) {
					t.Error("no rendering kept for the stored record after two reads")
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			// Every encoder of the detail gives the same bytes.
			var d research.StudyDetail
			_ = e.db.ViewStudyRecord(context.Background(), p, st.ID, func(raw []byte) error {
				d, err = e.srv.research.StudyRenders.Detail(st.ID, raw)
				return err
			})
			if viaMarshaler, err := json.MarshalNoEscape(d); err != nil || !bytes.Equal(viaMarshaler, want) {
				t.Fatalf("go-json through MarshalJSON: %s (%v)", viaMarshaler, err)
			}
		})
	}

	t.Run("ChangedStudyRerendered", func(t *testing.T) {
		id := ids[0]
		path := "/v1/api/studies/" + id.String()
		before := e.do("GET", path, "a_live", "")
		st, err := e.db.FindStudyByID(context.Background(), p, id)
		if err != nil {
			t.Fatal(err)
		}
		target := kv.ModeClosed
		if st.Mode == kv.ModeClosed {
			target = kv.ModeTest
		}
		e.mustMode(p, id, target)
		want := decodeEncodeDetail(t, e.db, p, id)
		after := e.do("GET", path, "a_live", "")
		if after.status != 200 || !bytes.Equal(after.body, want) || bytes.Equal(after.body, before.body) {
			t.Fatalf("after a mode change:\n got %s\nwant %s\n(before %s)", after.body, want, before.body)
		}
	})

	t.Run("ErrOtherPartitionNotServedFromRendering", func(t *testing.T) {
		path := "/v1/api/studies/" + ids[0].String()
		if r := e.do("GET", path, "a_live", ""); r.status != 200 {
			t.Fatalf("warm: %d", r.status)
		}
		for _, key := range []string{"b_live", "a_test"} {
			if r := e.do("GET", path, key, ""); r.status != 404 {
				t.Fatalf("%s reading another partition's rendered study: %d %s", key, r.status, r.body)
			}
		}
	})
}

// TestAuth_RevocationAndExpiryWithCacheWarm checks over HTTP that a revoked key is
// refused on the very next request although its credential was cached, and that an
// expired key is refused on the injected clock without any write.
func TestAuth_RevocationAndExpiryWithCacheWarm(t *testing.T) {
	clock := &testClock{now: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)}
	e := mustServe(t, withClock(clock))
	ctx := context.Background()
	_, secret, err := e.db.CreateKey(ctx, kv.KeyInput{OrgID: e.orgA.ID, Name: "short", Environment: kv.EnvLive, Scopes: []string{kv.ScopeStudiesRead}, ExpiresDays: 30})
	if err != nil {
		t.Fatal(err)
	}
	e.keys["short"] = secret
	for i := 0; i < 2; i++ {
		if r := e.do("GET", "/v1/api/me", "short", ""); r.status != 200 {
			t.Fatalf("warm %d: %d %s", i, r.status, r.body)
		}
	}
	clock.Advance(30 * 24 * time.Hour)
	if r := e.do("GET", "/v1/api/me", "short", ""); r.status != 401 {
		t.Fatalf("expired key with a warm cache: %d %s", r.status, r.body)
	}
	if r := e.do("GET", "/v1/api/me", "a_live", ""); r.status != 200 {
		t.Fatalf("a key without expiry: %d", r.status)
	}
	if _, err := e.db.RevokeKey(ctx, mustKeyID(t, e, "a_live")); err != nil {
		t.Fatal(err)
	}
	if r := e.do("GET", "/v1/api/me", "a_live", ""); r.status != 401 {
		t.Fatalf("revoked key with a warm cache: %d %s", r.status, r.body)
	}
	if r := e.do("GET", "/v1/api/me", "a_test", ""); r.status != 200 {
		t.Fatalf("the organisation's other key: %d", r.status)
	}
}

// mustKeyID returns the id of the env's key named name.
func mustKeyID(t *testing.T, e *testEnv, name string) kv.ID {
	t.Helper()
	r := e.do("GET", "/v1/api/me", name, "")
	var w struct {
		KeyID kv.ID `json:"key_id"`
	}
	r.json(t, &w)
	if w.KeyID.IsZero() {
		t.Fatalf("no key id for %s: %s", name, r.body)
	}
	return w.KeyID
}
