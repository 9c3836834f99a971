package jobs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"interviewd/kv"
	"interviewd/moderator"
	"interviewd/moderator/chattest"
)

// simFixture is an organisation with a study to rehearse, on a real bbolt file.
type simFixture struct {
	dir   string
	db    *kv.DB
	p     kv.Partition
	study kv.Study
}

func simBrief() kv.Brief {
	title := "Online groceries"
	return kv.Brief{
		Title:                 &title,
		Objectives:            []string{"Learn why people switch grocery delivery services"},
		PreInterviewQuestions: []string{"What is your role?"},
		VerbatimQuestions:     []string{"Tell me about the last time you ordered groceries online.", "What would make you switch services?"},
	}
}

func mustSimFixture(t *testing.T) *simFixture {
	t.Helper()
	f := &simFixture{dir: t.TempDir()}
	f.db = mustOpenDB(t, f.dir)
	t.Cleanup(func() { _ = f.db.Close() })
	ctx := context.Background()
	org, _, err := f.db.CreateOrg(ctx, kv.OrgInput{Name: "Sim", Email: "sim@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	f.p = kv.Partition{Org: org.ID, Env: kv.EnvLive}
	f.study = f.mustStudy(t, f.p, simBrief())
	return f
}

func (f *simFixture) mustStudy(t *testing.T, p kv.Partition, b kv.Brief) kv.Study {
	t.Helper()
	st, err := f.db.CreateStudy(context.Background(), kv.StudyInput{Partition: p, Brief: b})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// mustRunner starts a runner whose cleanup interrupts whatever is still running, as a
// crash would, so a test never waits on a held engine at the end.
func (f *simFixture) mustRunner(t *testing.T, cfg Config) *Runner {
	t.Helper()
	cfg.DB, cfg.Log = f.db, zerolog.Nop()
	r := NewRunner(cfg)
	t.Cleanup(func() { stopNow(r) })
	if err := r.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return r
}

func stopNow(r *Runner) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = r.Close(ctx)
}

// start admits, records and queues a simulation as the API does.
func (f *simFixture) start(t *testing.T, r *Runner, p kv.Partition, study kv.ID, persona string, maxTurns int) kv.Job {
	t.Helper()
	id := kv.NewV4()
	release, err := r.AdmitSimulation(p.Org, id)
	if err != nil {
		t.Fatalf("admit: %v", err)
	}
	j, err := f.db.CreateSimulationJob(context.Background(), kv.SimulationInput{Partition: p, JobID: id, StudyID: study, Persona: persona, MaxTurns: maxTurns}, nil)
	if err != nil {
		release()
		t.Fatal(err)
	}
	r.Enqueue(j)
	return j
}

// waitSim polls a simulation job until ok says so, with a deadline.
func (f *simFixture) waitSim(t *testing.T, p kv.Partition, id kv.ID, what string, ok func(kv.Job, kv.SimulationProgress) bool) (kv.Job, kv.SimulationProgress) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		j, err := f.db.FindJobByID(context.Background(), p, kv.JobSimulation, id)
		if err != nil {
			t.Fatal(err)
		}
		pr, err := j.Progress()
		if err != nil {
			t.Fatal(err)
		}
		if ok(j, pr) {
			return j, pr
		}
		if time.Now().After(deadline) {
			t.Fatalf("simulation %s not %s after 10 s: %+v %+v", id, what, j, pr)
		}
		time.Sleep(time.Millisecond)
	}
}

func ended(j kv.Job, _ kv.SimulationProgress) bool { return j.Done }

