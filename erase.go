package main

import (
	"context"
	"io"

	"interviewd/kv"
)

// interviewsEraseDefine is `interviewd interviews erase --id ID`: erases one
// participant's interview everywhere it is kept (record, transcript, sessions, export
// artifacts that hold it) and prints the receipt.
func interviewsEraseDefine(fs *flagSet) func() (adminRun, error) {
	id := fs.String("id", "", "interview id")
	return func() (adminRun, error) {
		ivID, err := needInterviewID(*id)
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

func needInterviewID(s string) (kv.ID, error) {
	if err := required("id", s); err != nil {
		return kv.ID{}, err
	}
	return parseID("id", s)
}
