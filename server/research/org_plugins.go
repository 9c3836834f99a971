package research

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"

	"interviewd/kv"
	"interviewd/plugins"
)

// An organisation's own plugins, added and removed from Settings → Redaction and
// plugins and by `interviewd plugins add|remove`: both go through these two functions,
// so a plugin is checked, stored and recorded one way.

// MaxPluginBytes bounds an uploaded module. The built-in plugins are a few MB; a
// redactor or formatter has no reason to be ten times that.
const MaxPluginBytes = 32 << 20

// AddOrgPlugin compiles wasm on host, runs its describe, stores its bytes in the blob
// store and records it for org (replacing a plugin of the same kind and name). It
// returns EINVALID (field "file") for a module that is not a valid plugin, and kv's
// errors for the record (ENOTFOUND for an unknown organisation, EINVALID for a
// formatter named csv).
func AddOrgPlugin(ctx context.Context, db *kv.DB, host *plugins.Host, org kv.ID, wasm []byte) (kv.OrgPlugin, error) {
	if host == nil {
		return kv.OrgPlugin{}, errors.New("server: no plugin host")
	}
	pl, err := host.Load(ctx, wasm) // compiles, checks imports and runs describe
	if err != nil {
		var pe *plugins.Error
		if errors.As(err, &pe) {
			return kv.OrgPlugin{}, kv.Invalid(kv.FieldError{Loc: []any{"file"}, Type: "plugin_invalid",
				Msg: "Not a usable plugin: " + pe.Error()})
		}
		return kv.OrgPlugin{}, err
	}
	d := pl.Descriptor()
	sum := sha256.Sum256(wasm)
	rel := "plugins/" + hex.EncodeToString(sum[:]) + ".wasm"
	if err := db.Blobs().Put(ctx, rel, bytes.NewReader(wasm), int64(len(wasm))); err != nil {
		return kv.OrgPlugin{}, err
	}
	return db.PutPlugin(ctx, kv.OrgPlugin{OrgID: org, Kind: string(d.Kind), Name: d.Name, MediaType: d.MediaType,
		SHA256: hex.EncodeToString(sum[:]), Blob: rel})
}

// RemoveOrgPlugin removes org's plugin of kind and name, and its stored module unless
// another record (of any organisation) still names the same bytes. ENOTFOUND when
// there is no such plugin.
func RemoveOrgPlugin(ctx context.Context, db *kv.DB, org kv.ID, kind, name string) (kv.OrgPlugin, error) {
	p, err := db.RemovePlugin(ctx, org, kind, name)
	if err != nil {
		return p, err
	}
	if !blobStillUsed(ctx, db, p.Blob) {
		_ = db.Blobs().Delete(context.WithoutCancel(ctx), BlobKey(p.Blob))
	}
	return p, nil
}

// blobStillUsed reports whether any organisation's plugin still names blob: modules
// are stored by content, so two organisations uploading one file share it.
func blobStillUsed(ctx context.Context, db *kv.DB, blob string) bool {
	orgs, err := db.FindOrgs(ctx)
	if err != nil {
		return true // unsure: keep the file
	}
	for _, o := range orgs {
		list, err := db.FindPlugins(ctx, o.ID)
		if err != nil {
			return true
		}
		for _, p := range list {
			if p.Blob == blob {
				return true
			}
		}
	}
	return false
}