// waitHeld polls until org holds n simulation slots: a slot frees just after the job's
// record ends.
func waitHeld(t *testing.T, r *Runner, org kv.ID, n int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for r.SimulationsHeld(org) != n {
		if time.Now().After(deadline) {
			t.Fatalf("org holds %d simulation slots, want %d", r.SimulationsHeld(org), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// checkTranscript checks the shape every simulation transcript has: turns numbered
// 1..n in order, each an interviewer message then the participant's reply, except a
// closing message that ends the interview; and the brief's questions asked word for
// word, in order.
func checkTranscript(t *testing.T, lines []kv.SimulationLine, b kv.Brief) (turns int, closed bool) {
	t.Helper()
	for i := 0; i < len(lines); i += 2 {
		ask := lines[i]
		turns++
		if ask.Speaker != kv.SpeakerInterviewer || ask.TurnNumber != turns || ask.Text == "" {
			t.Fatalf("line %d: %+v, want interviewer turn %d", i, ask, turns)
		}
		if i+1 == len(lines) {
			if !strings.HasSuffix(ask.Text, moderator.ScriptClosing) {
				t.Fatalf("the last turn has no reply but is not the closing: %+v", ask)
			}
			closed = true
			break
		}
		if reply := lines[i+1]; reply.Speaker != kv.SpeakerParticipant || reply.TurnNumber != turns || reply.Text == "" {
			t.Fatalf("line %d: %+v, want participant turn %d", i+1, reply, turns)
		}
	}
	asked := 0
	questions := append(append([]string(nil), b.PreInterviewQuestions...), b.VerbatimQuestions...)
	for _, l := range lines {
		if l.Speaker == kv.SpeakerInterviewer && asked < len(questions) && strings.HasSuffix(l.Text, questions[asked]) {
			asked++
		}
	}
	if closed && asked != len(questions) {
		t.Fatalf("closed after asking %d of %d questions verbatim", asked, len(questions))
	}
	return turns, closed
}

// askedVerbatim counts the brief's scripted questions the interviewer asked in lines,
// word for word, in order.
func askedVerbatim(lines []kv.SimulationLine, b kv.Brief) int {
	asked := 0
	questions := append(append([]string(nil), b.PreInterviewQuestions...), b.VerbatimQuestions...)
	for _, l := range lines {
		if l.Speaker == kv.SpeakerInterviewer && asked < len(questions) && strings.HasSuffix(l.Text, questions[asked]) {
			asked++
		}
	}
	return asked
}

func TestSimulationTurns(t *testing.T) {
	f := mustSimFixture(t)
	r := f.mustRunner(t, Config{Moderator: moderator.NewBuiltin()})
	long := simBrief()
	long.VerbatimQuestions = nil
	for i := 1; i <= 250; i++ {
		long.VerbatimQuestions = append(long.VerbatimQuestions, fmt.Sprintf("Question number %d: what happened next?", i))
	}
	longStudy := f.mustStudy(t, f.p, long)
	emptyStudy := f.mustStudy(t, f.p, kv.Brief{})
	cases := []struct {
		name       string
		study      kv.Study
		maxTurns   int
		wantTurns  int // 0: fewer than maxTurns, ended by the script
		wantClosed bool
	}{
		{name: "OK_OneTurn", study: f.study, maxTurns: 1, wantTurns: 1},
		{name: "OK_ScriptTurnsReachTheClosing", study: f.study, maxTurns: moderator.ScriptTurns(simBrief()), wantClosed: true},
		{name: "OK_ThreeTurns", study: f.study, maxTurns: 3, wantTurns: 3},
		{name: "OK_ScriptEndsFirst", study: f.study, maxTurns: 200, wantClosed: true},
		{name: "OK_TwoHundredTurns", study: longStudy, maxTurns: 200, wantTurns: 200},
		{name: "OK_EmptyBriefGreetsAndCloses", study: emptyStudy, maxTurns: 12, wantTurns: 1, wantClosed: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j := f.start(t, r, f.p, c.study.ID, "", c.maxTurns)
			j, pr := f.waitSim(t, f.p, j.ID, "done", ended)
			if j.Status != kv.SimulationCompleted || j.Error != "" {
				t.Fatalf("ended %s %q", j.Status, j.Error)
			}
			turns, closed := checkTranscript(t, pr.Turns, *c.study.Brief)
			if closed != c.wantClosed || (c.wantTurns > 0 && turns != c.wantTurns) || turns > c.maxTurns {
				t.Fatalf("%d turns (closed %v), want %d (closed %v) of at most %d", turns, closed, c.wantTurns, c.wantClosed, c.maxTurns)
			}
			if !strings.HasPrefix(pr.Turns[0].Text, moderator.ScriptGreeting) {
				t.Fatalf("first message %q", pr.Turns[0].Text)
			}
			// A run the turn limit ended says so, with the questions it did not reach.
			b := *c.study.Brief
			total := len(b.PreInterviewQuestions) + len(b.VerbatimQuestions)
			want := ""
			if !closed {
				want = stoppedAt(turns, total-askedVerbatim(pr.Turns, b), total)
			}
			if pr.Stopped != want {
				t.Fatalf("stopped %q, want %q", pr.Stopped, want)
			}
		})
	}
	t.Run("OK_NoInterviewRecords", func(t *testing.T) {
		page, err := f.db.FindInterviews(context.Background(), kv.InterviewFilter{Partition: f.p, Limit: 200})
		if err != nil || len(page.Items) != 0 {
			t.Fatalf("simulations made interviews: %+v %v", page.Items, err)
		}
	})
}

func TestSimulationPersona(t *testing.T) {
	f := mustSimFixture(t)
	r := f.mustRunner(t, Config{Moderator: moderator.NewBuiltin()})
	ctx := context.Background()
	t.Run("OK_GivenPersona", func(t *testing.T) {
		persona := "I'm a nurse who works night shifts and hates waiting for deliveries."
		j := f.start(t, r, f.p, f.study.ID, "  "+persona+"\n", 4)
		j, pr := f.waitSim(t, f.p, j.ID, "done", ended)
		spec, err := j.Spec()
		if err != nil {
			t.Fatal(err)
		}
		// The reply to "What is your role?" speaks as the persona.
		if !strings.Contains(pr.Turns[1].Text, "nurse") {
			t.Fatalf("role reply %q ignores the persona", pr.Turns[1].Text)
		}
		// Every reply is the engine's, in character for the persona given (trimmed).
		var transcript []moderator.Message
		for _, l := range pr.Turns {
			if l.Speaker == kv.SpeakerParticipant {
				want, err := moderator.NewBuiltin().Participant(ctx, moderator.ParticipantRequest{Persona: persona, Seed: spec.Seed, Brief: simBrief(), Transcript: transcript})
				if err != nil || l.Text != want {
					t.Fatalf("turn %d reply %q, want %q (%v)", l.TurnNumber, l.Text, want, err)
				}
			}
			transcript = append(transcript, moderator.Message{Speaker: l.Speaker, Text: l.Text})
		}
	})
	t.Run("OK_InventedPersonaFromSeed", func(t *testing.T) {
		j := f.start(t, r, f.p, f.study.ID, "", 1)
		j, pr := f.waitSim(t, f.p, j.ID, "done", ended)
		spec, err := j.Spec()
		if err != nil {
			t.Fatal(err)
		}
		invented := moderator.InventPersona(spec.Seed)
		want, err := moderator.NewBuiltin().Participant(ctx, moderator.ParticipantRequest{Persona: invented, Seed: spec.Seed, Brief: simBrief(),
			Transcript: []moderator.Message{{Speaker: kv.SpeakerInterviewer, Text: pr.Turns[0].Text}}})
		if err != nil {
			t.Fatal(err)
		}
		if len(pr.Turns) != 2 || pr.Turns[1].Text != want {
			t.Fatalf("reply %q, want %q from persona %q", pr.Turns[1].Text, want, invented)
		}
		role := strings.SplitN(strings.SplitN(invented, "-year-old ", 2)[1], " who ", 2)[0]
		if !strings.Contains(pr.Turns[1].Text, role) {
			t.Fatalf("reply %q does not speak as the invented %q", pr.Turns[1].Text, role)
		}
	})
}

// TestSimulationGrowsTurnByTurn holds a simulation at each model call and watches its
// transcript grow one committed turn at a time while it is running.
func TestSimulationGrowsTurnByTurn(t *testing.T) {
	g := chattest.NewGated(t)
	f := mustSimFixture(t)
	r := f.mustRunner(t, Config{Moderator: gatedEngine(t, g)})
	// Five turns leave room for a follow-up after each verbatim question.
	j := f.start(t, r, f.p, f.study.ID, "", 5)
	lines := func(n int) func(kv.Job, kv.SimulationProgress) bool {
		return func(j kv.Job, pr kv.SimulationProgress) bool { return len(pr.Turns) == n }
	}
	g.WaitArrived(t, 1) // turn 1: the participant's reply
	if got, _ := f.waitSim(t, f.p, j.ID, "running", lines(0)); got.Status != kv.SimulationRunning {
		t.Fatalf("status %s while the first reply is pending", got.Status)
	}
	g.Let(t, chattest.Answer{Text: "I'm a nurse."})
	g.WaitArrived(t, 1) // turn 2: the reply to the first verbatim question (no probe after a screener)
	got, pr := f.waitSim(t, f.p, j.ID, "at turn 1", lines(2))
	if got.Status != kv.SimulationRunning || pr.Turns[1].Text != "I'm a nurse." || pr.Turns[1].TurnNumber != 1 {
		t.Fatalf("after turn 1: %s %+v", got.Status, pr.Turns)
	}
	g.Let(t, chattest.Answer{Text: "Last Tuesday, in a hurry."})
	g.WaitArrived(t, 1) // turn 3 starts with a probe request
	got, pr = f.waitSim(t, f.p, j.ID, "at turn 2", lines(4))
	if got.Status != kv.SimulationRunning || pr.Turns[2].Text != simBrief().VerbatimQuestions[0] || pr.Turns[3].TurnNumber != 2 {
		t.Fatalf("after turn 2: %s %+v", got.Status, pr.Turns)
	}
	g.Let(t, chattest.Answer{}) // no probe: on to the next verbatim question
	g.WaitArrived(t, 1)
	g.Let(t, chattest.Answer{Text: "A cheaper delivery slot."})
	g.WaitArrived(t, 1)         // turn 4 starts with a probe request
	g.Let(t, chattest.Answer{}) // none: the closing
	got, pr = f.waitSim(t, f.p, j.ID, "done", ended)
	if got.Status != kv.SimulationCompleted || len(pr.Turns) != 7 || pr.Turns[4].Text != simBrief().VerbatimQuestions[1] || pr.Turns[5].Text != "A cheaper delivery slot." ||
		pr.Turns[6].Text != moderator.ScriptClosing || pr.Stopped != "" {
		t.Fatalf("final: %s %+v", got.Status, pr)
	}
}

func TestSimulationEngineErrorFails(t *testing.T) {
	g := chattest.NewGated(t)
	f := mustSimFixture(t)
	r := f.mustRunner(t, Config{Moderator: gatedEngine(t, g)})
	j := f.start(t, r, f.p, f.study.ID, "", 5)
	g.WaitArrived(t, 1)
	g.Let(t, chattest.Answer{Text: "First."})
	g.WaitArrived(t, 1)
	g.Let(t, chattest.Answer{Fail: true})
	got, pr := f.waitSim(t, f.p, j.ID, "done", ended)
	if got.Status != kv.SimulationFailed || !strings.Contains(got.Error, "turn 2") || !strings.Contains(got.Error, "participant") || len(pr.Turns) != 2 {
		t.Fatalf("failed job %s %q %+v", got.Status, got.Error, pr.Turns)
	}
	waitHeld(t, r, f.p.Org, 0)
}

func TestSimulationTimeoutFails(t *testing.T) {
	g := chattest.NewGated(t)
	f := mustSimFixture(t)
	r := f.mustRunner(t, Config{Moderator: gatedEngine(t, g), SimulationTimeout: 50 * time.Millisecond})
	j := f.start(t, r, f.p, f.study.ID, "", 5)
	got, _ := f.waitSim(t, f.p, j.ID, "done", ended) // the gate never opens
	if got.Status != kv.SimulationFailed || !strings.Contains(got.Error, "did not finish in time") {
		t.Fatalf("timed out job %s %q", got.Status, got.Error)
	}
	waitHeld(t, r, f.p.Org, 0)
}

// TestSimulationLimit: three simulations of one organisation (across its environments)
// hold every slot; a fourth is refused until one ends, by completing or by failing.
func TestSimulationLimit(t *testing.T) {
	g := chattest.NewGated(t)
	f := mustSimFixture(t)
	r := f.mustRunner(t, Config{Moderator: gatedEngine(t, g)})
	testEnv := kv.Partition{Org: f.p.Org, Env: kv.EnvTest}
	testStudy := f.mustStudy(t, testEnv, simBrief())
	f.start(t, r, f.p, f.study.ID, "", 1)
	f.start(t, r, f.p, f.study.ID, "", 1)
	f.start(t, r, testEnv, testStudy.ID, "", 1)
	g.WaitArrived(t, 3)
	refused := func(t *testing.T) {
		t.Helper()
		release, err := r.AdmitSimulation(f.p.Org, kv.NewV4())
		var ke *kv.Error
		if err == nil || !errors.As(err, &ke) || ke.Code != kv.ELIMIT || ke.Reason != "simulation_limit" {
			if release != nil {
				release()
			}
			t.Fatalf("fourth simulation: %v", err)
		}
	}
	refused(t)
	t.Run("OK_OtherOrgUnaffected", func(t *testing.T) {
		release, err := r.AdmitSimulation(kv.NewV4(), kv.NewV4())
		if err != nil {
			t.Fatal(err)
		}
		release()
	})
	t.Run("OK_ReleaseOfUnrecordedJob", func(t *testing.T) {
		r2 := f.mustRunner(t, Config{Moderator: moderator.NewBuiltin(), SimulationLimit: 1})
		org := kv.NewV4()
		release, err := r2.AdmitSimulation(org, kv.NewV4())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r2.AdmitSimulation(org, kv.NewV4()); kv.ErrorCode(err) != kv.ELIMIT {
			t.Fatalf("over a limit of 1: %v", err)
		}
		release()
		release() // idempotent
		if r2.SimulationsHeld(org) != 0 {
			t.Fatal("slot still held after release")
		}
	})
	t.Run("OK_SlotFreesOnCompletion", func(t *testing.T) {
		g.Let(t, chattest.Answer{Text: "Done."})
		waitHeld(t, r, f.p.Org, 2)
		f.start(t, r, f.p, f.study.ID, "", 1) // takes the freed slot
		g.WaitArrived(t, 1)
		refused(t)
	})
	t.Run("OK_SlotFreesOnFailure", func(t *testing.T) {
		g.Let(t, chattest.Answer{Fail: true})
		waitHeld(t, r, f.p.Org, 2)
		release, err := r.AdmitSimulation(f.p.Org, kv.NewV4())
		if err != nil {
			t.Fatalf("after a failure: %v", err)
		}
		release()
	})
}

// TestSimulationRestart: simulations are interrupted mid-conversation; a new runner on
// the same file counts them against the limit again, continues each from its last
// committed turn, and frees the slots as they complete.
func TestSimulationRestart(t *testing.T) {
	g1 := chattest.NewGated(t)
	f := mustSimFixture(t)
	ctx := context.Background()
	first := NewRunner(Config{DB: f.db, Moderator: gatedEngine(t, g1), Log: zerolog.Nop()})
	var ids []kv.ID
	for i := 0; i < 3; i++ {
		ids = append(ids, f.start(t, first, f.p, f.study.ID, "", 3).ID)
	}
	g1.WaitArrived(t, 3)
	g1.Let(t, chattest.Answer{Text: "Said before the restart."})
	g1.WaitArrived(t, 1) // that simulation has committed turn 1 and waits on turn 2
	stopNow(first)
	partial := kv.ID{}
	for _, id := range ids {
		j, pr := f.waitSim(t, f.p, id, "left unfinished", func(kv.Job, kv.SimulationProgress) bool { return true })
		if j.Done || j.Status != kv.SimulationRunning {
			t.Fatalf("interrupted simulation was ended: %+v", j)
		}
		if len(pr.Turns) == 2 {
			partial = id
		}
	}
	if partial.IsZero() {
		t.Fatal("no simulation committed its first turn before the restart")
	}
	_ = f.db.Close()
	f.db = mustOpenDB(t, f.dir)

	g2 := chattest.NewGated(t)
	second := f.mustRunner(t, Config{Moderator: gatedEngine(t, g2)})
	if n := second.SimulationsHeld(f.p.Org); n != 3 {
		t.Fatalf("after restart the org holds %d slots, want 3", n)
	}
	if _, err := second.AdmitSimulation(f.p.Org, kv.NewV4()); kv.ErrorCode(err) != kv.ELIMIT {
		t.Fatalf("fourth simulation after restart: %v", err)
	}
	// Answer every model call until all three complete.
	deadline := time.Now().Add(60 * time.Second)
	for done := 0; done < 3; {
		select {
		case <-g2.Arrived:
			g2.Let(t, chattest.Answer{Text: "Said after the restart."})
		case <-time.After(time.Millisecond):
		}
		done = 0
		for _, id := range ids {
			if j, _ := f.db.FindJobByID(ctx, f.p, kv.JobSimulation, id); j.Done {
				done++
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of 3 resumed simulations done after 10 s", done)
		}
	}
	for _, id := range ids {
		j, pr := f.waitSim(t, f.p, id, "done", ended)
		turns, _ := checkTranscript(t, pr.Turns, simBrief())
		if j.Status != kv.SimulationCompleted || turns != 3 || j.Attempts != 2 {
			t.Fatalf("resumed %s: %s, %d turns, %d attempts", id, j.Status, turns, j.Attempts)
		}
		if id == partial && pr.Turns[1].Text != "Said before the restart." {
			t.Fatalf("the resumed simulation started over: %+v", pr.Turns)
		}
	}
	waitHeld(t, second, f.p.Org, 0)
}

// TestSimulationRestartGivesUp: a simulation interrupted too often is failed at start
// and holds no slot.
func TestSimulationRestartGivesUp(t *testing.T) {
	f := mustSimFixture(t)
	ctx := context.Background()
	j, err := f.db.CreateSimulationJob(ctx, kv.SimulationInput{Partition: f.p, JobID: kv.NewV4(), StudyID: f.study.ID, MaxTurns: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := f.db.StartJobAttempt(ctx, f.p, j.ID); err != nil {
			t.Fatal(err)
		}
	}
	r := f.mustRunner(t, Config{Moderator: moderator.NewBuiltin(), MaxAttempts: 3})
	got, _ := f.waitSim(t, f.p, j.ID, "done", ended)
	if got.Status != kv.SimulationFailed || got.Error == "" {
		t.Fatalf("poison simulation %+v", got)
	}
	if n := r.SimulationsHeld(f.p.Org); n != 0 {
		t.Fatalf("a given-up simulation holds %d slots", n)
	}
}

func TestStoppedAt(t *testing.T) {
	for _, c := range []struct {
		turns, left, total int
		want               string
	}{
		{12, 2, 7, "Stopped after 12 turns, the turn limit: 2 of 7 scripted questions not reached."},
		{1, 3, 4, "Stopped after 1 turn, the turn limit: 3 of 4 scripted questions not reached."},
		{9, 0, 4, "Stopped after 9 turns, the turn limit, before the closing: every scripted question was asked."},
	} {
		if got := stoppedAt(c.turns, c.left, c.total); got != c.want {
			t.Errorf("stoppedAt(%d, %d, %d) = %q, want %q", c.turns, c.left, c.total, got, c.want)
		}
	}
}

// TestSimulationShortOfTurnsAsksEveryQuestion: when the turn limit leaves no room for
// follow-ups, the interviewer leaves them out, so a limit of one turn per scripted
// question and one for the closing still asks every question; with room to spare the
// follow-ups come back.
func TestSimulationShortOfTurnsAsksEveryQuestion(t *testing.T) {
	f := mustSimFixture(t)
	r := f.mustRunner(t, Config{Moderator: moderator.NewBuiltin()})
	b := simBrief()
	b.VerbatimQuestions = []string{"How do you plan the weekly shop?", "What gets in the way?", "Who helps you?", "What do you use?", "What would you change?"}
	st := f.mustStudy(t, f.p, b)
	questions := len(b.PreInterviewQuestions) + len(b.VerbatimQuestions)
	for _, c := range []struct {
		name      string
		maxTurns  int
		followUps bool
	}{
		{"OK_OneTurnEach", questions + 1, false},
		{"OK_Default", kv.SimulationMaxTurnsDefault, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			j := f.start(t, r, f.p, st.ID, "", c.maxTurns)
			_, pr := f.waitSim(t, f.p, j.ID, "done", ended)
			turns, closed := checkTranscript(t, pr.Turns, b)
			if !closed || askedVerbatim(pr.Turns, b) != questions || pr.Stopped != "" {
				t.Fatalf("%d turns of %d, closed %v, asked %d of %d, stopped %q", turns, c.maxTurns, closed, askedVerbatim(pr.Turns, b), questions, pr.Stopped)
			}
			if got := turns > questions+1; got != c.followUps {
				t.Fatalf("%d turns for %d questions: follow-ups %v, want %v", turns, questions, got, c.followUps)
			}
		})
	}
}
