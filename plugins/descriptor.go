package plugins

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
)

// Kind is what a plugin does.
type Kind string

// The kinds of plugin.
const (
	// KindRedactor plugins take records and return them with personal data removed.
	KindRedactor Kind = "redactor"
	// KindFormatter plugins turn records into an export artifact.
	KindFormatter Kind = "formatter"
)

// ABIVersion is the plugin ABI version this host speaks.
const ABIVersion = 1

// Descriptor is what a plugin says about itself when run with "describe".
type Descriptor struct {
	Kind Kind `json:"kind"`
	// Name identifies the plugin; for a formatter it is the export format it adds.
	Name string `json:"name"`
	// MediaType is a formatter's artifact Content-Type; empty for a redactor.
	MediaType  string `json:"media_type,omitempty"`
	ABIVersion int    `json:"abi_version"`
}

// maxNameLen is the longest plugin name.
const maxNameLen = 32

// validName reports whether name matches ^[a-z][a-z0-9_-]{0,31}$.
func validName(name string) bool {
	if len(name) == 0 || len(name) > maxNameLen || name[0] < 'a' || name[0] > 'z' {
		return false
	}
	for i := 1; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// parseDescriptor decodes and checks what a plugin printed for "describe": exactly one
// JSON object with known fields, a known kind, a valid name, a parseable media type for
// a formatter (and none for a redactor) and ABI version 1. The error says which rule
// was broken.
func parseDescriptor(out []byte) (Descriptor, error) {
	var raw struct {
		Kind       *string `json:"kind"`
		Name       *string `json:"name"`
		MediaType  *string `json:"media_type"`
		ABIVersion *int    `json:"abi_version"`
	}
	out = bytes.TrimSpace(out)
	if len(out) == 0 {
		return Descriptor{}, errors.New("printed nothing; want a descriptor object")
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return Descriptor{}, fmt.Errorf("descriptor is not a valid JSON object: %v", err)
	}
	if dec.More() {
		return Descriptor{}, errors.New("printed more than one JSON value")
	}
	switch {
	case raw.Kind == nil:
		return Descriptor{}, errors.New(`descriptor has no "kind"`)
	case raw.Name == nil:
		return Descriptor{}, errors.New(`descriptor has no "name"`)
	case raw.ABIVersion == nil:
		return Descriptor{}, errors.New(`descriptor has no "abi_version"`)
	}
	d := Descriptor{Kind: Kind(*raw.Kind), Name: *raw.Name, ABIVersion: *raw.ABIVersion}
	if raw.MediaType != nil {
		d.MediaType = *raw.MediaType
	}
	if d.ABIVersion != ABIVersion {
		return Descriptor{}, fmt.Errorf("abi_version %d is not supported; this host speaks %d", d.ABIVersion, ABIVersion)
	}
	if !validName(d.Name) {
		return Descriptor{}, fmt.Errorf("name %q must be 1 to %d characters of a-z, 0-9, _ and -, starting with a letter", d.Name, maxNameLen)
	}
	switch d.Kind {
	case KindRedactor:
		if d.MediaType != "" {
			return Descriptor{}, errors.New("a redactor has no media_type")
		}
	case KindFormatter:
		if d.MediaType == "" {
			return Descriptor{}, errors.New("a formatter needs a media_type")
		}
		if _, _, err := mime.ParseMediaType(d.MediaType); err != nil {
			return Descriptor{}, fmt.Errorf("media_type %q: %v", d.MediaType, err)
		}
	default:
		return Descriptor{}, fmt.Errorf("kind %q is neither %q nor %q", d.Kind, KindRedactor, KindFormatter)
	}
	return d, nil
}
