package server

import "context"

// SweepRetention applies the organisations' retention settings (interviews,
// transcripts and export artifacts older than an organisation's retention_days) and
// removes export files no record points at. The maintenance loop runs it hourly; the
// counts go to the log, never the words.
func (s *Server) SweepRetention(ctx context.Context) {
	sw, err := s.db.SweepRetention(ctx)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Error().Err(err).Msg("retention sweep")
		}
		return
	}
	if sw.Interviews > 0 || len(sw.ExportArtifacts) > 0 {
		s.log.Info().Int("interviews", sw.Interviews).Int("transcript_messages", sw.TranscriptMessages).
			Int("export_artifacts", len(sw.ExportArtifacts)).Strs("files_not_removed", sw.FilesNotRemoved).
			Msg("retention: deleted data older than the organisations' retention")
	}
	if n, err := s.db.SweepOrphanExports(ctx); err != nil {
		if ctx.Err() == nil {
			s.log.Error().Err(err).Msg("sweep orphaned export files")
		}
	} else if n > 0 {
		s.log.Info().Int("files", n).Msg("removed export files no record points at")
	}
}
