package cmd

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
)

// Stamp is what a build stamped at link time (main.go's version and revision, set with
// -ldflags -X), for builds that carry no VCS information. Set, it wins over what the Go
// toolchain recorded.
type Stamp struct {
	Version, Revision string
}

// stamped is the running binary's Stamp, as Main was given it.
var stamped Stamp

// buildVersion is what the binary knows about itself.
type buildVersion struct {
	Version  string // module version: a tag, a pseudo-version or "(devel)"
	Revision string // VCS revision, "+dirty" when built from a modified tree; "unknown" when not recorded
	Go       string
}

// readVersion returns the version stamped with -ldflags -X, else the one the Go
// toolchain recorded (runtime/debug.ReadBuildInfo).
func readVersion() buildVersion {
	return versionOf(debug.ReadBuildInfo())
}

func versionOf(info *debug.BuildInfo, ok bool) buildVersion {
	v := buildVersion{Version: "(devel)", Revision: "unknown", Go: runtime.Version()}
	if ok {
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
	}
	if stamped.Version != "" {
		v.Version = stamped.Version
	}
	if stamped.Revision != "" {
		v.Revision = stamped.Revision
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
