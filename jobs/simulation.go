package jobs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	json "github.com/goccy/go-json"

	"interviewd/kv"
	"interviewd/moderator"
)

// A simulation rehearses a study's interview: interviewd plays the interviewer with the
// same Script a participant meets (so verbatim questions are asked exactly as written)
// and the engine plays a synthetic participant. It is not an interview: no interview
// record is made, and the transcript lives only in the job, committed turn by turn.

// simSlots counts each organisation's simulations queued or running, all environments
// together. A slot is held by job id, so releasing is idempotent and a slot can be
// handed from the request that admitted the job to the worker that ends it.
type simSlots struct {
	mu    sync.Mutex
	limit int
	held  map[kv.ID]map[kv.ID]struct{} // org → job ids
}

func (s *simSlots) tryHold(org, job kv.ID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.held[org]) >= s.limit {
		return false
	}
	s.holdLocked(org, job)
	return true
}

// hold takes a slot whatever the count: a job already recorded is counted as it is.
func (s *simSlots) hold(org, job kv.ID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.holdLocked(org, job)
}

func (s *simSlots) holdLocked(org, job kv.ID) {
	if s.held[org] == nil {
		s.held[org] = map[kv.ID]struct{}{}
	}
	s.held[org][job] = struct{}{}
}

func (s *simSlots) release(org, job kv.ID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.held[org], job)
	if len(s.held[org]) == 0 {
		delete(s.held, org)
	}
}

// SimulationsHeld returns how many simulations of org are queued or running.
func (r *Runner) SimulationsHeld(org kv.ID) int {
	r.sims.mu.Lock()
	defer r.sims.mu.Unlock()
	return len(r.sims.held[org])
}

// SimulationLimit is how many simulations one organisation may have queued or running:
// the store enforces it across nodes when the job is recorded (kv.SimulationInput.Limit).
func (r *Runner) SimulationLimit() int { return r.sims.limit }

// AdmitSimulation reserves one of org's simulation slots for job before the caller
// records it. The slot is freed when the job ends (completed or failed); the caller
// calls release only when it does not record the job after all. It returns an ELIMIT
// error with reason "simulation_limit" when org already has its limit of simulations
// queued or running, and the "queue_full" ELIMIT error when the pool cannot take work.
func (r *Runner) AdmitSimulation(org, job kv.ID) (release func(), err error) {
	if err := r.Admit(kv.JobSimulation); err != nil {
		return nil, err
	}
	if !r.sims.tryHold(org, job) {
		return nil, kv.Errorf(kv.ELIMIT, "simulation_limit",
			fmt.Sprintf("Your organisation already has %d simulations queued or running; start another when one has finished.", r.sims.limit))
	}
	return func() { r.sims.release(org, job) }, nil
}

// runSimulation plays a simulation to its end, or to the end of its turn limit,
// committing each turn as it is made. It continues from the turns a previous run
// committed. An engine error ends the job failed; a shutdown leaves it for Start.
func (r *Runner) runSimulation(ctx context.Context, j kv.Job) error {
	p := j.Partition()
	spec, err := j.Spec()
	if err != nil {
		r.fail(j, "The simulation request could not be read; start a new simulation.")
		return err
	}
	if j, err = r.db.StartSimulation(ctx, p, j.ID); err != nil {
		return err
	}
	progress, err := j.Progress()
	if err != nil {
		r.fail(j, "The simulation transcript could not be read; start a new simulation.")
		return err
	}
	var script moderator.Script
	if len(progress.Script) > 0 {
		if err := json.Unmarshal(progress.Script, &script); err != nil {
			r.fail(j, "The simulation could not be resumed; start a new simulation.")
			return err
		}
	}
	st, err := r.db.FindStudyByID(ctx, p, *j.StudyID)
	if err != nil {
		if r.ctx.Err() != nil {
			return nil
		}
		r.fail(j, "The study no longer exists.")
		return err
	}
	var brief kv.Brief
	if st.Brief != nil {
		brief = *st.Brief
	}
	persona := strings.TrimSpace(spec.Persona)
	if persona == "" {
		persona = moderator.InventPersona(spec.Seed)
	}
	sim := simulation{r: r, job: j, brief: brief, persona: persona, seed: spec.Seed, maxTurns: spec.MaxTurns, script: script}
	sim.resume(progress.Turns)
	return sim.play(ctx)
}

// simulation is one run of a simulation job.
type simulation struct {
	r          *Runner
	job        kv.Job
	brief      kv.Brief
	persona    string
	seed       int64
	maxTurns   int
	script     moderator.Script
	transcript []moderator.Message // what the engines see: one message per transcript line
	turn       int                 // the last committed turn
}

// resume rebuilds the conversation from committed lines. Lines are committed a whole
// turn at a time, so the last one is always a participant's reply.
func (s *simulation) resume(lines []kv.SimulationLine) {
	for _, l := range lines {
		s.transcript = append(s.transcript, moderator.Message{Speaker: l.Speaker, Text: l.Text})
		s.turn = max(s.turn, l.TurnNumber)
	}
}

