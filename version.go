package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
)

// buildVersion is what the binary knows about itself.
type buildVersion struct {
	Version  string // module version: a tag, a pseudo-version or "(devel)"
	Revision string // VCS revision, "+dirty" when built from a modified tree; "unknown" outside a checkout
	Go       string
}

func readVersion() buildVersion {
	v := buildVersion{Version: "(devel)", Revision: "unknown", Go: runtime.Version()}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if info.Main.Version != "" {
		v.Version = info.Main.Version
	}
	dirty := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if dirty && v.Revision != "unknown" {
		v.Revision += "+dirty"
	}
	return v
}

func (v buildVersion) String() string {
	return fmt.Sprintf("interviewd %s (revision %s, %s)", v.Version, v.Revision, v.Go)
}

func versionCommand(_ context.Context, args []string, sio stdio) error {
	fs := newFlagSet("version", sio.env)
	if err := fs.parse(args); err == errHelp {
		fs.printUsage(sio.stdout, "", "Print the version, VCS revision and Go version.")
		return nil
	} else if err != nil {
		return err
	}
	_, err := fmt.Fprintln(sio.stdout, readVersion())
	return err
}
