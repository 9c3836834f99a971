package app

import (
	"interviewd/server/pipeline"
	"time"
)

// appRoleChangeRow is one line of Settings → Members → Role changes.
type appRoleChangeRow struct {
	At, When, Email, Change, By string
}

// roleChangesShown is how many of the latest role changes the members page lists.
const roleChangesShown = 50

// roleChangeRows returns the organisation's latest role changes for the members page.
func (s *App) roleChangeRows(r *pipeline.Request) ([]appRoleChangeRow, error) {
	changes, err := s.DB.FindRoleChanges(r.Ctx, appOf(r).auth.Org.ID, roleChangesShown)
	if err != nil {
		return nil, err
	}
	rows := make([]appRoleChangeRow, 0, len(changes))
	for _, c := range changes {
		row := appRoleChangeRow{At: c.At.UTC().Format(time.RFC3339), When: appDateTime(c.At), Email: c.Email, By: c.ActorEmail}
		switch {
		case c.From == "":
			row.Change = "Joined as " + c.To.Label()
		case c.To == "" && c.ActorID == c.UserID:
			row.Change = "Left (was " + c.From.Label() + ")"
		case c.To == "":
			row.Change = "Removed (was " + c.From.Label() + ")"
		default:
			row.Change = c.From.Label() + " → " + c.To.Label()
		}
		switch {
		case c.ByOperator():
			row.By = "The server's operator"
		case row.By == "":
			row.By = "A former member"
		}
		rows = append(rows, row)
	}
	return rows, nil
}
