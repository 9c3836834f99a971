package cmd

import (
	"fmt"

	"interviewd/kv"
)

// storeHelp documents --store (INTERVIEWD_STORE) wherever it is accepted.
const storeHelp = "where the records live: empty for DATA/interviewd.db, or a PostgreSQL database (postgres://user:pass@host:5432/db?sslmode=require) shared by every node"

// addStoreFlag declares --store and returns a check for its value.
func addStoreFlag(fs *flagSet) func() (string, error) {
	store := fs.str("store", "postgres://URL", "", storeHelp)
	return func() (string, error) {
		if *store != "" && !kv.IsPostgres(*store) {
			return "", fmt.Errorf("--store: want empty or a postgres:// URL, got %q", kv.RedactStore(*store))
		}
		return *store, nil
	}
}
