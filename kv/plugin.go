package kv

import (
	"context"
	"sort"
	"time"
)

// Plugin kinds an organisation can add.
const (
	PluginRedactor  = "redactor"
	PluginFormatter = "formatter"
)

// OrgPlugin is an organisation's own WebAssembly plugin: a redactor (runs after the
// built-in one on every export) or a formatter (adds its Name as an export format).
// The module's bytes live in the blob folder.
type OrgPlugin struct {
	OrgID     ID        `json:"org_id"`
	Kind      string    `json:"kind"`
	Name      string    `json:"name"`
	MediaType string    `json:"media_type"`
	SHA256    string    `json:"sha256"`
	Blob      string    `json:"blob"` // path relative to the blob folder
	CreatedAt time.Time `json:"created_at"`
}

func pluginKey(org ID, kind, name string) []byte {
	return append(append(org[:], kind...), append([]byte{0}, name...)...)
}

// BuiltinFormats are the export formats the server has built in; an organisation's
// formatter may not take one of their names.
var BuiltinFormats = []string{"csv", "analysis-md", "analysis-html", "qdpx"}

// PutPlugin adds an organisation's plugin, replacing one of the same kind and name.
// A formatter may not take a built-in format's name (BuiltinFormats). EINVALID for
// that; ENOTFOUND for an unknown organisation.
func (db *DB) PutPlugin(ctx context.Context, p OrgPlugin) (OrgPlugin, error) {
	if p.Kind != PluginRedactor && p.Kind != PluginFormatter {
		return OrgPlugin{}, Invalid(FieldError{Loc: []any{"kind"}, Type: "enum", Msg: "A plugin is a redactor or a formatter."})
	}
	if p.Kind == PluginFormatter {
		for _, f := range BuiltinFormats {
			if p.Name == f {
				return OrgPlugin{}, Invalid(FieldError{Loc: []any{"name"}, Type: "reserved_name", Msg: f + " is a built-in format; give the formatter another name."})
			}
		}
	}
	p.CreatedAt = db.Now()
	err := db.update(ctx, func(tx Tx) error {
		if _, err := orgByID(tx, p.OrgID); err != nil {
			return err
		}
		return putJSON(tx.Bucket(bucketPlugins), pluginKey(p.OrgID, p.Kind, p.Name), p)
	})
	return p, err
}

// FindPlugins returns the organisation's plugins, redactors first, each kind by name.
func (db *DB) FindPlugins(ctx context.Context, org ID) ([]OrgPlugin, error) {
	var out []OrgPlugin
	err := db.view(ctx, func(tx Tx) error {
		c := tx.Bucket(bucketPlugins).Cursor()
		for k, v := c.Seek(org[:]); k != nil && len(k) > 16 && string(k[:16]) == string(org[:]); k, v = c.Next() {
			var p OrgPlugin
			if err := jsonUnmarshal(v, &p); err != nil {
				return err
			}
			out = append(out, p)
		}
		return nil
	})
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind == PluginRedactor
		}
		return out[i].Name < out[j].Name
	})
	return out, err
}

// RemovePlugin removes the organisation's plugin of that kind and name and returns it
// (so the caller can delete its blob). ENOTFOUND when there is none.
func (db *DB) RemovePlugin(ctx context.Context, org ID, kind, name string) (OrgPlugin, error) {
	var p OrgPlugin
	err := db.update(ctx, func(tx Tx) error {
		b := tx.Bucket(bucketPlugins)
		ok, err := getJSON(b, pluginKey(org, kind, name), &p)
		if err != nil {
			return err
		}
		if !ok {
			return notFound("Plugin")
		}
		return b.Delete(pluginKey(org, kind, name))
	})
	return p, err
}
