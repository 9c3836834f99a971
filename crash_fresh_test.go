package main

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"interviewd/kv"
)

// TestCrashBeforeFirstWrite: a new data folder's file is written without a sync (kv
// syncs it with the first acknowledged write), so a power cut before that write may
// leave it cut short or with pages that never reached the disk. The real binary starts
// on an empty folder and is killed with SIGKILL; the file is then put in such states
// (what a power cut could leave, which a kill cannot: the kernel still holds the
// pages), and the binary restarted on it must serve, take `setup` and a key through its
// admin socket and answer that key, with a file that passes bbolt's check; a damaged
// file is kept beside the new one, byte for byte.
func TestCrashBeforeFirstWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("crash suite skipped in -short mode (it builds and kills the real binary)")
	}
	bin := buildCrashBinary(t)
	empty := t.TempDir()
	srv := startCrashBinary(t, bin, empty)
	srv.kill(t)
	img, err := os.ReadFile(filepath.Join(empty, kv.FileName))
	if err != nil {
		t.Fatal(err)
	}
	page := os.Getpagesize()
	if len(img) < 4*page {
		t.Fatalf("a new data file of %d bytes", len(img))
	}
	zero := func(b []byte, from, to int) []byte {
		b = bytes.Clone(b)
		clear(b[from:to])
		return b
	}
	states := []struct {
		name       string
		file       []byte
		setAside   bool
		removeFile bool
	}{
		{name: "NoFile", removeFile: true},
		{name: "Empty", file: []byte{}},
		{name: "Whole", file: img},
		{name: "AllPagesLost", file: make([]byte, len(img)), setAside: true},
		{name: "MetaPagesLost", file: zero(img, 0, 2*page), setAside: true},
		{name: "TreeLost", file: zero(img, 2*page, len(img)), setAside: true},
		{name: "CutAfterMeta", file: img[:2*page], setAside: true},
		{name: "NewestMetaLost", file: zero(img, 0, page)}, // bbolt falls back to the empty store of page 1
	}
	for _, s := range states {
		t.Run(s.name, func(t *testing.T) {
			data := t.TempDir()
			path := filepath.Join(data, kv.FileName)
			if !s.removeFile {
				if err := os.WriteFile(path, s.file, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			srv := startCrashBinary(t, bin, data)
			var org struct {
				OrgID string `json:"org_id"`
			}
			crashAdmin(t, bin, &org, "setup", "--data", data, "--org", "After A Cut", "--email", "cut@example.test")
			var key struct {
				Secret string `json:"secret"`
			}
			crashAdmin(t, bin, &key, "keys", "create", "--data", data, "--org", org.OrgID, "--name", "cut", "--env", "live", "--scopes", "studies:read")
			req, err := http.NewRequest(http.MethodGet, srv.url+"/v1/api/me", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+key.Secret)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("GET /v1/api/me with the new key: %d", resp.StatusCode)
			}
			srv.stop(t)
			mustCheckBolt(t, path)
			aside, err := filepath.Glob(path + ".unfinished-*")
			if err != nil {
				t.Fatal(err)
			}
			if s.setAside != (len(aside) == 1) || len(aside) > 1 {
				t.Fatalf("set aside %v, want a file set aside: %v", aside, s.setAside)
			}
			if len(aside) == 1 {
				kept, err := os.ReadFile(aside[0])
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(kept, s.file) {
					t.Fatal("the file set aside is not the damaged file byte for byte")
				}
			}
			if strings.Contains(srv.logs.String(), `"level":"error"`) {
				t.Errorf("errors logged:\n%s", logTail(srv.logs.String(), 20))
			}
		})
	}
}
