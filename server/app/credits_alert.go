package app

import (
	"context"

	"interviewd/mail"
)

// Low-credit mail. The spend that takes an organisation's balance under its owners'
// threshold leaves a pending alert in its own transaction (kv/credit_ledger.go); this
// sends it. Claiming holds an alert for one sender (across nodes), and an alert whose
// sender died is offered again after the hold, so a crash costs a late mail, never a
// lost one.

// SendCreditAlerts mails every pending low-credit alert to its organisation's owners
// and forgets each one sent. An alert whose mail failed stays, to be tried again once
// its hold ends.
func (s *App) SendCreditAlerts(ctx context.Context) {
	alerts, err := s.DB.ClaimCreditAlerts(ctx)
	if err != nil {
		s.Log.Error().Err(err).Msg("claim low-credit alerts")
		return
	}
	for _, a := range alerts {
		failed := false
		for _, to := range a.Owners {
			m := mail.CreditsLow(to, a.OrgName, a.Balance, a.Threshold, s.BaseURL)
			if s.Mail == nil {
				s.Log.Warn().Str("org_id", a.OrgID.String()).Str("subject", m.Subject).Msg("no mail sender configured; low-credit warning not sent")
				continue
			}
			if err := s.Mail.Send(ctx, m); err != nil {
				s.Log.Error().Err(err).Str("org_id", a.OrgID.String()).Msg("send low-credit warning")
				failed = true
			}
		}
		if failed {
			continue
		}
		s.Log.Info().Str("org_id", a.OrgID.String()).Int("credits", a.Balance).Int("threshold", a.Threshold).
			Int("owners", len(a.Owners)).Msg("low-credit warning sent to owners")
		if err := s.DB.DoneCreditAlert(ctx, a); err != nil {
			s.Log.Error().Err(err).Msg("forget sent low-credit alert")
		}
	}
}
