package server

import (
	"context"
	"time"

	"interviewd/blobs"
)

// SweepRetention applies the organisations' retention settings (interviews,
// transcripts and export artifacts older than an organisation's retention_days) and
// removes export files no record points at and scratch files left by a crash. The maintenance loop runs it hourly; the
// counts go to the log, never the words.
func (s *Server) SweepRetention(ctx context.Context) {
	sw, err := s.DB.SweepRetention(ctx)
	if err != nil {
		if ctx.Err() == nil {
			s.Log.Error().Err(err).Msg("retention sweep")
		}
		return
	}
	if sw.Interviews > 0 || len(sw.ExportArtifacts) > 0 {
		s.Log.Info().Int("interviews", sw.Interviews).Int("transcript_messages", sw.TranscriptMessages).
			Int("agent_tasks", sw.AgentTasks).Int("export_artifacts", len(sw.ExportArtifacts)).Strs("files_not_removed", sw.FilesNotRemoved).
			Msg("retention: deleted data older than the organisations' retention")
	}
	if n, err := s.DB.SweepOrphanExports(ctx); err != nil {
		if ctx.Err() == nil {
			s.Log.Error().Err(err).Msg("sweep orphaned export files")
		}
	} else if n > 0 {
		s.Log.Info().Int("files", n).Msg("removed export files no record points at")
	}
	// An hour is far beyond any upload or export on its way to the store.
	if n, err := blobs.SweepScratch(s.DB.BlobDir(), s.Now().Add(-time.Hour)); err != nil {
		s.Log.Error().Err(err).Msg("sweep scratch files")
	} else if n > 0 {
		s.Log.Info().Int("files", n).Msg("removed scratch files left by an interrupted upload or export")
	}
}
