package pgengine

import (
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/rs/zerolog"
)

// noticeLogger returns the handler that writes each notice PostgreSQL sends to log,
// where pgconn would otherwise drop it. Warnings (a deprecated setting, a transaction
// command out of place) are logged at info; notices, mostly routine ("relation ...
// already exists, skipping" at every open), at debug.
func noticeLogger(log zerolog.Logger) pgconn.NoticeHandler {
	return func(_ *pgconn.PgConn, n *pgconn.Notice) {
		severity := n.SeverityUnlocalized
		if severity == "" {
			severity = n.Severity
		}
		ev := log.Debug()
		if severity == "WARNING" {
			ev = log.Info()
		}
		ev = ev.Str("severity", severity).Str("code", n.Code)
		if n.Detail != "" {
			ev = ev.Str("detail", n.Detail)
		}
		if n.Hint != "" {
			ev = ev.Str("hint", n.Hint)
		}
		ev.Msg("PostgreSQL: " + n.Message)
	}
}
