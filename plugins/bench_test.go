package plugins

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
)

// Interview transcript lines for the redactor benchmarks: plain talk, talk with
// ordinary figures, and lines carrying one piece of personal data each.
var (
	plainLines = []string{
		"Interviewer: Can you walk me through the last time you onboarded a new teammate?",
		"Participant: Sure. In March 2024 we hired two designers, and honestly the first week was rough.",
		"Interviewer: What made the first week rough, in your words?",
		"Participant: Access, mostly. Nobody could reach the staging environment until IT opened a ticket.",
		"Participant: It took 45 minutes on the phone before anyone could tell me who owned the approvals.",
		"Interviewer: How did that compare with the previous time you went through it?",
		"Participant: Worse, I think. Two years ago we had a checklist and a buddy for every new starter.",
		"Participant: The new dashboard helped a lot; it loaded in under 2 seconds, compared with 12 before.",
		"Interviewer: If you could change one thing about the process, what would it be?",
		"Participant: I would give every new person a single page that says who to ask about what, and when.",
	}
	piiLines = []string{
		"Participant: I emailed the checklist to jane.doe@example.com and she forwarded it to the team lead.",
		"Participant: Nobody could reach the staging box at 10.20.30.40 until IT opened a ticket.",
		"Participant: I ended up calling the help desk on +44 20 7946 0958 three times that week.",
		"Participant: I paid with the company card, 4111 1111 1111 1111, and filed the expense on the 15th.",
	}
)

// transcriptRecords returns n redactor records whose cells hold about size bytes of
// interview transcript each, with a line of personal data after every piiEvery plain
// lines, and the number of bytes of cell text in all.
func transcriptRecords(tb testing.TB, n, size, piiEvery int) ([]json.RawMessage, int64) {
	tb.Helper()
	var (
		recs  []json.RawMessage
		total int64
	)
	for i := range n {
		var text strings.Builder
		for k := 0; text.Len() < size; k++ {
			line := plainLines[(i+k)%len(plainLines)]
			if k%(piiEvery+1) == piiEvery {
				line = piiLines[(i+k)%len(piiLines)]
			}
			text.WriteString(line)
			text.WriteByte('\n')
		}
		total += int64(text.Len())
		rec, err := json.Marshal(map[string]any{"id": fmt.Sprint("i", i), "cells": map[string]string{"transcript": text.String()}})
		if err != nil {
			tb.Fatal(err)
		}
		recs = append(recs, rec)
	}
	return recs, total
}

// BenchmarkBuiltinRedactor runs the built-in redactor, every class on, through the
// host over 4 MB of transcript in 500 records per run, with one line of personal data
// in ten. MB/s is cell text per second, instantiation and JSON on both sides included.
func BenchmarkBuiltinRedactor(b *testing.B) {
	benchmarkRedactor(b, 10)
}

// BenchmarkBuiltinRedactorDense is BenchmarkBuiltinRedactor with personal data on
// every other line.
func BenchmarkBuiltinRedactorDense(b *testing.B) {
	benchmarkRedactor(b, 1)
}

func benchmarkRedactor(b *testing.B, piiEvery int) {
	ctx := context.Background()
	h := mustHost(b, Config{})
	red := mustBuiltin(b, h, BuiltinRedactor)
	recs, total := transcriptRecords(b, 500, 8<<10, piiEvery)
	b.SetBytes(total)
	b.ReportAllocs()
	for b.Loop() {
		out, err := red.Redact(ctx, nil, recs)
		if err != nil || len(out) != len(recs) {
			b.Fatalf("Redact = %d records, %v", len(out), err)
		}
	}
}

// BenchmarkBuiltinCSV formats 5000 rows of 8 cells through the built-in CSV formatter.
func BenchmarkBuiltinCSV(b *testing.B) {
	ctx := context.Background()
	h := mustHost(b, Config{})
	csv := mustBuiltin(b, h, BuiltinCSV)
	var recs []json.RawMessage
	var total int64
	for i := range 5000 {
		cells := []string{fmt.Sprint(i), "study-1", "2024-03-01T10:00:00Z", "=cmd", "web", "a, b", `say "hi"`, strings.Repeat("words ", 40)}
		for _, c := range cells {
			total += int64(len(c))
		}
		rec, _ := json.Marshal(map[string]any{"cells": cells})
		recs = append(recs, rec)
	}
	b.SetBytes(total)
	b.ReportAllocs()
	for b.Loop() {
		if err := csv.Format(ctx, nil, recs, io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunOverhead is one run of the built-in redactor over one small record: the
// fixed cost of a fresh instance.
func BenchmarkRunOverhead(b *testing.B) {
	ctx := context.Background()
	h := mustHost(b, Config{})
	red := mustBuiltin(b, h, BuiltinRedactor)
	recs := []json.RawMessage{json.RawMessage(`{"id":"1","cells":{"t":"hello"}}`)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := red.Redact(ctx, nil, recs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadCold starts a host on an empty cache folder and loads the built-in CSV
// formatter: a full compilation.
func BenchmarkLoadCold(b *testing.B) {
	benchmarkLoad(b, func(b *testing.B) string { return b.TempDir() })
}

// BenchmarkLoadCached starts a host on a cache folder a previous host filled and loads
// the built-in CSV formatter: compiled code is read back from disk.
func BenchmarkLoadCached(b *testing.B) {
	dir := b.TempDir()
	benchmarkLoadOnce(b, dir)
	benchmarkLoad(b, func(*testing.B) string { return dir })
}

func benchmarkLoad(b *testing.B, cacheDir func(*testing.B) string) {
	for b.Loop() {
		b.StopTimer()
		dir := cacheDir(b)
		b.StartTimer()
		benchmarkLoadOnce(b, dir)
	}
}

func benchmarkLoadOnce(b *testing.B, dir string) {
	ctx := context.Background()
	h, err := NewHost(ctx, Config{CacheDir: dir})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := h.Builtin(ctx, BuiltinCSV); err != nil {
		b.Fatal(err)
	}
	if err := h.Close(ctx); err != nil {
		b.Fatal(err)
	}
}
