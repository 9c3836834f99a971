package kv

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	json "github.com/goccy/go-json"
)

// analysisQuote is a quote as the analysis package writes it.
func analysisQuote(iv Interview, text string) map[string]any {
	return map[string]any{"interview_id": iv.ID.String(), "message_index": 1, "text": text}
}

// analysisBody is findings over ivs shaped as the analysis package writes them: one
// objective with a finding quoting every interview and a contrary quote from the
// first, a theme and a suggestion quoting each, and one question every interview but
// the last answered, its group quoting them.
func analysisBody(tb testing.TB, ivs ...Interview) (json.RawMessage, []AnalysisSource) {
	tb.Helper()
	var all, answeredQuotes []any
	var sources []AnalysisSource
	for i, iv := range ivs {
		all = append(all, analysisQuote(iv, "name is"))
		src := AnalysisSource{InterviewID: iv.ID, Context: map[string]string{"plan": []string{"free", "pro"}[i%2]}}
		if i < len(ivs)-1 {
			answeredQuotes = append(answeredQuotes, analysisQuote(iv, "My name"))
			src.Answered = []string{"Why?"}
		}
		sources = append(sources, src)
	}
	n := len(ivs)
	doc := map[string]any{
		"study_id": "", "version": 0, "generated_at": "2026-03-01T12:00:00Z", "engine": "builtin",
		"interviews_included": n, "quotes_dropped": 0, "summary": "findings",
		"objectives": []any{map[string]any{
			"objective": "Learn", "gap": false,
			"coverage": map[string]any{"interviews": n, "of": n, "share": 1},
			"findings": []any{
				map[string]any{"statement": "All", "support": all, "contrary": []any{analysisQuote(ivs[0], "My")}},
				map[string]any{"statement": "First only", "support": []any{analysisQuote(ivs[0], "name")}, "contrary": []any{}},
			},
		}},
		"themes": []any{map[string]any{"id": "t1", "label": "Names", "description": "", "sentiment": "neutral",
			"interview_count": n, "share": 1, "quotes": all, "segments": map[string]any{}}},
		"questions": []any{map[string]any{"question": "Why?", "kind": "verbatim", "answered": n - 1, "skipped": 1,
			"groups": []any{map[string]any{"label": "names", "count": n - 1, "quotes": answeredQuotes}}}},
		"suggestions":   []any{map[string]any{"text": "say names", "interview_count": n, "quotes": all}},
		"future_member": []any{map[string]any{"interview_id": ivs[0].ID.String(), "note": "x"}},
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		tb.Fatal(err)
	}
	return raw, sources
}

