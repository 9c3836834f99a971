package research

import (
	"context"
	"strings"

	"interviewd/kv"
	"interviewd/moderator"
	"interviewd/server/pipeline"
)

// SimulateStudyInput is the simulation request.
type SimulateStudyInput struct {
	StudyID  kv.ID   `path:"study_id" doc:"The study to rehearse; it must not be live."`
	Persona  *string `json:"persona" maxLength:"10000" doc:"Plain-language description of the synthetic participant, up to 10,000 characters; when omitted or null a plausible participant is invented."`
	MaxTurns *int    `json:"max_turns" min:"1" max:"200" default:"12" doc:"Most interview turns to play, 1 to 200 (default 12); a turn is one interviewer message and the participant's reply. The interview may finish in fewer. When turns run short the interviewer leaves out follow-ups, so every scripted question is asked if the limit allows one turn per question and the closing; a run the limit stops says so in notice."`
}

// FullSimulationTurns is the turn limit the app offers for a study's rehearsal: enough
// for every scripted question of brief with every follow-up an engine may ask
// (moderator.ScriptTurns), so a rehearsal shows the whole interview as participants
// will meet it; at least the API's default 12, at most 200.
func FullSimulationTurns(brief *kv.Brief) int {
	if brief == nil {
		return kv.SimulationMaxTurnsDefault
	}
	return min(kv.SimulationMaxTurnsMax, max(kv.SimulationMaxTurnsDefault, moderator.ScriptTurns(*brief)))
}

// SimulationJob is the handle a simulation start returns.
type SimulationJob struct {
	JobID string `json:"job_id"`
}

func (s *Service) simulateStudy(ctx context.Context, p *pipeline.Principal, in *SimulateStudyInput) (SimulationJob, error) {
	persona := ""
	if in.Persona != nil {
		persona = strings.TrimSpace(*in.Persona)
	}
	// The study is checked before a slot is taken, so a live or unknown study is refused
	// for what it is even when the organisation is at its limit; the write checks again.
	st, err := s.DB.FindStudyByID(ctx, p.Partition, in.StudyID)
	if err != nil {
		return SimulationJob{}, err
	}
	if st.Mode == kv.ModeLive {
		return SimulationJob{}, kv.ErrStudyLive()
	}
	maxTurns := kv.SimulationMaxTurnsDefault
	if in.MaxTurns != nil {
		maxTurns = *in.MaxTurns
	}
	jobID := kv.NewV4()
	release, err := s.Jobs.AdmitSimulation(p.Partition.Org, jobID)
	if err != nil {
		return SimulationJob{}, err
	}
	out := SimulationJob{JobID: jobID.String()}
	job, err := s.DB.CreateSimulationJob(ctx, kv.SimulationInput{
		Partition: p.Partition, JobID: jobID, StudyID: st.ID, Persona: persona, MaxTurns: maxTurns,
		Limit: s.Jobs.SimulationLimit(),
	}, pipeline.IdemWrite(ctx, out))
	if err != nil {
		release()
		return SimulationJob{}, err
	}
	s.Jobs.Enqueue(job)
	return out, nil
}

// SimulationStatus is a simulation's state and its transcript so far.
type SimulationStatus struct {
	Status string           `json:"status" enum:"queued,running,completed,failed"`
	Ready  bool             `json:"ready" doc:"True only when status is completed: the transcript is final."`
	Turns  []SimulationTurn `json:"turns" component:"SimulationTranscriptTurn" doc:"The transcript so far, in order; it grows turn by turn while the simulation runs."`
	Error  *string          `json:"error" doc:"Why the simulation failed; null unless status is failed."`
	Notice *string          `json:"notice,omitempty" doc:"Present only when the simulation completed at its turn limit before the interview's end: how many turns it played and how many scripted questions it did not reach, as in: Stopped after 12 turns, the turn limit: 2 of 7 scripted questions not reached."`
}

// SimulationTurn is one message of a simulation transcript.
type SimulationTurn struct {
	Speaker    string `json:"speaker" enum:"interviewer,participant"`
	Text       string `json:"text"`
	TurnNumber int    `json:"turn_number" doc:"The turn (1-based) this message belongs to: an interviewer message and the participant's reply share it."`
}

func (s *Service) getSimulationStatus(ctx context.Context, p *pipeline.Principal, in *JobIDInput) (SimulationStatus, error) {
	id, err := in.id()
	if err != nil {
		return SimulationStatus{}, err
	}
	j, err := s.DB.FindJobByID(ctx, p.Partition, kv.JobSimulation, id)
	if err != nil {
		return SimulationStatus{}, err
	}
	progress, err := j.Progress()
	if err != nil {
		return SimulationStatus{}, err
	}
	out := SimulationStatus{Status: j.Status, Ready: j.Status == kv.SimulationCompleted, Turns: make([]SimulationTurn, len(progress.Turns))}
	for i, l := range progress.Turns {
		out.Turns[i] = SimulationTurn{Speaker: l.Speaker, Text: l.Text, TurnNumber: l.TurnNumber}
	}
	if progress.Stopped != "" && j.Status == kv.SimulationCompleted {
		notice := progress.Stopped
		out.Notice = &notice
	}
	if j.Status == kv.SimulationFailed {
		msg := j.Error
		if msg == "" {
			msg = "The simulation did not complete."
		}
		out.Error = &msg
	}
	return out, nil
}
