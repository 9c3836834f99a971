package cmd

import (
	"context"
	"io"
	"strings"
	"testing"
)

// --store and what goes with it are checked before anything is opened.
func TestServeStoreFlags(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"ErrNotPostgres", []string{"serve", "--store", "mysql://db/x"}, "--store: want empty or a postgres:// URL"},
		{"ErrPasswordNotEchoed", []string{"serve", "--store", "mysql://u:hunter2@db/x"}, "xxxxx"},
		{"ErrBackupDir", []string{"serve", "--store", "postgres://db/x", "--backup-dir", "b"}, "--backup-dir copies the bbolt file"},
		{"ErrJobLease", []string{"serve", "--job-lease", "10ms"}, "--job-lease"},
		{"ErrJobTimeoutShort", []string{"serve", "--job-timeout", "1s"}, "--job-timeout \"1s\": want a duration from 10s to 24h"},
		{"ErrJobTimeoutLong", []string{"serve", "--job-timeout", "25h"}, "--job-timeout"},
		{"ErrJobTimeoutNotDuration", []string{"serve", "--job-timeout", "soon"}, "--job-timeout"},
		{"ErrAdminNotPostgres", []string{"orgs", "list", "--store", "sqlite://x"}, "--store: want empty or a postgres:// URL"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			err := Run(context.Background(), append(tt.args, "--data", dir), io.Discard, io.Discard, noEnv)
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "hunter2") {
				t.Fatalf("%v: %v, want an error containing %q", tt.args, err, tt.want)
			}
		})
	}
}