// mustAnalysis runs one analysis job of st to completion over ivs and returns the
// version stored.
func mustAnalysis(tb testing.TB, db *DB, p Partition, st Study, ivs ...Interview) AnalysisVersion {
	tb.Helper()
	ctx := context.Background()
	j, _, err := db.CreateAnalysisJob(ctx, AnalysisInput{Partition: p, JobID: db.NewID(), StudyID: st.ID})
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := db.StartAnalysis(ctx, p, j.ID); err != nil {
		tb.Fatal(err)
	}
	body, sources := analysisBody(tb, ivs...)
	v, err := db.FinishAnalysis(ctx, p, j.ID, AnalysisResult{Sources: sources, Body: body})
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

func decodeBody(tb testing.TB, v AnalysisVersion) map[string]any {
	tb.Helper()
	var doc map[string]any
	if err := json.Unmarshal(v.Body, &doc); err != nil {
		tb.Fatal(err)
	}
	return doc
}

func TestCreateAnalysisJob(t *testing.T) {
	db := mustOpenDB(t, nil)
	ctx := context.Background()
	org, _, _ := db.CreateOrg(ctx, OrgInput{Name: "Analysis", Email: "an@example.com", Credits: 10})
	other := mustOrg(t, db, "other")
	p := Partition{Org: org.ID, Env: EnvLive}
	live := liveStudy(t, db, p, "Live")
	never := mustStudy(t, db, p, "Never")

	t.Run("ErrStudyNotLive", func(t *testing.T) {
		_, _, err := db.CreateAnalysisJob(ctx, AnalysisInput{Partition: p, JobID: db.NewID(), StudyID: never.ID})
		if e, ok := err.(*Error); !ok || e.Code != ECONFLICT || e.Reason != "study_not_live" {
			t.Fatalf("%v", err)
		}
	})
	t.Run("ErrOtherPartition", func(t *testing.T) {
		_, _, err := db.CreateAnalysisJob(ctx, AnalysisInput{Partition: Partition{Org: other.ID, Env: EnvLive}, JobID: db.NewID(), StudyID: live.ID})
		if ErrorCode(err) != ENOTFOUND {
			t.Fatalf("%v", err)
		}
	})
	t.Run("ErrTestEnvironment", func(t *testing.T) {
		_, _, err := db.CreateAnalysisJob(ctx, AnalysisInput{Partition: Partition{Org: org.ID, Env: EnvTest}, JobID: db.NewID(), StudyID: live.ID})
		if ErrorCode(err) != EFORBIDDEN {
			t.Fatalf("%v", err)
		}
	})
	t.Run("OK_ConcurrentRequestsShareOneJob", func(t *testing.T) {
		const n = 16
		var wg sync.WaitGroup
		ids := make([]ID, n)
		created := make([]bool, n)
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var j Job
				j, created[i], errs[i] = db.CreateAnalysisJob(ctx, AnalysisInput{Partition: p, JobID: db.NewID(), StudyID: live.ID})
				ids[i] = j.ID
			}()
		}
		wg.Wait()
		made := 0
		for i := range n {
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			if ids[i] != ids[0] {
				t.Fatalf("request %d got job %s, request 0 got %s", i, ids[i], ids[0])
			}
			if created[i] {
				made++
			}
		}
		if made != 1 {
			t.Fatalf("%d requests recorded a job, want 1", made)
		}
		// Running, it is still the study's one job; once ended a new one is recorded.
		if _, err := db.StartAnalysis(ctx, p, ids[0]); err != nil {
			t.Fatal(err)
		}
		again, made2, err := db.CreateAnalysisJob(ctx, AnalysisInput{Partition: p, JobID: db.NewID(), StudyID: live.ID})
		if err != nil || made2 || again.ID != ids[0] || again.Status != AnalysisRunning {
			t.Fatalf("while running: %+v %v %v", again, made2, err)
		}
		if err := db.FailJob(ctx, p, ids[0], AnalysisFailed, "engine broke"); err != nil {
			t.Fatal(err)
		}
		next, made3, err := db.CreateAnalysisJob(ctx, AnalysisInput{Partition: p, JobID: db.NewID(), StudyID: live.ID})
		if err != nil || !made3 || next.ID == ids[0] || next.Status != AnalysisQueued {
			t.Fatalf("after failure: %+v %v %v", next, made3, err)
		}
		if err := db.FailJob(ctx, p, next.ID, AnalysisFailed, "done with it"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("ErrAnalysisLimit", func(t *testing.T) {
		second := liveStudy(t, db, p, "Second")
		first, _, err := db.CreateAnalysisJob(ctx, AnalysisInput{Partition: p, JobID: db.NewID(), StudyID: live.ID, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = db.CreateAnalysisJob(ctx, AnalysisInput{Partition: p, JobID: db.NewID(), StudyID: second.ID, Limit: 1})
		if e, ok := err.(*Error); !ok || e.Code != ELIMIT || e.Reason != "analysis_limit" {
			t.Fatalf("a second study's analysis over the limit: %v", err)
		}
		// The study's own job is still answered at the limit.
		if j, made, err := db.CreateAnalysisJob(ctx, AnalysisInput{Partition: p, JobID: db.NewID(), StudyID: live.ID, Limit: 1}); err != nil || made || j.ID != first.ID {
			t.Fatalf("%+v %v %v", j, made, err)
		}
		if n, err := db.CountOpenAnalyses(ctx, org.ID); err != nil || n != 1 {
			t.Fatalf("open analyses %d %v", n, err)
		}
		if err := db.FailJob(ctx, p, first.ID, AnalysisFailed, "x"); err != nil {
			t.Fatal(err)
		}
		if n, err := db.CountOpenAnalyses(ctx, org.ID); err != nil || n != 0 {
			t.Fatalf("open analyses after failure %d %v", n, err)
		}
	})
	t.Run("OK_IdempotencyRecordNamesTheJobReturned", func(t *testing.T) {
		held, _, err := db.CreateAnalysisJob(ctx, AnalysisInput{Partition: p, JobID: db.NewID(), StudyID: live.ID})
		if err != nil {
			t.Fatal(err)
		}
		var fp [32]byte
		fp[0] = 7
		if o, _, err := db.ClaimIdem(ctx, p, "k-1", fp); err != nil || o != IdemClaimed {
			t.Fatalf("claim: %v %v", o, err)
		}
		_, _, err = db.CreateAnalysisJob(ctx, AnalysisInput{Partition: p, JobID: db.NewID(), StudyID: live.ID,
			Idem: func(job ID) *IdemWrite {
				return &IdemWrite{Partition: p, Key: "k-1", Fingerprint: fp, Output: []byte(`{"job_id":"` + job.String() + `"}`)}
			}})
		if err != nil {
			t.Fatal(err)
		}
		o, out, err := db.ClaimIdem(ctx, p, "k-1", fp)
		if err != nil || o != IdemReplay || string(out) != `{"job_id":"`+held.ID.String()+`"}` {
			t.Fatalf("replay %v %s %v", o, out, err)
		}
		if err := db.FailJob(ctx, p, held.ID, AnalysisFailed, "x"); err != nil {
			t.Fatal(err)
		}
	})
}

func TestAnalysisVersions(t *testing.T) {
	c := newClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	db := mustOpenDB(t, c.now)
	ctx := context.Background()
	org, _, _ := db.CreateOrg(ctx, OrgInput{Name: "Versions", Email: "v@example.com", Credits: 10})
	p := Partition{Org: org.ID, Env: EnvLive}
	st := liveStudy(t, db, p, "V")
	a := mustInterview(t, db, st, "ann", true)
	b := mustInterview(t, db, st, "ben", true)

	if _, err := db.FindAnalysis(ctx, p, st.ID, 0); ErrorCode(err) != ENOTFOUND {
		t.Fatalf("before any analysis: %v", err)
	} else if e := err.(*Error); e.Reason != "analysis_not_found" {
		t.Fatalf("reason %q", e.Reason)
	}
	v1 := mustAnalysis(t, db, p, st, a)
	c.add(time.Hour)
	v2 := mustAnalysis(t, db, p, st, a, b)
	if v1.Version != 1 || v2.Version != 2 {
		t.Fatalf("versions %d, %d", v1.Version, v2.Version)
	}
	latest, err := db.FindAnalysis(ctx, p, st.ID, 0)
	if err != nil || latest.Version != 2 || latest.JobID != v2.JobID || len(latest.Sources) != 2 {
		t.Fatalf("latest %+v %v", latest, err)
	}
	if doc := decodeBody(t, latest); doc["version"] != float64(2) || doc["study_id"] != st.ID.String() {
		t.Fatalf("the body does not carry its version and study: %v %v", doc["version"], doc["study_id"])
	}
	if old, err := db.FindAnalysis(ctx, p, st.ID, 1); err != nil || old.Version != 1 || decodeBody(t, old)["version"] != float64(1) {
		t.Fatalf("version 1: %+v %v", old, err)
	}
	if _, err := db.FindAnalysis(ctx, p, st.ID, 3); ErrorCode(err) != ENOTFOUND {
		t.Fatalf("version 3: %v", err)
	}
	if _, err := db.FindAnalysis(ctx, Partition{Org: org.ID, Env: EnvTest}, st.ID, 0); ErrorCode(err) != ENOTFOUND {
		t.Fatalf("another partition: %v", err)
	}
	if vs, err := db.FindAnalysisVersions(ctx, p, st.ID); err != nil || len(vs) != 2 || vs[0] != 1 || vs[1] != 2 {
		t.Fatalf("versions %v %v", vs, err)
	}
	j, err := db.FindJobByID(ctx, p, JobAnalysis, v2.JobID)
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := j.AnalysisOutcome(); !ok || o.Version != 2 || j.Status != AnalysisCompleted || !j.Done {
		t.Fatalf("job %+v", j)
	}

	t.Run("OK_FailureKeepsTheLastVersion", func(t *testing.T) {
		j, _, err := db.CreateAnalysisJob(ctx, AnalysisInput{Partition: p, JobID: db.NewID(), StudyID: st.ID})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.StartAnalysis(ctx, p, j.ID); err != nil {
			t.Fatal(err)
		}
		if err := db.FailJob(ctx, p, j.ID, AnalysisFailed, "The analysis engine failed: boom"); err != nil {
			t.Fatal(err)
		}
		got, err := db.FindJobByID(ctx, p, JobAnalysis, j.ID)
		if err != nil || got.Status != AnalysisFailed || got.Error != "The analysis engine failed: boom" {
			t.Fatalf("%+v %v", got, err)
		}
		if _, ok := got.AnalysisOutcome(); ok {
			t.Fatal("a failed job reports a version")
		}
		if latest, err := db.FindAnalysis(ctx, p, st.ID, 0); err != nil || latest.Version != 2 {
			t.Fatalf("after a failure the latest is %d: %v", latest.Version, err)
		}
		body, sources := analysisBody(t, a)
		if _, err := db.FinishAnalysis(ctx, p, j.ID, AnalysisResult{Sources: sources, Body: body}); ErrorCode(err) != ECONFLICT {
			t.Fatalf("finishing a failed job: %v", err)
		}
	})
	t.Run("OK_InterviewErasedWhileRunning", func(t *testing.T) {
		gone := mustInterview(t, db, st, "gil", true)
		j, _, err := db.CreateAnalysisJob(ctx, AnalysisInput{Partition: p, JobID: db.NewID(), StudyID: st.ID})
		if err != nil {
			t.Fatal(err)
		}
		body, sources := analysisBody(t, a, b, gone)
		if _, err := db.EraseInterview(ctx, gone.ID); err != nil {
			t.Fatal(err)
		}
		v, err := db.FinishAnalysis(ctx, p, j.ID, AnalysisResult{Sources: sources, Body: body})
		if err != nil {
			t.Fatal(err)
		}
		if v.includes(gone.ID) || len(v.Sources) != 2 || containsID(v.Body, gone.ID) {
			t.Fatalf("the erased interview was stored: %s", v.Body)
		}
		if doc := decodeBody(t, v); doc["interviews_included"] != float64(2) {
			t.Fatalf("interviews_included %v", doc["interviews_included"])
		}
	})
}

func containsID(body []byte, id ID) bool { return strings.Contains(string(body), id.String()) }

func TestEraseInterviewFromAnalyses(t *testing.T) {
	db := mustOpenDB(t, nil)
	ctx := context.Background()
	org, _, _ := db.CreateOrg(ctx, OrgInput{Name: "EraseAn", Email: "ea@example.com", Credits: 10})
	p := Partition{Org: org.ID, Env: EnvLive}
	st := liveStudy(t, db, p, "EA")
	a := mustInterview(t, db, st, "ann", true)
	b := mustInterview(t, db, st, "ben", true)
	c := mustInterview(t, db, st, "cat", true)
	v1 := mustAnalysis(t, db, p, st, a, b)    // a and b
	v2 := mustAnalysis(t, db, p, st, a, b, c) // all three
	v3 := mustAnalysis(t, db, p, st, b, c)    // without a

	rc, err := db.EraseInterview(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(rc.AnalysisVersions) != 2 {
		t.Fatalf("receipt lists %+v, want versions 1 and 2", rc.AnalysisVersions)
	}
	listed := map[int]bool{}
	for _, r := range rc.AnalysisVersions {
		if r.StudyID != st.ID {
			t.Fatalf("receipt names study %s", r.StudyID)
		}
		listed[r.Version] = true
	}
	if !listed[v1.Version] || !listed[v2.Version] || listed[v3.Version] {
		t.Fatalf("receipt lists %v", listed)
	}
	for _, ver := range []int{1, 2, 3} {
		v, err := db.FindAnalysis(ctx, p, st.ID, ver)
		if err != nil {
			t.Fatal(err)
		}
		if v.includes(a.ID) || containsID(v.Body, a.ID) {
			t.Fatalf("version %d still holds the erased interview: %s", ver, v.Body)
		}
	}
	after, _ := db.FindAnalysis(ctx, p, st.ID, 2)
	if after.Erased != 1 || len(after.Sources) != 2 {
		t.Fatalf("version 2: erased %d, sources %d", after.Erased, len(after.Sources))
	}
	doc := decodeBody(t, after)
	if doc["interviews_included"] != float64(2) {
		t.Fatalf("interviews_included %v", doc["interviews_included"])
	}
	// The stored summary named counts no longer true: it is written again.
	if sum, _ := doc["summary"].(string); !strings.HasPrefix(sum, "2 interviews analysed. The most common themes: Names (2 of 2).") {
		t.Fatalf("summary %q", sum)
	}
	obj := doc["objectives"].([]any)[0].(map[string]any)
	cov := obj["coverage"].(map[string]any)
	if cov["interviews"] != float64(2) || cov["of"] != float64(2) || cov["share"] != float64(1) || obj["gap"] != true {
		t.Fatalf("coverage %v gap %v", cov, obj["gap"])
	}
	if fs := obj["findings"].([]any); len(fs) != 1 { // "First only" quoted a alone
		t.Fatalf("findings %v", fs)
	} else if f := fs[0].(map[string]any); len(f["support"].([]any)) != 2 || len(f["contrary"].([]any)) != 0 {
		t.Fatalf("finding %v", f)
	}
	theme := doc["themes"].([]any)[0].(map[string]any)
	seg := theme["segments"].(map[string]any)["plan"].(map[string]any)
	if theme["interview_count"] != float64(2) || theme["share"] != float64(1) || seg["pro"] != float64(1) || seg["free"] != float64(1) {
		t.Fatalf("theme %v", theme)
	}
	q := doc["questions"].([]any)[0].(map[string]any)
	g := q["groups"].([]any)[0].(map[string]any)
	if q["answered"] != float64(1) || q["skipped"] != float64(1) || g["count"] != float64(1) || len(g["quotes"].([]any)) != 1 {
		t.Fatalf("question %v", q)
	}
	if s := doc["suggestions"].([]any)[0].(map[string]any); s["interview_count"] != float64(2) {
		t.Fatalf("suggestion %v", s)
	}
	if fm := doc["future_member"].([]any); len(fm) != 0 {
		t.Fatalf("a member kv does not know still quotes the interview: %v", fm)
	}
	// Version 1 had a and b: with a gone, the theme rests on one interview and goes.
	one := decodeBody(t, mustFindAnalysis(t, db, p, st.ID, 1))
	if th := one["themes"].([]any); len(th) != 0 {
		t.Fatalf("a theme from one interview survived: %v", th)
	}
	// Version 3 never held a: unchanged.
	if three := mustFindAnalysis(t, db, p, st.ID, 3); three.Erased != 0 || string(three.Body) != string(v3.Body) {
		t.Fatalf("version 3 changed: %s", three.Body)
	}
}

// TestEraseCountsUnquotedMembers: an interview counted in an objective's coverage
// and an answer group's count without being quoted there is subtracted from both
// when erased, and one the version never counted there is not.
func TestEraseCountsUnquotedMembers(t *testing.T) {
	db := mustOpenDB(t, nil)
	ctx := context.Background()
	org, _, _ := db.CreateOrg(ctx, OrgInput{Name: "EraseCount", Email: "ec@example.com", Credits: 10})
	p := Partition{Org: org.ID, Env: EnvLive}
	st := liveStudy(t, db, p, "EC")
	var ivs []Interview
	for _, name := range []string{"ann", "ben", "cat", "dan"} {
		ivs = append(ivs, mustInterview(t, db, st, name, true))
	}
	quoted := []any{analysisQuote(ivs[0], "name is")}
	doc := map[string]any{
		"study_id": "", "version": 0, "generated_at": "2026-03-01T12:00:00Z", "engine": "builtin",
		"interviews_included": 4, "quotes_dropped": 0, "summary": "4 interviews analysed.",
		"objectives": []any{map[string]any{"objective": "Learn", "gap": false,
			"coverage": map[string]any{"interviews": 3, "of": 4, "share": 0.75},
			"findings": []any{map[string]any{"statement": "Names", "support": quoted, "contrary": []any{}}}}},
		"themes": []any{},
		"questions": []any{map[string]any{"question": "Why?", "kind": "verbatim", "answered": 4, "skipped": 0,
			"groups": []any{map[string]any{"label": "names", "count": 3, "quotes": quoted},
				map[string]any{"label": "other answers", "count": 1, "quotes": []any{analysisQuote(ivs[3], "name")}}}}},
		"suggestions": []any{},
	}
	body, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	// ann, ben and cat are the objective's evidence and the "names" group; dan is
	// neither (he answered, in the other group).
	var sources []AnalysisSource
	for i, iv := range ivs {
		src := AnalysisSource{InterviewID: iv.ID, Answered: []string{"Why?"}}
		if i < 3 {
			src.Objectives = []int{0}
			src.Groups = []AnalysisGroupRef{{Question: 0, Label: "names"}}
		} else {
			src.Groups = []AnalysisGroupRef{{Question: 0, Label: "other answers"}}
		}
		sources = append(sources, src)
	}
	j, _, err := db.CreateAnalysisJob(ctx, AnalysisInput{Partition: p, JobID: db.NewID(), StudyID: st.ID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.StartAnalysis(ctx, p, j.ID); err != nil {
		t.Fatal(err)
	}
	v, err := db.FinishAnalysis(ctx, p, j.ID, AnalysisResult{Sources: sources, Body: body, Counted: true})
	if err != nil {
		t.Fatal(err)
	}
	counts := func() (coverage, names float64, groups int) {
		d := decodeBody(t, mustFindAnalysis(t, db, p, st.ID, v.Version))
		cov := d["objectives"].([]any)[0].(map[string]any)["coverage"].(map[string]any)
		gs := d["questions"].([]any)[0].(map[string]any)["groups"].([]any)
		for _, g := range gs {
			if g.(map[string]any)["label"] == "names" {
				names = g.(map[string]any)["count"].(float64)
			}
		}
		return cov["interviews"].(float64), names, len(gs)
	}
	if _, err := db.EraseInterview(ctx, ivs[2].ID); err != nil { // cat: counted, never quoted
		t.Fatal(err)
	}
	if cov, names, _ := counts(); cov != 2 || names != 2 {
		t.Fatalf("after erasing an unquoted member: coverage %v, names group %v; want 2 and 2", cov, names)
	}
	if _, err := db.EraseInterview(ctx, ivs[3].ID); err != nil { // dan: in neither
		t.Fatal(err)
	}
	if cov, names, groups := counts(); cov != 2 || names != 2 || groups != 1 {
		t.Fatalf("after erasing a non-member: coverage %v, names group %v, %d groups; want 2, 2 and 1", cov, names, groups)
	}
}

func mustFindAnalysis(tb testing.TB, db *DB, p Partition, study ID, version int) AnalysisVersion {
	tb.Helper()
	v, err := db.FindAnalysis(context.Background(), p, study, version)
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

func TestRetentionReachesAnalyses(t *testing.T) {
	c := newClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	db := mustOpenDB(t, c.now)
	ctx := context.Background()
	org, _, _ := db.CreateOrg(ctx, OrgInput{Name: "RetAn", Email: "ra@example.com", Credits: 10})
	p := Partition{Org: org.ID, Env: EnvLive}
	st := liveStudy(t, db, p, "RA")
	old := mustInterview(t, db, st, "old", true)
	c.add(20 * 24 * time.Hour)
	recent := mustInterview(t, db, st, "new", true)
	v := mustAnalysis(t, db, p, st, old, recent)
	if _, err := db.SetRetention(ctx, org.ID, 10); err != nil {
		t.Fatal(err)
	}
	sw, err := db.SweepRetention(ctx)
	if err != nil || sw.Interviews != 1 || sw.AnalysisVersions != 1 {
		t.Fatalf("sweep %+v %v", sw, err)
	}
	after := mustFindAnalysis(t, db, p, st.ID, v.Version)
	if containsID(after.Body, old.ID) || after.includes(old.ID) || !after.includes(recent.ID) {
		t.Fatalf("the swept interview outlived retention in the analysis: %s", after.Body)
	}
}

// TestEngineAnalysisLatestVersion checks the seek the latest analysis version takes on
// both engines: past the end of the bucket (the study holds its last keys), just before
// another study's keys, and for a study with none between two that have some.
func TestEngineAnalysisLatestVersion(t *testing.T) {
	db := mustOpenDB(t, nil)
	ctx := context.Background()
	p := Partition{Org: ID{0x10}, Env: EnvLive}
	low, mid, high := ID{0x01}, ID{0x02}, ID{0xff, 0xff}
	versions := map[ID]int{low: 300, high: 7} // mid has none
	err := db.update(ctx, func(tx Tx) error {
		for study, n := range versions {
			for v := 1; v <= n; v++ {
				if err := putJSON(tx.Bucket(bucketAnalyses), analysisKey(p, study, v), AnalysisVersion{StudyID: study, Version: v}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = db.view(ctx, func(tx Tx) error {
		for study, want := range map[ID]int{low: 300, mid: 0, high: 7, {0x00}: 0} {
			got, err := latestAnalysisVersion(tx, p, study)
			if err != nil {
				return err
			}
			if got != want {
				t.Errorf("study %x: latest %d, want %d", study[:2], got, want)
			}
		}
		// Another partition's study with the same id sees none of these.
		if got, err := latestAnalysisVersion(tx, Partition{Org: p.Org, Env: EnvTest}, low); err != nil || got != 0 {
			t.Errorf("test partition: %d %v", got, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