func (s *simulation) play(ctx context.Context) error {
	p := s.job.Partition()
	for s.turn < s.maxTurns {
		answer := ""
		if n := len(s.transcript); n > 0 && s.transcript[n-1].Speaker == kv.SpeakerParticipant {
			answer = s.transcript[n-1].Text
		}
		var msgs []string
		var next moderator.Script
		var done bool
		var err error
		if s.affordsFollowUp() {
			msgs, next, done, err = s.script.Next(ctx, s.r.mod, s.brief, nil, "", s.transcript, answer)
		} else {
			msgs, next, done = s.script.Onward(s.brief, nil)
		}
		if err != nil {
			return s.stopped(ctx, "interviewer", err)
		}
		turn := s.turn + 1
		// The script may say more than one thing at once (the greeting and the first
		// question); a turn is one interviewer message, so they are sent together.
		ask := kv.SimulationLine{Speaker: kv.SpeakerInterviewer, Text: strings.Join(msgs, "\n\n"), TurnNumber: turn}
		if done {
			var closing []kv.SimulationLine
			if len(msgs) > 0 {
				closing = append(closing, ask)
			}
			return s.saved(s.r.db.FinishSimulation(ctx, p, s.job.ID, closing))
		}
		s.transcript = append(s.transcript, moderator.Message{Speaker: ask.Speaker, Text: ask.Text})
		reply, err := s.r.mod.Participant(ctx, moderator.ParticipantRequest{Persona: s.persona, Seed: s.seed, Brief: s.brief, Transcript: s.transcript})
		if err != nil {
			return s.stopped(ctx, "participant", err)
		}
		answerLine := kv.SimulationLine{Speaker: kv.SpeakerParticipant, Text: reply, TurnNumber: turn}
		s.transcript = append(s.transcript, moderator.Message{Speaker: answerLine.Speaker, Text: answerLine.Text})
		position, err := json.Marshal(next)
		if err != nil {
			return err
		}
		if err := s.r.db.AppendSimulationTurn(ctx, p, s.job.ID, []kv.SimulationLine{ask, answerLine}, position); err != nil {
			return s.saved(err)
		}
		s.script, s.turn = next, turn
	}
	// The turn limit ended the conversation before the closing: the result says so.
	left, total := s.script.Unasked(s.brief, nil)
	return s.saved(s.r.db.FinishSimulationAtLimit(ctx, p, s.job.ID, stoppedAt(s.turn, left, total)))
}

// affordsFollowUp reports whether the turns left leave room for a follow-up now (one
// turn) and still one turn for each scripted question not yet asked and the closing.
// When they do not, the interviewer moves on: a rehearsal short of turns shows every
// question rather than follow-ups.
func (s *simulation) affordsFollowUp() bool {
	if s.script.Phase != moderator.PhaseVerbatim {
		return true // no follow-up is asked here: the script moves on by itself
	}
	left, _ := s.script.Unasked(s.brief, nil)
	return s.maxTurns-s.turn >= left+2
}

// stoppedAt is where a simulation its turn limit ended stands, for its result: how many
// turns it played and how many scripted questions it did not reach.
func stoppedAt(turns, left, total int) string {
	played := fmt.Sprintf("Stopped after %d turns, the turn limit", turns)
	if turns == 1 {
		played = "Stopped after 1 turn, the turn limit"
	}
	if left == 0 {
		return played + ", before the closing: every scripted question was asked."
	}
	return fmt.Sprintf("%s: %d of %d scripted questions not reached.", played, left, total)
}

// saved passes on a kv write's outcome; a failed write ends the job failed so that it
// is never left running, unless the runner is shutting down (Start resumes it) or the
// job has already ended.
func (s *simulation) saved(err error) error {
	if err == nil || s.r.ctx.Err() != nil || kv.ErrorCode(err) == kv.ECONFLICT {
		return nil
	}
	s.r.fail(s.job, "The simulation could not save its transcript; start a new simulation.")
	return err
}

// stopped ends the job failed after an engine error, with a message for the caller, or
// leaves it unfinished for the next Start when the runner is shutting down.
func (s *simulation) stopped(ctx context.Context, role string, err error) error {
	if s.r.ctx.Err() != nil {
		return nil
	}
	turn := s.turn + 1
	var msg string
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		msg = fmt.Sprintf("The simulation did not finish in time and stopped at turn %d; start a new simulation, perhaps with fewer turns.", turn)
	case errors.Is(err, moderator.ErrRefused):
		msg = fmt.Sprintf("The simulation stopped at turn %d: the model declined to play the %s.", turn, role)
	default:
		msg = fmt.Sprintf("The simulation stopped at turn %d: the model engine failed while playing the %s; start a new simulation.", turn, role)
	}
	s.r.fail(s.job, msg)
	return fmt.Errorf("simulation turn %d (%s): %w", turn, role, err)
}
