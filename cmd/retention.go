package cmd

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"interviewd/kv"
)

func orgRetentionRow() *command {
	return &command{name: "org retention", synopsis: "--org ORG_ID --days N|off",
		summary: "Delete the organisation's interviews, transcripts and export artifacts older than N days (off by default).",
		define:  orgRetentionDefine}
}

// orgRetentionDefine is `interviewd org retention --org ID --days N|off`: how long the
// organisation keeps interviews, transcripts and export artifacts (off by default).
func orgRetentionDefine(fs *flagSet) func() (adminRun, error) {
	org := fs.String("org", "", "organisation id")
	days := fs.String("days", "", "days to keep interviews, transcripts and export artifacts, or off")
	return func() (adminRun, error) {
		orgID, err := needID("org", *org)
		if err != nil {
			return nil, err
		}
		if err := required("days", *days); err != nil {
			return nil, err
		}
		if err != nil {
			return nil, err
		}
		n := 0
		if d := strings.TrimSpace(*days); d != "off" {
			if n, err = strconv.Atoi(d); err != nil || n < 1 || n > kv.MaxRetentionDays {
				return nil, fmt.Errorf("--days %q: want a number of days from 1 to %d, or off", d, kv.MaxRetentionDays)
			}
		}
		return func(ctx context.Context, db *kv.DB, w io.Writer) error {
			o, err := db.SetRetention(ctx, orgID, n)
			if err != nil {
				return orgMissing(err, orgID)
			}
			var out any = o.RetentionDays
			if o.RetentionDays == 0 {
				out = "off"
			}
			return printJSON(w, map[string]any{"org_id": o.ID, "retention_days": out})
		}, nil
	}
}
