package pipeline

import (
	"interviewd/kv"
)

// Lifecycle events an operator wants in the log at info, emitted where they happen:
// a study's mode changing, an interview starting and ending, credits running out.

// LogModeChange notes a study's new mode. Going live in the live environment with no
// credits works (the researcher may add them later) but nobody can be interviewed until
// then, so that is a warning.
func (s *Core) LogModeChange(p *Principal, st kv.Study, noCredits bool) {
	msg := map[kv.Mode]string{kv.ModeLive: "study went live", kv.ModePaused: "study paused", kv.ModeClosed: "study closed", kv.ModeTest: "study back in test mode"}[st.Mode]
	s.Log.Info().Str("org_id", p.Partition.Org.String()).Str("environment", string(p.Partition.Env)).
		Str("study_id", st.ID.String()).Str("mode", string(st.Mode)).Msg(msg)
	if noCredits {
		s.Log.Warn().Str("org_id", p.Partition.Org.String()).Str("study_id", st.ID.String()).
			Msgf("study went live with 0 credits: no interview can start until credits are added (interviewd credits add --org %s --amount N)", p.Partition.Org)
	}
}

// LogOpened notes an interview that opening a link started, and the credit that was
// the organisation's last.
func (s *Core) LogOpened(o kv.Opened) {
	if !o.Started || o.Interview == nil {
		return
	}
	iv := o.Interview
	s.Log.Info().Str("org_id", iv.OrgID.String()).Str("environment", string(iv.Env)).Str("study_id", iv.StudyID.String()).
		Str("interview_id", iv.ID.String()).Bool("is_test", iv.IsTest).Msg("interview started")
	if o.CreditAlert {
		s.kickCreditAlerts()
	}
	if o.SpentCredit && o.CreditsLeft == 0 {
		s.Log.Info().Str("org_id", iv.OrgID.String()).
			Msgf("credits exhausted: live links stop accepting responses until credits are added (interviewd credits add --org %s --amount N)", iv.OrgID)
	}
}

// LogInterviewEnded notes an interview that a turn completed (failures are logged
// with their cause where the engine failed).
func (s *Core) LogInterviewEnded(iv kv.Interview) {
	if iv.Status != kv.InterviewCompleted {
		return
	}
	ev := s.Log.Info().Str("org_id", iv.OrgID.String()).Str("environment", string(iv.Env)).Str("study_id", iv.StudyID.String()).
		Str("interview_id", iv.ID.String()).Bool("is_test", iv.IsTest)
	if iv.DurationSeconds != nil {
		ev = ev.Int("duration_seconds", *iv.DurationSeconds)
	}
	ev.Msg("interview completed")
}
