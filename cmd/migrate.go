package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"interviewd/kv"
)

func migrateRow() *command {
	return &command{name: "migrate", synopsis: "--data DIR (--to postgres://URL | --from postgres://URL) [--blobs s3://BUCKET]",
		summary: "Copy a data folder's database into an empty PostgreSQL database (--to), or back into an empty data folder (--from), and verify the copy; every server stopped.\n" +
			"With --blobs, DATA/blobs (uploads, export artifacts, plugins) is copied into that bucket (--to) or the bucket into DATA/blobs (--from) first, each file read back and compared.",
		main: migrateCommand}
}

// migrateCommand copies the records between the data folder's bbolt file and a
// PostgreSQL database, in one transaction of the destination, and checks every bucket
// on both sides before it reports. The source is left as it was. Uploads, export
// artifacts and plugins stay in DATA/blobs unless --blobs names the bucket the
// PostgreSQL side keeps them in; they are copied first, since a copy of files can be run
// again and the records' copy into a store in use cannot.
func migrateCommand(ctx context.Context, args []string, sio stdio) error {
	fs := newFlagSet("migrate", sio.env)
	data := fs.str("data", "DIR", "./data", "data folder")
	to := fs.String("to", "", "PostgreSQL database to copy the data folder's records into (it must hold no organisation)")
	from := fs.String("from", "", "PostgreSQL database to copy into the data folder (which must hold no organisation)")
	blobsSpec := fs.str("blobs", "s3://BUCKET", "", "the bucket the PostgreSQL side keeps files in, s3://BUCKET[/PREFIX]?endpoint=…&region=…: DATA/blobs is copied into it (--to) or it into DATA/blobs (--from)")
	if err := fs.parse(args); errors.Is(err, errHelp) {
		row := migrateRow()
		fs.printUsage(sio.stdout, row.synopsis, row.summary)
		return nil
	} else if err != nil {
		return err
	}
	if (*to == "") == (*from == "") {
		return errors.New("migrate: give exactly one of --to (data folder → PostgreSQL) or --from (PostgreSQL → data folder)")
	}
	for flag, v := range map[string]string{"to": *to, "from": *from} {
		if v != "" && !kv.IsPostgres(v) {
			return fmt.Errorf("migrate: --%s: want a postgres:// URL, got %q", flag, kv.RedactStore(v))
		}
	}
	if *blobsSpec != "" && !strings.HasPrefix(*blobsSpec, "s3://") {
		return fmt.Errorf("migrate: --blobs: want an s3:// bucket (the data folder's own files are DATA/blobs), got %q", *blobsSpec)
	}
	if err := checkBlobs(*blobsSpec, false, sio.env); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if *to != "" {
		if _, err := os.Stat(filepath.Join(*data, kv.FileName)); err != nil {
			return fmt.Errorf("migrate: no interviewd data in %s: %w", *data, err)
		}
	}
	open := func(store string) (*kv.DB, error) {
		db, err := kv.Open(*data, kv.Options{Store: store, LockTimeout: 500 * time.Millisecond})
		if kv.ErrorCode(err) == kv.ELOCKED {
			return nil, fmt.Errorf("migrate: data folder %s is held by a running interviewd server; stop it first", *data)
		}
		return db, err
	}
	srcStore, dstStore := "", *to
	if *from != "" {
		srcStore, dstStore = *from, ""
	}
	src, err := open(srcStore)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := open(dstStore)
	if err != nil {
		return err
	}
	defer dst.Close()
	start := time.Now()
	var files *migrateBlobsOutput
	if *blobsSpec != "" {
		if files, err = migrateBlobs(ctx, *blobsSpec, *data, *to != "", sio.env); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
	}
	rep, err := src.CopyTo(ctx, dst)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	name := func(store string) string {
		if store == "" {
			return filepath.Join(*data, kv.FileName)
		}
		return kv.RedactStore(store)
	}
	return printJSON(sio.stdout, migrateOutput{From: name(srcStore), To: name(dstStore), Records: rep.Records,
		Buckets: rep.Buckets, Verified: true, Blobs: files, Seconds: time.Since(start).Seconds()})
}

type migrateOutput struct {
	From     string         `json:"from"`
	To       string         `json:"to"`
	Records  int            `json:"records"`
	Buckets  map[string]int `json:"buckets"`
	Verified bool           `json:"verified"`
	// Blobs is the files' copy, with --blobs.
	Blobs   *migrateBlobsOutput `json:"blobs,omitempty"`
	Seconds float64             `json:"seconds"`
}
