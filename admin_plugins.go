package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"interviewd/kv"
	"interviewd/plugins"
)

// pluginsCommand adds, lists and removes an organisation's own WebAssembly plugins.
// Kind and name come from the module's own `describe`.
func pluginsCommand(ctx context.Context, args []string, stdout io.Writer, env func(string) (string, bool)) error {
	if len(args) == 0 {
		return fmt.Errorf("plugins: want add, list or remove")
	}
	sub, args := args[0], args[1:]
	fs := newFlagSet("plugins "+sub, env)
	fs.str("data", "./data", "data folder")
	org := fs.String("org", "", "organisation id")
	var file, kind, name *string
	switch sub {
	case "add":
		file = fs.String("file", "", "the plugin's .wasm file")
	case "remove":
		kind = fs.String("kind", "", "redactor or formatter")
		name = fs.String("name", "", "the plugin's name")
	case "list":
	default:
		return fmt.Errorf("plugins: unknown subcommand %q (want add, list or remove)", sub)
	}
	db, err := openAdmin(fs, args)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := required("org", *org); err != nil {
		return fmt.Errorf("plugins %s: %w", sub, err)
	}
	orgID, err := parseID("org", *org)
	if err != nil {
		return err
	}
	switch sub {
	case "add":
		if err := required("file", *file); err != nil {
			return fmt.Errorf("plugins add: %w", err)
		}
		return addPlugin(ctx, db, orgID, *file, stdout)
	case "remove":
		if err := required("kind", *kind, "name", *name); err != nil {
			return fmt.Errorf("plugins remove: %w", err)
		}
		p, err := db.RemovePlugin(ctx, orgID, *kind, *name)
		if err != nil {
			return err
		}
		_ = os.Remove(filepath.Join(db.BlobDir(), p.Blob))
		return printJSON(stdout, map[string]any{"removed": p.Name, "kind": p.Kind})
	}
	list, err := db.FindPlugins(ctx, orgID)
	if err != nil {
		return err
	}
	if list == nil {
		list = []kv.OrgPlugin{}
	}
	return printJSON(stdout, list)
}

func addPlugin(ctx context.Context, db *kv.DB, org kv.ID, file string, stdout io.Writer) error {
	wasm, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	host, err := plugins.NewHost(ctx, plugins.Config{CacheDir: filepath.Join(db.Dir(), "cache")})
	if err != nil {
		return err
	}
	defer host.Close(ctx)
	pl, err := host.Load(ctx, wasm) // compiles, checks imports and runs describe
	if err != nil {
		return fmt.Errorf("plugins add: %w", err)
	}
	d := pl.Descriptor()
	sum := sha256.Sum256(wasm)
	rel := filepath.Join("plugins", hex.EncodeToString(sum[:])+".wasm")
	if err := os.MkdirAll(filepath.Join(db.BlobDir(), "plugins"), 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(db.BlobDir(), rel), wasm, 0o600); err != nil {
		return err
	}
	p, err := db.PutPlugin(ctx, kv.OrgPlugin{OrgID: org, Kind: string(d.Kind), Name: d.Name, MediaType: d.MediaType,
		SHA256: hex.EncodeToString(sum[:]), Blob: rel})
	if err != nil {
		return err
	}
	return printJSON(stdout, p)
}
