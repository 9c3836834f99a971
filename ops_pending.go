package main

import (
	"context"
	"fmt"
	"io"

	"interviewd/kv"
)

// adminRun is an admin command's work against whichever process holds the data.
type adminRun func(ctx context.Context, db *kv.DB, out io.Writer) error

// runOffline parses an admin command's flags, checks them before anything touches disk,
// opens the data folder and runs the command's work.
func runOffline(ctx context.Context, name string, define func(fs *flagSet) func() (adminRun, error), args []string, stdout io.Writer, env func(string) (string, bool)) error {
	fs := newFlagSet(name, env)
	fs.str("data", "./data", "data folder")
	check := define(fs)
	if err := fs.parse(args); err != nil {
		return err
	}
	run, err := check()
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	db, err := openAdmin(fs, nil)
	if err != nil {
		return err
	}
	defer db.Close()
	return run(ctx, db, stdout)
}
