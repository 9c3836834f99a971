package cmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"interviewd/kv"
	"interviewd/plugins"
	"interviewd/server"
)

// Organisations' own WebAssembly plugins: kind and name come from the module's own
// `describe`.

func pluginsAddRow() *command {
	return &command{name: "plugins add", synopsis: "--org ORG_ID --file X.wasm", paths: []string{"file"},
		summary: "Add (or replace) a redactor or formatter plugin; kind and name come from the module's describe.",
		define: func(fs *flagSet) func() (adminRun, error) {
			org := fs.String("org", "", "organisation id")
			file := fs.String("file", "", "the plugin's .wasm file")
			return func() (adminRun, error) {
				orgID, err := needID("org", *org)
				if err != nil {
					return nil, err
				}
				if err := required("file", *file); err != nil {
					return nil, err
				}
				if st, err := os.Stat(*file); err != nil || !st.Mode().IsRegular() {
					return nil, fmt.Errorf("--file %s: not a readable file", *file)
				}
				return func(ctx context.Context, db *kv.DB, out io.Writer) error {
					if _, err := db.FindOrgByID(ctx, orgID); err != nil {
						return orgMissing(err, orgID)
					}
					return addPlugin(ctx, db, orgID, *file, out)
				}, nil
			}
		}}
}

func pluginsListRow() *command {
	return &command{name: "plugins list", synopsis: "--org ORG_ID", summary: "List an organisation's plugins.",
		define: func(fs *flagSet) func() (adminRun, error) {
			org := fs.String("org", "", "organisation id")
			return func() (adminRun, error) {
				orgID, err := needID("org", *org)
				if err != nil {
					return nil, err
				}
				return func(ctx context.Context, db *kv.DB, out io.Writer) error {
					if _, err := db.FindOrgByID(ctx, orgID); err != nil {
						return orgMissing(err, orgID)
					}
					list, err := db.FindPlugins(ctx, orgID)
					if err != nil {
						return err
					}
					if list == nil {
						list = []kv.OrgPlugin{}
					}
					return printJSON(out, list)
				}, nil
			}
		}}
}

func pluginsRemoveRow() *command {
	return &command{name: "plugins remove", synopsis: "--org ORG_ID --kind redactor|formatter --name NAME", summary: "Remove a plugin.",
		define: func(fs *flagSet) func() (adminRun, error) {
			org := fs.String("org", "", "organisation id")
			kind := fs.String("kind", "", "redactor or formatter")
			name := fs.String("name", "", "the plugin's name")
			return func() (adminRun, error) {
				orgID, err := needID("org", *org)
				if err != nil {
					return nil, err
				}
				if err := required("kind", *kind, "name", *name); err != nil {
					return nil, err
				}
				if *kind != "redactor" && *kind != "formatter" {
					return nil, fmt.Errorf("--kind %q: want redactor or formatter", *kind)
				}
				return func(ctx context.Context, db *kv.DB, out io.Writer) error {
					p, err := server.RemoveOrgPlugin(ctx, db, orgID, *kind, *name)
					if err != nil {
						return err
					}
					return printJSON(out, map[string]any{"removed": p.Name, "kind": p.Kind})
				}, nil
			}
		}}
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
	// The same function the app's Settings → Redaction and plugins page uses.
	p, err := server.AddOrgPlugin(ctx, db, host, org, wasm)
	if err != nil {
		return err
	}
	return printJSON(stdout, p)
}
