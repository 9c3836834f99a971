// Package participant is what a participant sees: the interview pages under /i/ and
// their JSON API (sessions, messages, skips), the organisation's brand and the static
// files. It depends on the shared pipeline alone.
package participant

import (
	"reflect"

	"github.com/fasthttp/router"

	"interviewd/moderator"
	"interviewd/server/pipeline"
	"interviewd/server/research"
)

// Pages is what the participant pages and their API need beside the store.
type Pages struct {
	*research.Service
	moderator moderator.Engine // the live interviewer's engine
	Turns     *turnLocks       // one turn at a time per interview
	// transcripts: the interviewer reads the conversation so far, so a turn reads the
	// whole transcript (the built-in one does not, and its turns read only the head).
	transcripts bool
	// turnDeadline: the engine may hang (a model), so each turn gets participantTurnTimeout.
	turnDeadline bool
	plan         *pipeline.InputPlan // the message body's decoding plan
	sessionPlan  *pipeline.InputPlan // the session body's (ParticipantSessionInput)
}

// routeParticipant mounts the participant pages, their JSON API and the static files.
// The interviewer is the jobs runner's engine (the built-in one without a runner).
func Route(svc *research.Service, r *router.Router) *Pages {
	s := &Pages{
		Service:     svc,
		moderator:   moderator.NewBuiltin(),
		Turns:       newTurnLocks(),
		plan:        pipeline.PlanInput(reflect.TypeFor[ParticipantMessageInput]()),
		sessionPlan: pipeline.PlanInput(reflect.TypeFor[ParticipantSessionInput]()),
	}
	if s.Jobs != nil {
		s.moderator = s.Jobs.Moderator()
	}
	s.transcripts = moderator.ProbesFromTranscript(s.moderator)
	s.turnDeadline = !moderator.Bounded(s.moderator)
	pages := s.Group(r, "/i", s.participantPageSurface())
	pages.Handle("GET", "/{token}", s.handleParticipantPage)
	api := s.Group(r, "/i", s.participantAPISurface())
	api.POST("/{token}/session", s.handleParticipantSession)
	api.POST("/{token}/messages", s.handleParticipantMessage)
	api.POST("/{token}/skip", s.handleParticipantSkip)
	// The organisation's colour and logo, same-origin so the pages' CSP holds.
	pipeline.HandlePlain(r, "GET", "/i/{token}/brand.css", s.handleParticipantBrandCSS)
	pipeline.HandlePlain(r, "GET", "/i/{token}/logo", s.handleParticipantLogo)
	pipeline.HandlePlain(r, "GET", "/static/{name}", s.handleStatic)
	return s
}
