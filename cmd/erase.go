package cmd

import (
	"context"
	"io"

	"interviewd/kv"
)

func interviewsEraseRow() *command {
	return &command{name: "interviews erase", synopsis: "--id INTERVIEW_ID",
		summary: "Erase one participant's interview everywhere (transcript, sessions, its quotes and counts in analyses, export artifacts holding it); prints a receipt.",
		define:  interviewsEraseDefine}
}

// interviewsEraseDefine is `interviewd interviews erase --id ID`: erases one
// participant's interview everywhere it is kept (record, transcript, sessions, analyses,
// export artifacts that hold it) and prints the receipt.
func interviewsEraseDefine(fs *flagSet) func() (adminRun, error) {
	id := fs.String("id", "", "interview id")
	return func() (adminRun, error) {
		ivID, err := needID("id", *id)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, db *kv.DB, w io.Writer) error {
			rc, err := db.EraseInterview(ctx, ivID)
			if err != nil {
				return err
			}
			if rc.ExportArtifacts == nil {
				rc.ExportArtifacts = []kv.ErasedArtifact{}
			}
			return printJSON(w, rc)
		}, nil
	}
}
