package cmd

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"interviewd/kv"
)

// TestBackupCommandRefusesExisting: --out never replaces a file unless --force says so,
// and the replacing backup is whole.
func TestBackupCommandRefusesExisting(t *testing.T) {
	s := mustSeed(t)
	folder := t.TempDir()
	out := filepath.Join(folder, "backup.tar")
	if err := os.WriteFile(out, []byte("last week's backup"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Run("ErrExists", func(t *testing.T) {
		_, err := runCmd("backup", "--data", s.data, "--out", out)
		if err == nil || !strings.Contains(err.Error(), out+" already exists") || !strings.Contains(err.Error(), "--force") {
			t.Fatalf("backup over an existing file: %v", err)
		}
		if b, _ := os.ReadFile(out); string(b) != "last week's backup" {
			t.Fatalf("the existing file was changed: %q", b)
		}
	})
	t.Run("OK_Force", func(t *testing.T) {
		var rc backupOutput
		admin(t, &rc, "backup", "--data", s.data, "--out", out, "--force")
		if rc.Out != out || rc.Files != 2 {
			t.Fatalf("receipt %+v", rc)
		}
		var v kv.VerifyReceipt
		admin(t, &v, "backup", "verify", out)
		if !v.OK || v.Files != 2 || v.DBBytes != rc.DBBytes {
			t.Fatalf("verify of the replacing backup: %+v", v)
		}
	})
	if left, _ := os.ReadDir(folder); len(left) != 1 {
		t.Fatalf("the folder holds %d files, want the backup alone (no temporary file left)", len(left))
	}
}

// TestBackupVerifyCommand runs the real Main in a child process: a good backup prints
// ok and exits 0; a damaged one exits 1 naming the problem; neither touches a data
// folder.
func TestBackupVerifyCommand(t *testing.T) {
	if args, ok := os.LookupEnv("IVD_TEST_VERIFY_ARGS"); ok {
		os.Exit(Main(strings.Split(args, "\x1f"), Stamp{}))
	}
	s := mustSeed(t)
	good := filepath.Join(t.TempDir(), "backup.tar")
	admin(t, &backupOutput{}, "backup", "--data", s.data, "--out", good)
	raw, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// The database is the first entry: its data starts after one 512-byte header.
	if !bytes.HasPrefix(raw, []byte(kv.FileName+"\x00")) {
		t.Fatalf("the backup does not start with %s", kv.FileName)
	}
	flipped := bytes.Clone(raw)
	flipped[512+1000] ^= 0x01
	cases := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"OK", []string{"backup", "verify", good}, 0, `"ok": true`, ""},
		{"ErrTruncated", []string{"backup", "verify", write("truncated.tar", raw[:len(raw)/2])}, 1, "",
			"is truncated: unexpected EOF"},
		{"ErrBitFlipped", []string{"backup", "verify", write("flipped.tar", flipped)}, 1, "",
			"The backup's interviewd.db does not match its manifest (SHA-256 differs)."},
		{"ErrNoFile", []string{"backup", "verify"}, 1, "", "interviewd: backup verify: name the backup to check"},
	}
	cwd := t.TempDir()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestBackupVerifyCommand$")
			cmd.Dir = cwd // where ./data would be, were a data folder touched
			cmd.Env = append(os.Environ(), "IVD_TEST_VERIFY_ARGS="+strings.Join(c.args, "\x1f"))
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				code = exit.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != c.code || !strings.Contains(stdout.String(), c.stdout) || !strings.Contains(stderr.String(), c.stderr) {
				t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout.String(), stderr.String())
			}
			if c.code != 0 && !strings.HasPrefix(stderr.String(), "interviewd: backup verify: ") {
				t.Fatalf("stderr %q", stderr.String())
			}
			if entries, _ := os.ReadDir(cwd); len(entries) != 0 {
				t.Fatalf("verify wrote into its working folder: %v", entries)
			}
		})
	}
}
