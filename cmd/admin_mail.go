package cmd

import (
	"context"
	"fmt"
	"io"

	"interviewd/kv"
)

// mailOutboxRow reads the offline outbox: what the server would have mailed had
// INTERVIEWD_SMTP_URL been set, so a self-hoster without mail can sign in.
func mailOutboxRow() *command {
	return &command{name: "mail outbox", synopsis: "[--limit N]",
		summary: "Print the newest messages the server kept instead of mailing them (no INTERVIEWD_SMTP_URL set):\n" +
			"sign-in codes, two-step codes and invitation links, newest first.",
		define: func(fs *flagSet) func() (adminRun, error) {
			limit := fs.Int("limit", 10, "how many messages, newest first (at most "+fmt.Sprint(kv.OutboxKeep)+")")
			return func() (adminRun, error) {
				if *limit < 1 || *limit > kv.OutboxKeep {
					return nil, fmt.Errorf("--limit: want 1 to %d", kv.OutboxKeep)
				}
				n := *limit
				return func(ctx context.Context, db *kv.DB, out io.Writer) error {
					box, err := db.FindOutboxMail(ctx, n)
					if err != nil {
						return err
					}
					return printJSON(out, box)
				}, nil
			}
		}}
}
