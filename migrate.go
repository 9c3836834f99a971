package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"interviewd/blobs"
	"interviewd/kv"
)

func migrateRow() *command {
	return &command{name: "migrate", synopsis: "--data DIR (--to postgres://... | --from postgres://...) [--blobs s3://...]",
		summary: "Copy a data folder's database into an empty PostgreSQL database (--to), or back into an empty data folder (--from), with its files to or from an S3 bucket (--blobs), and verify the copy; every server stopped.",
		main:    migrateCommand}
}

// migrateCommand copies the records between the data folder's bbolt file and a
// PostgreSQL database, in one transaction of the destination, and checks every bucket
// on both sides before it reports. With --blobs the files go along: DATA/blobs into the
// bucket (--to) or the bucket into DATA/blobs (--from), each read back and compared
// (blobs.Copy). The source is left as it was.
func migrateCommand(ctx context.Context, args []string, sio stdio) error {
	fs := newFlagSet("migrate", sio.env)
	data := fs.str("data", "./data", "data folder")
	to := fs.String("to", "", "PostgreSQL database to copy the data folder's records into (it must hold no organisation)")
	from := fs.String("from", "", "PostgreSQL database to copy into the data folder (which must hold no organisation)")
	blobSpec := fs.String("blobs", "", "an S3 bucket (s3://…, as serve's --blobs) to copy DATA/blobs into with --to, or into DATA/blobs with --from; empty leaves the files in DATA/blobs")
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
	if *blobSpec != "" && !strings.HasPrefix(*blobSpec, "s3://") {
		return fmt.Errorf("migrate: --blobs: want an s3:// bucket, got %q", *blobSpec)
	}
	if *blobSpec != "" {
		if err := checkBlobs(*blobSpec, false, sio.env); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
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
	rep, err := src.CopyTo(ctx, dst)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	files := 0
	if *blobSpec != "" {
		bucket, err := openBlobs(ctx, *blobSpec, *data, sio.env)
		if err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		folder, err := blobs.NewFS(filepath.Join(*data, "blobs"))
		if err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		src, dst := blobs.Store(folder), bucket
		if *from != "" {
			src, dst = bucket, folder
		}
		if files, err = blobs.Copy(ctx, dst, src); err != nil {
			return fmt.Errorf("migrate: the records were copied and verified, but the files were not: %w", err)
		}
	}
	name := func(store string) string {
		if store == "" {
			return filepath.Join(*data, kv.FileName)
		}
		return kv.RedactStore(store)
	}
	return printJSON(sio.stdout, migrateOutput{From: name(srcStore), To: name(dstStore), Records: rep.Records,
		Buckets: rep.Buckets, Files: files, Verified: true, Seconds: time.Since(start).Seconds()})
}

type migrateOutput struct {
	From     string         `json:"from"`
	To       string         `json:"to"`
	Records  int            `json:"records"`
	Buckets  map[string]int `json:"buckets"`
	Files    int            `json:"files"`
	Verified bool           `json:"verified"`
	Seconds  float64        `json:"seconds"`
}
