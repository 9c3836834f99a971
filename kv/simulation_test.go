package kv

import (
	"context"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	json "github.com/goccy/go-json"
)

func TestCreateSimulationJob(t *testing.T) {
	db := mustOpenDB(t, nil)
	org := mustOrg(t, db, "simulations")
	p := Partition{Org: org.ID, Env: EnvLive}
	ctx := context.Background()
	st := mustStudy(t, db, p, "Rehearse")
	live := mustStudy(t, db, p, "Live")
	if _, err := db.SetStudyMode(ctx, p, live.ID, ModeLive); err != nil {
		t.Fatal(err)
	}
	other := mustOrg(t, db, "other")
	cases := []struct {
		name     string
		p        Partition
		study    ID
		persona  string
		maxTurns int
		wantCode string
		wantWhy  string
	}{
		{name: "OK", p: p, study: st.ID, persona: "A nurse", maxTurns: 12},
		{name: "OK_Bounds", p: p, study: st.ID, persona: strings.Repeat("é", SimulationPersonaMax), maxTurns: SimulationMaxTurnsMax},
		{name: "ErrStudyLive", p: p, study: live.ID, maxTurns: 12, wantCode: ECONFLICT, wantWhy: "study_live"},
		{name: "ErrOtherEnvironment", p: Partition{Org: org.ID, Env: EnvTest}, study: st.ID, maxTurns: 12, wantCode: ENOTFOUND},
		{name: "ErrOtherOrg", p: Partition{Org: other.ID, Env: EnvLive}, study: st.ID, maxTurns: 12, wantCode: ENOTFOUND},
		{name: "ErrMaxTurnsZero", p: p, study: st.ID, maxTurns: 0, wantCode: EINVALID, wantWhy: "max_turns"},
		{name: "ErrMaxTurns201", p: p, study: st.ID, maxTurns: 201, wantCode: EINVALID, wantWhy: "max_turns"},
		{name: "ErrPersonaTooLong", p: p, study: st.ID, persona: strings.Repeat("a", SimulationPersonaMax+1), maxTurns: 1, wantCode: EINVALID, wantWhy: "persona"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id := NewV4()
			j, err := db.CreateSimulationJob(ctx, SimulationInput{Partition: c.p, JobID: id, StudyID: c.study, Persona: c.persona, MaxTurns: c.maxTurns}, nil)
			if c.wantCode != "" {
				if ErrorCode(err) != c.wantCode || !strings.Contains(errorDetail(err), c.wantWhy) {
					t.Fatalf("err %v (%s), want %s %s", err, ErrorCode(err), c.wantCode, c.wantWhy)
				}
				if _, err := db.FindJobByID(ctx, c.p, JobSimulation, id); ErrorCode(err) != ENOTFOUND {
					t.Fatalf("a refused simulation was recorded: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := db.FindJobByID(ctx, p, JobSimulation, id)
			if err != nil || got.Status != SimulationQueued || got.Done || *got.StudyID != st.ID {
				t.Fatalf("job %+v %v", got, err)
			}
			spec, err := got.Spec()
			if err != nil || spec.Persona != c.persona || spec.MaxTurns != c.maxTurns || spec.Seed != simulationSeed(id) || spec.Seed < 0 || spec.Seed >= 1<<53 {
				t.Fatalf("spec %+v %v", spec, err)
			}
			if j.ID != id {
				t.Fatalf("returned %+v", j)
			}
		})
	}
}

// errorDetail is a coded error's reason and field locations, for matching.
func errorDetail(err error) string {
	var e *Error
	if !errors.As(err, &e) {
		return ""
	}
	s := e.Reason
	for _, f := range e.Fields {
		s += " " + f.String()
	}
	return s
}

func TestSimulationProgress(t *testing.T) {
	db := mustOpenDB(t, nil)
	org := mustOrg(t, db, "progress")
	p := Partition{Org: org.ID, Env: EnvTest}
	ctx := context.Background()
	st := mustStudy(t, db, p, "Progress")
	j, err := db.CreateSimulationJob(ctx, SimulationInput{Partition: p, JobID: NewV4(), StudyID: st.ID, MaxTurns: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	turn := func(n int) []SimulationLine {
		return []SimulationLine{{Speaker: SpeakerInterviewer, Text: "Q", TurnNumber: n}, {Speaker: SpeakerParticipant, Text: "A", TurnNumber: n}}
	}
	running, err := db.StartSimulation(ctx, p, j.ID)
	if err != nil || running.Status != SimulationRunning {
		t.Fatalf("start %+v %v", running, err)
	}
	for n := 1; n <= 2; n++ {
		if err := db.AppendSimulationTurn(ctx, p, j.ID, turn(n), json.RawMessage(`{"phase":"verbatim","index":`+itoa(n)+`}`)); err != nil {
			t.Fatal(err)
		}
	}
	// A restart marks it running again and keeps what was committed.
	again, err := db.StartSimulation(ctx, p, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := again.Progress()
	if err != nil || len(pr.Turns) != 4 || pr.Turns[3].TurnNumber != 2 || string(pr.Script) != `{"phase":"verbatim","index":2}` {
		t.Fatalf("progress %+v %v", pr, err)
	}
	closing := []SimulationLine{{Speaker: SpeakerInterviewer, Text: "Thanks", TurnNumber: 3}}
	if err := db.FinishSimulation(ctx, p, j.ID, closing); err != nil {
		t.Fatal(err)
	}
	done, err := db.FindJobByID(ctx, p, JobSimulation, j.ID)
	if err != nil || !done.Done || done.Status != SimulationCompleted {
		t.Fatalf("finished %+v %v", done, err)
	}
	if pr, _ := done.Progress(); len(pr.Turns) != 5 || pr.Turns[4].Text != "Thanks" || pr.Script != nil {
		t.Fatalf("final progress %+v", pr)
	}
	t.Run("ErrConflict_AfterEnd", func(t *testing.T) {
		if err := db.AppendSimulationTurn(ctx, p, j.ID, turn(4), nil); ErrorCode(err) != ECONFLICT {
			t.Fatalf("append after end: %v", err)
		}
		if _, err := db.StartSimulation(ctx, p, j.ID); ErrorCode(err) != ECONFLICT {
			t.Fatalf("start after end: %v", err)
		}
		if err := db.FailJob(ctx, p, j.ID, SimulationFailed, "late"); ErrorCode(err) != ECONFLICT {
			t.Fatalf("fail after end: %v", err)
		}
	})
	t.Run("ErrNotFound_OtherKind", func(t *testing.T) {
		if _, err := db.FindJobByID(ctx, p, JobAuthoring, j.ID); ErrorCode(err) != ENOTFOUND {
			t.Fatalf("as authoring: %v", err)
		}
		auth, err := db.CreateAuthoringJob(ctx, AuthoringInput{Partition: p, JobID: NewV4(), ThreadID: NewV4(), Guidance: "g"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.AppendSimulationTurn(ctx, p, auth.ID, turn(1), nil); ErrorCode(err) != ENOTFOUND {
			t.Fatalf("append to an authoring job: %v", err)
		}
		if _, err := db.FindJobByID(ctx, Partition{Org: org.ID, Env: EnvLive}, JobSimulation, j.ID); ErrorCode(err) != ENOTFOUND {
			t.Fatalf("other environment: %v", err)
		}
	})
	t.Run("OK_NotAnInterview", func(t *testing.T) {
		page, err := db.FindInterviews(ctx, InterviewFilter{Partition: p, Limit: 50})
		if err != nil || len(page.Items) != 0 {
			t.Fatalf("interviews %+v %v", page.Items, err)
		}
	})
}

func TestCreateSimulationJobRecordsIdempotency(t *testing.T) {
	db := mustOpenDB(t, nil)
	org := mustOrg(t, db, "idem")
	p := Partition{Org: org.ID, Env: EnvLive}
	ctx := context.Background()
	st := mustStudy(t, db, p, "Idem")
	fp := [32]byte{1}
	if out, _, err := db.ClaimIdem(ctx, p, "k", fp); err != nil || out != IdemClaimed {
		t.Fatalf("claim %v %v", out, err)
	}
	idem := &IdemWrite{Partition: p, Key: "k", Fingerprint: fp, Output: []byte(`{"job_id":"x"}`)}
	if _, err := db.CreateSimulationJob(ctx, SimulationInput{Partition: p, JobID: NewV4(), StudyID: st.ID, MaxTurns: 1}, idem); err != nil {
		t.Fatal(err)
	}
	out, body, err := db.ClaimIdem(ctx, p, "k", fp)
	if err != nil || out != IdemReplay || string(body) != `{"job_id":"x"}` {
		t.Fatalf("replay %v %s %v", out, body, err)
	}
}

// FuzzValidateSimulation: the validator accepts exactly the documented request space
// and reports each failure at its own field.
func FuzzValidateSimulation(f *testing.F) {
	f.Add("A nurse", 12)
	f.Add("", 0)
	f.Add(strings.Repeat("é", SimulationPersonaMax+1), 201)
	f.Add("\xff\xfe", -1)
	f.Fuzz(func(t *testing.T, persona string, maxTurns int) {
		err := ValidateSimulation(persona, maxTurns)
		personaOK := utf8.RuneCountInString(persona) <= SimulationPersonaMax
		turnsOK := maxTurns >= 1 && maxTurns <= SimulationMaxTurnsMax
		if (err == nil) != (personaOK && turnsOK) {
			t.Fatalf("persona %d runes, max_turns %d: %v", utf8.RuneCountInString(persona), maxTurns, err)
		}
		if err == nil {
			return
		}
		detail := errorDetail(err)
		if ErrorCode(err) != EINVALID || strings.Contains(detail, " persona:") == personaOK || strings.Contains(detail, " max_turns:") == turnsOK {
			t.Fatalf("persona ok %v, turns ok %v: %s", personaOK, turnsOK, detail)
		}
	})
}
