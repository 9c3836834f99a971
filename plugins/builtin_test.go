package plugins

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"interviewd/plugins/plugintest"
)

// redactCell runs the built-in redactor with config over one record holding text and
// returns the redacted text.
func redactCell(tb testing.TB, red *Plugin, config any, text string) string {
	tb.Helper()
	rec, err := json.Marshal(map[string]any{"id": "r1", "cells": map[string]string{"t": text}})
	if err != nil {
		tb.Fatal(err)
	}
	out, err := red.Redact(context.Background(), config, []json.RawMessage{rec})
	if err != nil {
		tb.Fatalf("Redact(%q): %v", text, err)
	}
	var back struct {
		ID    string            `json:"id"`
		Cells map[string]string `json:"cells"`
	}
	if err := json.Unmarshal(out[0], &back); err != nil || back.ID != "r1" {
		tb.Fatalf("Redact wrote %s (%v)", out[0], err)
	}
	return back.Cells["t"]
}

func TestBuiltinRedactor(t *testing.T) {
	h := mustHost(t, Config{})
	red := mustBuiltin(t, h, BuiltinRedactor)
	if d := red.Descriptor(); d != (Descriptor{Kind: KindRedactor, Name: "redactor", ABIVersion: 1}) {
		t.Fatalf("Descriptor = %+v", d)
	}
	custom := map[string]any{"patterns": []map[string]string{
		{"name": "employee_id", "regex": `E\d{6}`},
		{"name": "project", "regex": `(?i)project [a-z]+`},
	}}
	tests := []struct {
		name   string
		config any
		in     string
		want   string
	}{
		{"EmailDefault", nil, "reach me at jane.doe@example.com.", "reach me at [EMAIL]."},
		{"EmailTwo", nil, "a@b.io and c.d+e@mail.example.org", "[EMAIL] and [EMAIL]"},
		{"EmailOff", map[string]bool{"email": false}, "jane@example.com", "jane@example.com"},
		{"PhoneUS", nil, "call (555) 123-4567 or 555.987.6543", "call [PHONE] or [PHONE]"},
		{"PhoneInternational", nil, "+44 20 7946 0958, +33 1 23 45 67 89", "[PHONE], [PHONE]"},
		{"PhoneLocal", nil, "ext 555-1234", "ext [PHONE]"},
		{"PhoneNotDateOrYear", nil, "on 2024-01-15 in 1999", "on 2024-01-15 in 1999"},
		{"PhoneOff", map[string]bool{"phone": false}, "555-123-4567", "555-123-4567"},
		{"CardValid", nil, "card 4111 1111 1111 1111 expires", "card [CARD] expires"},
		{"CardAmexDashes", nil, "3782-822463-10005", "[CARD]"},
		// With phones on, a Luhn-invalid card's first groups would pass for a phone.
		{"CardLuhnInvalidIsNotACard", map[string]bool{"phone": false}, "4111 1111 1111 1112", "4111 1111 1111 1112"},
		{"CardOff", map[string]bool{"card": false, "phone": false}, "4111111111111111", "4111111111111111"},
		{"IPv4", nil, "server 192.168.10.4 down", "server [IP] down"},
		{"IPv6", nil, "via 2001:db8::8a2e:370:7334 and ::1", "via [IP] and [IP]"},
		{"IPNotVersion", nil, "version 1.2.3.4.5", "version 1.2.3.4.5"},
		{"IPOff", map[string]bool{"ip": false, "phone": false}, "10.0.0.1", "10.0.0.1"},
		{"CustomPatterns", custom, "E123456 works on Project Falcon", "[EMPLOYEE_ID] works on [PROJECT]"},
		{"CustomWithBuiltins", custom, "E123456: e@x.io", "[EMPLOYEE_ID]: [EMAIL]"},
		{"Multiline", nil, "line one a@b.io\n555-123-4567\tend", "line one [EMAIL]\n[PHONE]\tend"},
		{"Unicode", nil, "Zoë: zoë@example.fr ☎ 020 7946 0958", "Zoë: [EMAIL] ☎ [PHONE]"},
		{"NothingToRemove", nil, "We talked about onboarding.", "We talked about onboarding."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := redactCell(t, red, tc.config, tc.in); got != tc.want {
				t.Fatalf("redacted %q to %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestBuiltinRedactorRefusesBadPattern(t *testing.T) {
	h := mustHost(t, Config{})
	red := mustBuiltin(t, h, BuiltinRedactor)
	config := map[string]any{"patterns": []map[string]string{{"name": "broken", "regex": `E(\d{6}`}}}
	_, err := red.Redact(context.Background(), config, []json.RawMessage{json.RawMessage(`{"cells":{}}`)})
	pe := wantPluginError(t, err, ReasonExit, "exited with code 1")
	if !strings.Contains(pe.Stderr, "redactor: pattern broken: error parsing regexp") {
		t.Fatalf("Stderr = %q, want the pattern's error", pe.Stderr)
	}
}

// formatCSV runs the built-in CSV formatter over rows and returns the artifact.
func formatCSV(tb testing.TB, p *Plugin, rows [][]string) string {
	tb.Helper()
	recs := make([]json.RawMessage, len(rows))
	for i, r := range rows {
		b, err := json.Marshal(map[string][]string{"cells": r})
		if err != nil {
			tb.Fatal(err)
		}
		recs[i] = b
	}
	var out bytes.Buffer
	if err := p.Format(context.Background(), nil, recs, &out); err != nil {
		tb.Fatal(err)
	}
	return out.String()
}

func TestBuiltinCSV(t *testing.T) {
	h := mustHost(t, Config{})
	p := mustBuiltin(t, h, BuiltinCSV)
	if d := p.Descriptor(); d != (Descriptor{Kind: KindFormatter, Name: "csv", MediaType: "text/csv; charset=utf-8", ABIVersion: 1}) {
		t.Fatalf("Descriptor = %+v", d)
	}
	tests := []struct {
		name string
		rows [][]string
		want string
	}{
		{"Plain", [][]string{{"id", "note"}, {"1", "fine"}}, "id,note\r\n1,fine\r\n"},
		{"Comma", [][]string{{"a"}, {"x, y"}}, "a\r\n\"x, y\"\r\n"},
		{"Quotes", [][]string{{"a"}, {`she said "no"`}}, "a\r\n\"she said \"\"no\"\"\"\r\n"},
		{"Newlines", [][]string{{"a", "b"}, {"line\nbreak", "cr\rhere"}}, "a,b\r\n\"line\nbreak\",\"cr\rhere\"\r\n"},
		{"InjectionEquals", [][]string{{"a"}, {"=HYPERLINK(\"http://evil\")"}}, "a\r\n\"'=HYPERLINK(\"\"http://evil\"\")\"\r\n"},
		{"InjectionPlusMinusAt", [][]string{{"a", "b", "c"}, {"+1", "-2", "@sum"}}, "a,b,c\r\n'+1,'-2,'@sum\r\n"},
		{"InjectionTabCR", [][]string{{"a", "b"}, {"\tx", "\ry"}}, "a,b\r\n'\tx,\"'\ry\"\r\n"},
		{"InjectionInHeader", [][]string{{"=a"}}, "'=a\r\n"},
		{"NotAtStart", [][]string{{"a"}, {"1+1=2"}}, "a\r\n1+1=2\r\n"},
		{"EmptyCells", [][]string{{"a", "b"}, {"", ""}}, "a,b\r\n,\r\n"},
		{"Unicode", [][]string{{"a"}, {"Zoë 😀"}}, "a\r\nZoë 😀\r\n"},
		{"NoRows", nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := formatCSV(t, p, tc.rows)
			if got != tc.want {
				t.Fatalf("CSV = %q, want %q", got, tc.want)
			}
			// encoding/csv reads back the same fields, apostrophes aside.
			back, err := csv.NewReader(strings.NewReader(got)).ReadAll()
			if err != nil || len(back) != len(tc.rows) {
				t.Fatalf("encoding/csv read %q, %v", back, err)
			}
			for i := range back {
				if len(back[i]) != len(tc.rows[i]) {
					t.Fatalf("row %d has %d fields, want %d", i, len(back[i]), len(tc.rows[i]))
				}
			}
		})
	}
}

func TestBuiltinCSVRefusesRaggedRows(t *testing.T) {
	h := mustHost(t, Config{})
	p := mustBuiltin(t, h, BuiltinCSV)
	recs := []json.RawMessage{json.RawMessage(`{"cells":["a","b"]}`), json.RawMessage(`{"cells":["1"]}`)}
	err := p.Format(context.Background(), nil, recs, &bytes.Buffer{})
	pe := wantPluginError(t, err, ReasonExit, "exited with code 1")
	if !strings.Contains(pe.Stderr, "row 2 has 1 cells, the header has 2") {
		t.Fatalf("Stderr = %q", pe.Stderr)
	}
}

func TestExampleJSONLFormatter(t *testing.T) {
	h := mustHost(t, Config{})
	p := mustLoadFile(t, h, plugintest.Path(t, plugintest.JSONL))
	if d := p.Descriptor(); d != (Descriptor{Kind: KindFormatter, Name: "jsonl", MediaType: "application/x-ndjson", ABIVersion: 1}) {
		t.Fatalf("Descriptor = %+v", d)
	}
	recs := []json.RawMessage{json.RawMessage(`{"cells": ["id", "note"]}`), json.RawMessage(`{"cells":["1","a\nb"]}`)}
	var out bytes.Buffer
	if err := p.Format(context.Background(), map[string]any{}, recs, &out); err != nil {
		t.Fatal(err)
	}
	want := "{\"cells\":[\"id\",\"note\"]}\n{\"cells\":[\"1\",\"a\\nb\"]}\n"
	if out.String() != want {
		t.Fatalf("jsonl wrote %q, want %q", out.String(), want)
	}
}

// generateLines returns the go build commands of generate.go whose output is under
// dir, as argument lists after "env".
func generateLines(tb testing.TB, dir string) [][]string {
	tb.Helper()
	src, err := os.ReadFile("generate.go")
	if err != nil {
		tb.Fatal(err)
	}
	var cmds [][]string
	sc := bufio.NewScanner(bytes.NewReader(src))
	for sc.Scan() {
		args, ok := strings.CutPrefix(sc.Text(), "//go:generate env ")
		if !ok {
			continue
		}
		fields := strings.Fields(args)
		for i, f := range fields {
			if f == "-o" && i+1 < len(fields) && strings.HasPrefix(fields[i+1], dir+"/") {
				cmds = append(cmds, fields)
			}
		}
	}
	if len(cmds) == 0 {
		tb.Fatalf("generate.go has no build line for %s/", dir)
	}
	return cmds
}

// TestBuiltinsReproducible rebuilds the built-in plugins with generate.go's commands
// and compares them with the committed (embedded) bytes.
func TestBuiltinsReproducible(t *testing.T) {
	if testing.Short() {
		t.Skip("rebuilds the built-in plugins")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the Go toolchain is not on PATH; cannot rebuild the built-in plugins")
	}
	version, err := exec.Command(goBin, "env", "GOVERSION").Output()
	if err != nil {
		t.Fatal(err)
	}
	goVersion := strings.TrimSpace(string(version))
	tmp := t.TempDir()
	for _, line := range generateLines(t, "builtin") {
		var env, args []string
		for len(line) > 0 && strings.Contains(line[0], "=") {
			env, line = append(env, line[0]), line[1:]
		}
		if line[0] != "go" {
			t.Fatalf("generate line runs %q, not go", line[0])
		}
		var committed string
		for i := range line {
			if line[i] == "-o" {
				committed = line[i+1]
				line[i+1] = filepath.Join(tmp, filepath.Base(committed))
			}
		}
		args = line[1:]
		want := mustUnzstd(t, committed+".zst")
		if !builtBy(want, goVersion) {
			t.Skipf("%s was built by another Go release than %s; run go generate ./plugins/ with this toolchain to compare", committed, goVersion)
		}
		cmd := exec.Command(goBin, args...)
		cmd.Env = append(append(os.Environ(), "GOFLAGS="), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		got, err := os.ReadFile(filepath.Join(tmp, filepath.Base(committed)))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not what its source builds to (%d bytes built, %d committed): run go generate ./plugins/ and commit", committed, len(got), len(want))
		}
	}
	for _, name := range []string{BuiltinRedactor, BuiltinCSV, BuiltinQDPX, BuiltinAnalysisMarkdown, BuiltinAnalysisHTML} {
		if packed, _ := builtinPacked(name); !bytes.Equal(packed, mustRead(t, "builtin/"+name+".wasm.zst")) {
			t.Errorf("the embedded built-in %s differs from its file", name)
		}
	}
}

// mustUnzstd returns the unpacked contents of the zstd file at path.
func mustUnzstd(tb testing.TB, path string) []byte {
	tb.Helper()
	b, err := unzstd(mustRead(tb, path))
	if err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	return b
}

// builtBy reports whether a Go binary carries the version string goVersion (so
// "go1.26.1" does not match a binary of go1.26.10).
func builtBy(binary []byte, goVersion string) bool {
	for rest := binary; ; {
		i := bytes.Index(rest, []byte(goVersion))
		if i < 0 {
			return false
		}
		rest = rest[i+len(goVersion):]
		if len(rest) == 0 || rest[0] < '0' || rest[0] > '9' {
			return true
		}
	}
}

func mustRead(tb testing.TB, path string) []byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
