package cmd

import (
	"runtime"
	"runtime/debug"
	"testing"
)

// TestVersionOf: the toolchain's record (module version, VCS revision, a modified tree)
// is read, and -ldflags -X values win over it.
func TestVersionOf(t *testing.T) {
	recorded := &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}}}
	cases := []struct {
		name             string
		info             *debug.BuildInfo
		ok               bool
		stampV, stampR   string
		wantVer, wantRev string
	}{
		{"OK_Recorded", recorded, true, "", "", "v1.2.3", "abc123+dirty"},
		{"OK_NothingRecorded", nil, false, "", "", "(devel)", "unknown"},
		{"OK_NoVCS", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true, "", "", "(devel)", "unknown"},
		{"OK_StampedWins", recorded, true, "v2.0.0", "def456", "v2.0.0", "def456"},
		{"OK_StampedWithoutBuildInfo", nil, false, "v2.0.0", "def456", "v2.0.0", "def456"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stamped = Stamp{Version: c.stampV, Revision: c.stampR}
			t.Cleanup(func() { stamped = Stamp{} })
			v := versionOf(c.info, c.ok)
			if v.Version != c.wantVer || v.Revision != c.wantRev || v.Go != runtime.Version() {
				t.Fatalf("got %+v, want %s %s", v, c.wantVer, c.wantRev)
			}
		})
	}
}
