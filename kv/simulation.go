package kv

import (
	"context"
	"encoding/binary"
	"fmt"
	"unicode/utf8"

	json "github.com/goccy/go-json"
)

// Simulation job statuses as the API shows them.
const (
	SimulationQueued    = "queued"
	SimulationRunning   = "running"
	SimulationCompleted = "completed"
	SimulationFailed    = "failed"
)

// Simulation request limits (DECISIONS §8).
const (
	SimulationPersonaMax      = 10000
	SimulationMaxTurnsMax     = 200
	SimulationMaxTurnsDefault = 12
)

// Transcript speakers.
const (
	SpeakerInterviewer = "interviewer"
	SpeakerParticipant = "participant"
)

// SimulationInput starts a simulation of a study's interview.
type SimulationInput struct {
	Partition Partition
	JobID     ID // chosen by the caller so its response can be rendered before commit
	StudyID   ID
	Persona   string // "" lets the engine invent a participant
	MaxTurns  int    // 1 to SimulationMaxTurnsMax
	// Limit, when positive, is how many simulations the organisation may have queued
	// or running, all environments and all nodes together: the job is refused
	// (ELIMIT simulation_limit) in the transaction that would record one more.
	Limit int
}

// SimulationSpec is what a simulation job was asked to do (its Input).
type SimulationSpec struct {
	Persona  string `json:"persona,omitempty"`
	MaxTurns int    `json:"max_turns"`
	// Seed makes replies repeatable: the same job replays the same conversation with a
	// deterministic engine, also when it is resumed after a restart.
	Seed int64 `json:"seed"`
}

// SimulationLine is one message of a simulation transcript. A turn is one interviewer
// message and the participant's reply; both carry the turn's number (1-based).
type SimulationLine struct {
	Speaker    string `json:"speaker"`
	Text       string `json:"text"`
	TurnNumber int    `json:"turn_number"`
}

// SimulationProgress is a simulation's transcript so far (its Output). Script is the
// interviewer's opaque position after the last committed turn, so an interrupted
// simulation continues where it stopped instead of starting over.
type SimulationProgress struct {
	Turns  []SimulationLine `json:"turns"`
	Script json.RawMessage  `json:"script,omitempty"`
	// Stopped says, for a simulation completed at its turn limit before the interview's
	// end, where it stopped ("Stopped after 12 turns, the turn limit: 2 of 7 questions
	// not reached."); empty for one that ran to the closing.
	Stopped string `json:"stopped,omitempty"`
}

// Spec returns a simulation job's request. It returns an error when Input is not a
// simulation spec.
func (j Job) Spec() (SimulationSpec, error) {
	var s SimulationSpec
	if len(j.Input) == 0 {
		return s, Errorf(EINVALID, "simulation_input", "The job carries no simulation request.")
	}
	return s, jsonUnmarshal(j.Input, &s)
}

// Progress returns a simulation job's transcript so far (empty before the first turn).
// It returns an error when Output is not simulation progress.
func (j Job) Progress() (SimulationProgress, error) {
	var pr SimulationProgress
	if len(j.Output) == 0 {
		return pr, nil
	}
	return pr, jsonUnmarshal(j.Output, &pr)
}

// simulationSeed derives a job's seed from its id: fixed for the job's life, and small
// enough to survive a JSON number in any client (53 bits).
func simulationSeed(id ID) int64 {
	return int64(binary.BigEndian.Uint64(id[8:]) & (1<<53 - 1))
}

// ValidateSimulation checks a simulation request's persona and max_turns; the failures
// are EINVALID at ["persona"] and ["max_turns"].
func ValidateSimulation(persona string, maxTurns int) error {
	var bad []FieldError
	if utf8.RuneCountInString(persona) > SimulationPersonaMax {
		bad = append(bad, FieldError{Loc: []any{"persona"}, Msg: fmt.Sprintf("String should have at most %d characters.", SimulationPersonaMax), Type: "string_too_long",
			Ctx: map[string]any{"max_length": SimulationPersonaMax}})
	}
	if maxTurns < 1 || maxTurns > SimulationMaxTurnsMax {
		bad = append(bad, FieldError{Loc: []any{"max_turns"}, Msg: "max_turns must be between 1 and 200.", Type: "value_error",
			Ctx: map[string]any{"ge": 1, "le": SimulationMaxTurnsMax}})
	}
	if bad != nil {
		return Invalid(bad...)
	}
	return nil
}

