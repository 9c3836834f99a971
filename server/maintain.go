package server

import (
	"context"
	"time"

	"interviewd/kv"
)

// Maintain runs the periodic housekeeping until ctx ends: forgetting idle rate-limit
// windows every minute; idempotency keys older than seven days and data older than an
// organisation's retention, expired sign-in codes, sessions, invitations and account
// access transactions, ended OAuth connections and expired tokens, and A2A tasks that
// ended 30 days ago, every hour. Low-credit mail goes out when a spend asks for it and
// every minute (one a crash left behind).
func (s *Server) Maintain(ctx context.Context) {
	minute := time.NewTicker(time.Minute)
	defer minute.Stop()
	for n := 1; ; n++ {
	wait:
		for {
			select {
			case <-ctx.Done():
				return
			case <-s.CreditAlerts:
				s.app.SendCreditAlerts(ctx)
			case <-minute.C:
				break wait
			}
		}
		s.app.SendCreditAlerts(ctx)
		s.Limiter.Sweep(s.Now())
		s.AuthFails.Sweep(s.Now())
		s.SignIn.Sweep(s.Now())
		s.oauth.Register.Sweep(s.Now())
		if n%60 == 0 {
			s.SweepRetention(ctx)
			if swept, err := s.DB.SweepIdem(ctx); err != nil {
				s.Log.Error().Err(err).Msg("sweep idempotency keys")
			} else if swept > 0 {
				s.Log.Info().Int("swept", swept).Msg("forgot expired idempotency keys")
			}
			if swept, err := s.DB.SweepAgentTasks(ctx); err != nil {
				s.Log.Error().Err(err).Msg("sweep ended A2A tasks")
			} else if swept > 0 {
				s.Log.Info().Int("swept", swept).Msg("deleted A2A tasks ended more than 30 days ago")
			}
			if swept, err := s.DB.SweepAccess(ctx); err != nil {
				s.Log.Error().Err(err).Msg("sweep expired account access transactions")
			} else if swept > 0 {
				s.Log.Info().Int("swept", swept).Msg("deleted expired account access transactions")
			}
			if swept, err := s.DB.SweepOAuth(ctx); err != nil {
				s.Log.Error().Err(err).Msg("sweep expired OAuth codes, tokens and connections")
			} else if swept != (kv.OAuthSwept{}) {
				s.Log.Info().Int("tokens", swept.Tokens).Int("connections", swept.Connections).
					Msg("deleted expired OAuth codes, tokens and connections")
			}
			if swept, err := s.DB.SweepPeople(ctx); err != nil {
				s.Log.Error().Err(err).Msg("sweep expired sign-in codes, sessions and invitations")
			} else if swept != (kv.PeopleSwept{}) {
				s.Log.Info().Int("signin_codes", swept.SignInCodes).Int("sessions", swept.Sessions).
					Int("invitations", swept.Invitations).Msg("deleted expired sign-in codes, sessions and invitations")
			}
		}
	}
}
