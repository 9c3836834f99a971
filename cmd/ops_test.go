package cmd

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"interviewd/kv"
)

// seeded is a data folder with one organisation, a live study, one completed interview
// with its transcript, and an export artifact on disk that holds it.
type seeded struct {
	data      string
	org       kv.ID
	interview kv.ID
	other     kv.ID // a second interview, not in the artifact
	artifact  string
}

func mustSeed(t *testing.T) seeded {
	t.Helper()
	data := filepath.Join(t.TempDir(), "data")
	db, err := kv.Open(data, kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	org, _, err := db.CreateOrg(ctx, kv.OrgInput{Name: "Seed", Email: "s@example.com", Credits: 5})
	if err != nil {
		t.Fatal(err)
	}
	p := kv.Partition{Org: org.ID, Env: kv.EnvLive}
	title := "Seeded"
	st, err := db.CreateStudy(ctx, kv.StudyInput{Partition: p, Brief: kv.Brief{Title: &title, Objectives: []string{"Learn"}, VerbatimQuestions: []string{"Why?"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.SetStudyMode(ctx, p, st.ID, kv.ModeLive); err != nil {
		t.Fatal(err)
	}
	var ivs []kv.Interview
	for _, session := range []string{"participant-one", "participant-two"} {
		o, err := db.OpenLink(ctx, st.LinkToken, session)
		if err != nil {
			t.Fatal(err)
		}
		iv, err := db.AppendTurn(ctx, p, o.Interview.ID, kv.Turn{Session: session, Status: kv.InterviewCompleted, Messages: []kv.Message{
			{Speaker: kv.SpeakerInterviewer, Text: "Why?", At: db.Now()},
			{Speaker: kv.SpeakerParticipant, Text: "Because, said " + session, At: db.Now()},
		}})
		if err != nil {
			t.Fatal(err)
		}
		ivs = append(ivs, iv)
	}
	j, err := db.CreateExportJob(ctx, kv.ExportInput{Partition: p, JobID: db.NewID(), StudyID: st.ID, Format: "csv"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rel := filepath.Join("exports", j.ID.String()+".csv")
	if err := os.MkdirAll(filepath.Join(db.BlobDir(), "exports"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(db.BlobDir(), rel), []byte("answer\nBecause, said participant-one\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := db.FinishExport(ctx, p, j.ID, kv.ExportResult{Blob: rel, Rows: 1, Interviews: []kv.ID{ivs[0].ID}, ExpiresAt: time.Now().Add(kv.ExportArtifactTTL)}); err != nil {
		t.Fatal(err)
	}
	return seeded{data: data, org: org.ID, interview: ivs[0].ID, other: ivs[1].ID, artifact: filepath.Join(db.BlobDir(), rel)}
}

func runCmd(args ...string) (string, error) {
	var out bytes.Buffer
	err := Run(context.Background(), args, &out, io.Discard, noEnv)
	return out.String(), err
}

func TestBackupAndRestoreCommands(t *testing.T) {
	s := mustSeed(t)
	out := filepath.Join(t.TempDir(), "backup.tar")
	var rc backupOutput
	admin(t, &rc, "backup", "--data", s.data, "--out", out)
	if rc.Out != out || rc.Files != 2 || rc.DBBytes == 0 || rc.CreatedAt.IsZero() { // the file and the artifact
		t.Fatalf("receipt %+v", rc)
	}
	// Data written after the backup is what a restore takes away (kept aside).
	var later struct {
		OrgID string `json:"org_id"`
	}
	admin(t, &later, "setup", "--data", s.data, "--org", "Later", "--email", "later@example.com")

	t.Run("ErrWhileServerRuns", func(t *testing.T) {
		bootAt(t, freeAddr(t), "--data", s.data)
		_, err := runCmd("restore", "--data", s.data, "--from", out)
		if err == nil || !strings.Contains(err.Error(), "held by a running interviewd server") {
			t.Fatalf("restore under a running server: %v", err)
		}
	})
	t.Run("ErrMissingFrom", func(t *testing.T) {
		if _, err := runCmd("restore", "--data", s.data); err == nil || !strings.Contains(err.Error(), "--from") {
			t.Fatalf("%v", err)
		}
		if _, err := runCmd("backup", "--data", s.data); err == nil || !strings.Contains(err.Error(), "--out") {
			t.Fatalf("%v", err)
		}
	})
	t.Run("OK_Restore", func(t *testing.T) {
		var r kv.RestoreReceipt
		admin(t, &r, "restore", "--data", s.data, "--from", out)
		if !r.Checked || r.KeptAside == "" || r.Files != 2 {
			t.Fatalf("receipt %+v", r)
		}
		db, err := kv.Open(s.data, kv.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		laterID, _ := kv.ParseID(later.OrgID)
		if _, err := db.FindOrgByID(context.Background(), laterID); kv.ErrorCode(err) != kv.ENOTFOUND {
			t.Fatal("data written after the backup survived the restore")
		}
		if _, err := db.FindTranscript(context.Background(), kv.Partition{Org: s.org, Env: kv.EnvLive}, s.interview); err != nil {
			t.Fatalf("restored transcript: %v", err)
		}
		if b, err := os.ReadFile(s.artifact); err != nil || !strings.Contains(string(b), "participant-one") {
			t.Fatalf("restored artifact: %v", err)
		}
		if _, err := os.Stat(filepath.Join(r.KeptAside, kv.FileName)); err != nil {
			t.Fatalf("replaced file not kept aside: %v", err)
		}
	})
}

func TestInterviewsEraseCommand(t *testing.T) {
	s := mustSeed(t)
	t.Run("ErrBadID", func(t *testing.T) {
		if _, err := runCmd("interviews", "erase", "--data", s.data, "--id", "nope"); err == nil || !strings.Contains(err.Error(), "not a UUID") {
			t.Fatalf("%v", err)
		}
		if _, err := runCmd("interviews", "erase", "--data", s.data); err == nil || !strings.Contains(err.Error(), "--id") {
			t.Fatalf("%v", err)
		}
	})
	t.Run("OK_Receipt", func(t *testing.T) {
		var rc kv.EraseReceipt
		before := time.Now().Add(-time.Second)
		admin(t, &rc, "interviews", "erase", "--data", s.data, "--id", s.interview.String())
		if rc.InterviewID != s.interview || !rc.Interview || rc.TranscriptMessages != 2 || rc.Sessions != 2 ||
			len(rc.ExportArtifacts) != 1 || rc.ErasedAt.Before(before) {
			t.Fatalf("receipt %+v", rc)
		}
		if _, err := os.Stat(s.artifact); !os.IsNotExist(err) {
			t.Fatal("the artifact holding the interview is still on disk")
		}
		db, err := kv.Open(s.data, kv.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		p := kv.Partition{Org: s.org, Env: kv.EnvLive}
		if _, err := db.FindTranscript(context.Background(), p, s.interview); kv.ErrorCode(err) != kv.ENOTFOUND {
			t.Fatalf("erased transcript: %v", err)
		}
		if msgs, err := db.FindTranscript(context.Background(), p, s.other); err != nil || len(msgs) != 2 {
			t.Fatalf("another participant's transcript: %v", err)
		}
	})
	t.Run("ErrAlreadyErased", func(t *testing.T) {
		if _, err := runCmd("interviews", "erase", "--data", s.data, "--id", s.interview.String()); err == nil || !strings.Contains(err.Error(), "not found") {
			t.Fatalf("%v", err)
		}
	})
}

func TestOrgRetentionCommand(t *testing.T) {
	s := mustSeed(t)
	org := s.org.String()
	var got map[string]any
	admin(t, &got, "org", "retention", "--data", s.data, "--org", org, "--days", "30")
	if got["retention_days"] != float64(30) {
		t.Fatalf("%v", got)
	}
	admin(t, &got, "org", "retention", "--data", s.data, "--org", org, "--days", "off")
	if got["retention_days"] != "off" {
		t.Fatalf("%v", got)
	}
	for _, bad := range [][]string{{"--days", "0"}, {"--days", "-3"}, {"--days", "soon"}, {"--days", "36501"}, {}} {
		args := append([]string{"org", "retention", "--data", s.data, "--org", org}, bad...)
		if _, err := runCmd(args...); err == nil || !strings.Contains(err.Error(), "--days") {
			t.Fatalf("%v: %v", bad, err)
		}
	}
	if _, err := runCmd("org", "retention", "--data", s.data, "--org", kv.ID{1}.String(), "--days", "5"); err == nil {
		t.Fatal("unknown organisation accepted")
	}
}

// scrapeText reads a metrics page and returns the value of series.
func scrapeValue(t *testing.T, url, series string) (float64, bool) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("%s: %d %s", url, resp.StatusCode, body)
	}
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindSubmatch(body)
	if m == nil {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	return v, err == nil
}

func TestScheduledBackupsAndMetricsAddr(t *testing.T) {
	s := mustSeed(t)
	backups := filepath.Join(t.TempDir(), "backups")
	addr, metricsAddr := freeAddr(t), freeAddr(t)
	bootAt(t, addr, "--data", s.data, "--backup-dir", backups, "--backup-every", "1s", "--backup-keep", "2", "--metrics-addr", metricsAddr)
	for deadline := time.Now().Add(120 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if v, _ := scrapeValue(t, "http://"+metricsAddr+"/metrics", `interviewd_backups_total{result="ok"}`); v >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("fewer than 3 scheduled backups within 120 s")
		}
	}
	var kept []string
	entries, _ := os.ReadDir(backups)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), kv.BackupPrefix) {
			kept = append(kept, e.Name())
		}
	}
	// Pruning runs after each backup: at most keep, plus the one being written.
	if len(kept) < 2 || len(kept) > 3 {
		t.Fatalf("kept %v, want the newest 2", kept)
	}
	if v, ok := scrapeValue(t, "http://"+metricsAddr+"/metrics", "interviewd_db_file_bytes"); !ok || v <= 0 {
		t.Fatalf("db file size %v", v)
	}
	if _, ok := scrapeValue(t, "http://"+metricsAddr+"/metrics", "interviewd_db_commit_duration_seconds_count"); !ok {
		t.Fatal("no commit latency histogram")
	}
	if resp, err := http.Get("http://" + addr + "/metrics"); err != nil || resp.StatusCode != 404 {
		t.Fatalf("main listener with --metrics-addr: %v %v", resp, err)
	}
	// A scheduled backup restores.
	var r kv.RestoreReceipt
	admin(t, &r, "restore", "--data", filepath.Join(t.TempDir(), "restored"), "--from", filepath.Join(backups, kept[0]))
	if !r.Checked || r.Files != 2 {
		t.Fatalf("%+v", r)
	}
}

// TestBackupAndEraseWhileServing runs backup, erase and retention through the running
// server's admin socket: the server holds the file, so these could not open it.
func TestBackupAndEraseWhileServing(t *testing.T) {
	s := mustSeed(t)
	bootAt(t, freeAddr(t), "--data", s.data)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(s.data, "admin.sock")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no admin socket after 60 s")
		}
	}
	// A relative --out is the client's: the server writes where the client meant.
	dir := t.TempDir()
	t.Chdir(dir)
	var rc backupOutput
	admin(t, &rc, "backup", "--data", s.data, "--out", "live.tar")
	if rc.Out != filepath.Join(dir, "live.tar") || rc.Files != 2 {
		t.Fatalf("receipt %+v", rc)
	}
	var er kv.EraseReceipt
	admin(t, &er, "interviews", "erase", "--data", s.data, "--id", s.interview.String())
	if !er.Interview || er.TranscriptMessages != 2 || len(er.ExportArtifacts) != 1 {
		t.Fatalf("receipt %+v", er)
	}
	if _, err := os.Stat(s.artifact); !os.IsNotExist(err) {
		t.Fatal("artifact still on disk")
	}
	var ret map[string]any
	admin(t, &ret, "org", "retention", "--data", s.data, "--org", s.org.String(), "--days", "7")
	if ret["retention_days"] != float64(7) {
		t.Fatalf("%v", ret)
	}
	// The backup taken while serving restores, with the interview erased after it.
	restored := filepath.Join(t.TempDir(), "restored")
	var r kv.RestoreReceipt
	admin(t, &r, "restore", "--data", restored, "--from", filepath.Join(dir, "live.tar"))
	db, err := kv.Open(restored, kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if msgs, err := db.FindTranscript(context.Background(), kv.Partition{Org: s.org, Env: kv.EnvLive}, s.interview); err != nil || len(msgs) != 2 {
		t.Fatalf("backup taken while serving: %v", err)
	}
}