// CreateSimulationJob records a queued simulation job in one transaction with its
// idempotency record (idem may be nil). ENOTFOUND when the study is outside the
// partition; ECONFLICT "study_live" when the study is live; EINVALID for a request
// outside the limits.
func (db *DB) CreateSimulationJob(ctx context.Context, in SimulationInput, idem *IdemWrite) (Job, error) {
	if err := ValidateSimulation(in.Persona, in.MaxTurns); err != nil {
		return Job{}, err
	}
	spec, err := json.Marshal(SimulationSpec{Persona: in.Persona, MaxTurns: in.MaxTurns, Seed: simulationSeed(in.JobID)})
	if err != nil {
		return Job{}, err
	}
	now := db.Now()
	study := in.StudyID
	j := Job{ID: in.JobID, Kind: JobSimulation, OrgID: in.Partition.Org, Env: in.Partition.Env, Status: SimulationQueued,
		StudyID: &study, Input: spec, CreatedAt: now, UpdatedAt: now}
	err = db.update(ctx, func(tx Tx) error {
		st, err := studyByID(tx, in.Partition, in.StudyID)
		if err != nil {
			return err
		}
		if st.Mode == ModeLive {
			return ErrStudyLive()
		}
		j.ThreadID = st.ThreadID
		if in.Limit > 0 {
			n, err := countOpenSimulations(tx, in.Partition.Org)
			if err != nil {
				return err
			}
			if n >= in.Limit {
				return ErrSimulationLimit(in.Limit)
			}
		}
		if err := db.putJobRecord(tx, j); err != nil {
			return err
		}
		return db.writeIdem(tx, idem)
	})
	return j, err
}

// ErrSimulationLimit is the ELIMIT refusal of one simulation more than limit.
func ErrSimulationLimit(limit int) *Error {
	return Errorf(ELIMIT, "simulation_limit",
		fmt.Sprintf("Your organisation already has %d simulations queued or running; start another when one has finished.", limit))
}

// ErrStudyLive is the ECONFLICT refusal to simulate a live study.
func ErrStudyLive() *Error {
	return Errorf(ECONFLICT, "study_live", "This study is live: simulations rehearse studies that are not collecting real interviews. Set its mode to test to simulate it.")
}

// simulationJob loads a simulation job that has not ended: ENOTFOUND for none (or
// another kind's), ECONFLICT "job_done" once it has ended.
func simulationJob(tx Tx, p Partition, id ID) (Job, error) {
	j, err := jobByID(tx, p, id)
	if err != nil {
		return Job{}, err
	}
	if j.Kind != JobSimulation {
		return Job{}, notFound("Job")
	}
	if j.Done {
		return Job{}, Errorf(ECONFLICT, "job_done", "The job has already ended.")
	}
	return j, nil
}

// StartSimulation marks a simulation running (from queued, or again after a restart)
// and returns it with the transcript committed so far. ECONFLICT once it has ended.
func (db *DB) StartSimulation(ctx context.Context, p Partition, id ID) (Job, error) {
	var j Job
	err := db.update(ctx, func(tx Tx) error {
		var err error
		if j, err = simulationJob(tx, p, id); err != nil {
			return err
		}
		j.Status = SimulationRunning
		return db.putJob(ctx, tx, j)
	})
	return j, err
}

// AppendSimulationTurn commits one turn's lines and the interviewer's position after
// it, so the transcript grows turn by turn while the job runs. ECONFLICT once the job
// has ended.
func (db *DB) AppendSimulationTurn(ctx context.Context, p Partition, id ID, lines []SimulationLine, script json.RawMessage) error {
	return db.update(ctx, func(tx Tx) error {
		j, err := simulationJob(tx, p, id)
		if err != nil {
			return err
		}
		return db.putProgress(ctx, tx, j, lines, script, false, "")
	})
}

// FinishSimulation commits the last lines (the interviewer's closing, or none when the
// turn limit ended the conversation) and marks the job completed. ECONFLICT once the
// job has ended.
func (db *DB) FinishSimulation(ctx context.Context, p Partition, id ID, lines []SimulationLine) error {
	return db.update(ctx, func(tx Tx) error {
		j, err := simulationJob(tx, p, id)
		if err != nil {
			return err
		}
		return db.putProgress(ctx, tx, j, lines, nil, true, "")
	})
}

// FinishSimulationAtLimit marks a simulation the turn limit stopped completed, with
// stopped (a sentence for SimulationProgress.Stopped) in the same transaction.
// ECONFLICT once the job has ended.
func (db *DB) FinishSimulationAtLimit(ctx context.Context, p Partition, id ID, stopped string) error {
	return db.update(ctx, func(tx Tx) error {
		j, err := simulationJob(tx, p, id)
		if err != nil {
			return err
		}
		return db.putProgress(ctx, tx, j, nil, nil, true, stopped)
	})
}

func (db *DB) putProgress(ctx context.Context, tx Tx, j Job, lines []SimulationLine, script json.RawMessage, done bool, stopped string) error {
	pr, err := j.Progress()
	if err != nil {
		return err
	}
	pr.Turns = append(pr.Turns, lines...)
	pr.Stopped = stopped
	if script != nil {
		pr.Script = script
	}
	if done {
		pr.Script = nil
		j.Status, j.Done = SimulationCompleted, true
	}
	if j.Output, err = json.Marshal(pr); err != nil {
		return err
	}
	return db.putJob(ctx, tx, j)
}
