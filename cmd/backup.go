package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"interviewd/kv"
)

func backupRow() *command {
	return &command{name: "backup", synopsis: "--out FILE [--force]",
		summary: "Write a consistent backup (database, blobs, certificates) to FILE; works while the server runs.",
		define:  backupDefine, paths: []string{"out"}}
}

func backupVerifyRow() *command {
	return &command{name: "backup verify", synopsis: "FILE",
		summary: "Check a backup without restoring it: every entry's SHA-256, the database's pages and schema.",
		main:    backupVerifyCommand}
}

func restoreRow() *command {
	return &command{name: "restore", synopsis: "--from FILE",
		summary: "Replace the data folder with a backup (server stopped); the previous data is kept aside.",
		main:    restoreCommand}
}

// backupDefine is `interviewd backup --out FILE`: a consistent copy of the data folder
// (the database through one read transaction, then the blobs), taken by whichever
// process holds the folder, so it works while the server runs.
func backupDefine(fs *flagSet) func() (adminRun, error) {
	out := fs.String("out", "", "file to write: a tar of the database, blobs and certificates")
	force := fs.Bool("force", false, "replace FILE when it exists (without it, an existing file is refused)")
	return func() (adminRun, error) {
		if err := required("out", *out); err != nil {
			return nil, err
		}
		path, replace := *out, *force
		return func(ctx context.Context, db *kv.DB, w io.Writer) error {
			m, err := db.BackupToFile(ctx, path, replace)
			if kv.ErrorCode(err) == kv.ECONFLICT {
				return fmt.Errorf("%s already exists; name another file with --out, or pass --force to replace it", path)
			}
			if err != nil {
				return fmt.Errorf("write %s: %w", path, err)
			}
			return printJSON(w, backupReceipt(path, m))
		}, nil
	}
}

type backupOutput struct {
	Out       string    `json:"out"`
	CreatedAt time.Time `json:"created_at"`
	Files     int       `json:"files"`
	Bytes     int64     `json:"bytes"`
	DBBytes   int64     `json:"db_bytes"`
	// BlobsElsewhere names the bucket whose blobs the backup does not carry.
	BlobsElsewhere string `json:"blobs_elsewhere,omitempty"`
}

func backupReceipt(path string, m kv.BackupManifest) backupOutput {
	out := backupOutput{Out: path, CreatedAt: m.CreatedAt, Files: len(m.Files), BlobsElsewhere: m.BlobsElsewhere}
	for _, f := range m.Files {
		out.Bytes += f.Size
		if f.Path == kv.FileName {
			out.DBBytes = f.Size
		}
	}
	return out
}

// restoreCommand is `interviewd restore --from FILE`: offline only, since it replaces
// the file a server would hold. The backup is unpacked and checked (manifest hashes,
// bbolt's tx.Check, schema version) before anything is replaced; the data it replaces is
// kept aside in DATA/before-restore-TIME/.
func restoreCommand(_ context.Context, args []string, sio stdio) error {
	fs := newFlagSet("restore", sio.env)
	data := fs.str("data", "DIR", "./data", "data folder")
	from := fs.String("from", "", "backup file written by interviewd backup (or a bare interviewd.db)")
	if err := fs.parse(args); errors.Is(err, errHelp) {
		row := restoreRow()
		fs.printUsage(sio.stdout, row.synopsis, row.summary)
		return nil
	} else if err != nil {
		return err
	}
	if err := required("from", *from); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	src, err := filepath.Abs(*from)
	if err != nil {
		return err
	}
	rc, err := kv.Restore(*data, src, time.Now())
	if err != nil {
		if kv.ErrorCode(err) == kv.ELOCKED {
			return fmt.Errorf("restore: data folder %s is held by a running interviewd server; stop it first (restore replaces the whole database)", *data)
		}
		return fmt.Errorf("restore: %w", err)
	}
	return printJSON(sio.stdout, rc)
}

// backupVerifyCommand is `interviewd backup verify FILE`: the checks restore makes
// before it replaces anything, without restoring and without a data folder, so a
// backup can be checked where it is kept. A failed check is an error (exit status 1)
// naming the problem.
func backupVerifyCommand(_ context.Context, args []string, sio stdio) error {
	row := backupVerifyRow()
	fs := newFlagSet(row.name, sio.env)
	var file string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		file, args = args[0], args[1:]
	}
	if err := fs.parse(args); errors.Is(err, errHelp) {
		fs.printUsage(sio.stdout, row.synopsis, row.summary)
		return nil
	} else if err != nil {
		return err
	}
	if file == "" {
		return errors.New("backup verify: name the backup to check: interviewd backup verify FILE")
	}
	rc, err := kv.VerifyBackup(file)
	if err != nil {
		return fmt.Errorf("backup verify: %s: %w", file, err)
	}
	return printJSON(sio.stdout, rc)
}

// backupSchedule takes a backup into dir every interval and keeps the newest keep,
// until ctx ends. The first is taken one interval after start.
type backupSchedule struct {
	dir   string
	every time.Duration
	keep  int
	db    *kv.DB
	log   zerolog.Logger
	now   func() time.Time
	// took, when set, hears of each attempt (metrics).
	took func(err error, d time.Duration)
}

func (b *backupSchedule) run(ctx context.Context) {
	tick := time.NewTicker(b.every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		b.once(ctx)
	}
}

// once takes one backup and prunes old ones; failures are logged, never fatal.
func (b *backupSchedule) once(ctx context.Context) (string, error) {
	start := time.Now()
	path := filepath.Join(b.dir, kv.BackupName(b.now()))
	m, err := b.db.BackupToFile(ctx, path, false) // a name already taken is refused, never overwritten
	if b.took != nil {
		b.took(err, time.Since(start))
	}
	if err != nil {
		if ctx.Err() == nil {
			b.log.Error().Err(err).Str("dir", b.dir).Msg("scheduled backup failed")
		}
		return "", err
	}
	r := backupReceipt(path, m)
	b.log.Info().Str("file", path).Int64("bytes", r.Bytes).Int("files", r.Files).Dur("duration", time.Since(start)).Msg("backup written")
	deleted, err := kv.PruneBackups(b.dir, b.keep)
	if err != nil {
		b.log.Error().Err(err).Str("dir", b.dir).Msg("prune old backups")
	}
	for _, d := range deleted {
		b.log.Info().Str("file", d).Msg("old backup removed")
	}
	return path, nil
}
