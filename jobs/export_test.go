package jobs

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/rs/zerolog"
	"github.com/tetratelabs/wazero"

	"interviewd/kv"
	"interviewd/moderator"
	"interviewd/plugins"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// testPluginCache is the compilation cache every test host shares: compiled once per
// suite (and kept on disk between runs), a built-in plugin loads at once in each test.
var testPluginCache = sync.OnceValues(func() (wazero.CompilationCache, error) {
	return wazero.NewCompilationCacheWithDir(filepath.Join(os.TempDir(), "interviewd-test-plugin-cache"))
})

func mustPlugins(tb testing.TB) *plugins.Host {
	tb.Helper()
	cache, err := testPluginCache()
	if err != nil {
		tb.Fatal(err)
	}
	h, err := plugins.NewHost(context.Background(), plugins.Config{Cache: cache})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = h.Close(context.Background()) })
	return h
}

// goldenInterviews is a fixed set: context columns that only some rows have, free text
// with PII, commas, quotes, newlines and formula triggers.
func goldenInterviews() (kv.Brief, []exportInterview) {
	title := "Rota planning"
	brief := kv.Brief{Title: &title, PreInterviewQuestions: []string{"How many people are on your team?"},
		VerbatimQuestions: []string{"How do you plan the rota today?", "What goes wrong, if anything?"}}
	at := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	done := at.Add(14 * time.Minute)
	dur := 512
	person, group := "person", "group"
	id := func(n byte) kv.ID { return kv.ID{0x01, 0x9a, 0, 0, 0, 0, 0x70, 0, 0x80, 0, 0, 0, 0, 0, 0, n} }
	study := kv.ID{0x01, 0x9a, 0, 0, 0, 0, 0x70, 0, 0x80, 0, 0, 0, 0, 0, 0, 0xaa}
	q := func(i int) string {
		all := append(append([]string{}, brief.PreInterviewQuestions...), brief.VerbatimQuestions...)
		return all[i]
	}
	return brief, []exportInterview{
		{Interview: kv.Interview{ID: id(1), StudyID: study, Status: kv.InterviewCompleted, Modality: "text", StartedAt: at, CompletedAt: &done,
			DurationSeconds: &dur, InviteAudience: &person, EntryAttributes: map[string]string{"crm_id": "C-1", "email": "jane.doe@example.com"}},
			Transcript: []exportMessage{
				{kv.SpeakerInterviewer, "Hello! Thanks for joining.\n\n" + q(0)},
				{kv.SpeakerParticipant, "Five. Call me on +44 20 7946 0958 or jane.doe@example.com."},
				{kv.SpeakerInterviewer, q(1)},
				{kv.SpeakerParticipant, "=SUM(A1:A9), \"quoted\", with a comma,\nand a new line."},
				{kv.SpeakerInterviewer, "Could you tell me more about that?"},
				{kv.SpeakerParticipant, "Card 4111 1111 1111 1111 from 10.0.0.7."},
				{kv.SpeakerInterviewer, q(2)},
				{kv.SpeakerParticipant, "-nights, mostly"},
				{kv.SpeakerInterviewer, "That's all my questions. Thank you!"},
			}},
		{Interview: kv.Interview{ID: id(2), StudyID: study, Status: kv.InterviewCompleted, Modality: "voice", StartedAt: at.Add(time.Hour), CompletedAt: &done,
			InviteAudience: &group, EntryAttributes: map[string]string{"plan": "@pro"}},
			Transcript: []exportMessage{
				{kv.SpeakerInterviewer, q(0)},
				{kv.SpeakerParticipant, "+3"},
				{kv.SpeakerInterviewer, q(1)},
				{kv.SpeakerParticipant, "\ttabbed"},
			}},
	}
}

// TestExportGoldenCSV runs a fixed table through the real built-in redactor and CSV
// formatter (through the plugin host) and pins the bytes. A study without consent or
// completion codes exports exactly the columns it always had (export.golden.csv); one
// with them adds consented_at, consent_text and completion_code after the transcript.
func TestExportGoldenCSV(t *testing.T) {
	consentAt := time.Date(2026, 11, 21, 8, 59, 30, 0, time.UTC)
	for _, tc := range []struct {
		name, golden string
		settings     kv.ParticipantSettings
		mark         func(ivs []exportInterview)
	}{
		{"OK_NoParticipantSettings", "export.golden.csv", kv.ParticipantSettings{}, func([]exportInterview) {}},
		{"OK_ConsentAndCompletionCodes", "export.participants.golden.csv",
			kv.ParticipantSettings{ConsentText: "I agree.", CompletionRedirectURL: "https://panel.example/done?cc={completion_code}"},
			func(ivs []exportInterview) {
				// The first interview consented and got a code; the second predates both.
				ivs[0].Interview.ConsentedAt, ivs[0].Interview.ConsentText = &consentAt, "I agree, \"as written\"."
				ivs[0].Interview.CompletionCode = "K7P2M9QX4R"
			}},
		{"OK_DataOutlivesSettings", "export.participants.golden.csv", kv.ParticipantSettings{},
			func(ivs []exportInterview) {
				ivs[0].Interview.ConsentedAt, ivs[0].Interview.ConsentText = &consentAt, "I agree, \"as written\"."
				ivs[0].Interview.CompletionCode = "K7P2M9QX4R"
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			brief, ivs := goldenInterviews()
			tc.mark(ivs)
			checkExportGolden(t, brief, tc.settings, ivs, tc.golden)
		})
	}
}

func checkExportGolden(t *testing.T, brief kv.Brief, settings kv.ParticipantSettings, ivs []exportInterview, name string) {
	t.Helper()
	db := mustOpenDB(t, t.TempDir())
	defer db.Close()
	ctx := context.Background()
	org, _, err := db.CreateOrg(ctx, kv.OrgInput{Name: "Golden", Email: "g@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.SetRedaction(ctx, org.ID, kv.Redaction{Email: true, Phone: true, Card: true, IP: true,
		Patterns: []kv.RedactionPattern{{Name: "CRM", Regex: `C-\d+`}}}); err != nil {
		t.Fatal(err)
	}
	r := NewRunner(Config{DB: db, Moderator: moderator.NewBuiltin(), Log: zerolog.Nop(), Plugins: mustPlugins(t)})
	defer r.Close(ctx)
	if err := r.redactInterviews(ctx, org.ID, brief, ivs); err != nil {
		t.Fatal(err)
	}
	table := buildExportTable(brief, settings, ivs)
	csvPlugin, err := r.plugins.Builtin(ctx, plugins.BuiltinCSV)
	if err != nil {
		t.Fatal(err)
	}
	var records []json.RawMessage
	for _, row := range append([][]string{table.Header}, table.Rows...) {
		raw, _ := json.Marshal(formatRecord{Cells: row})
		records = append(records, raw)
	}
	var got bytes.Buffer
	if err := csvPlugin.Format(ctx, nil, records, &got); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("export differs from %s:\n%s", golden, got.String())
	}
}

// BenchmarkExport10k exports 10,000 completed interviews of 20 turns each through the
// whole job: kv reads, table, built-in redactor and CSV formatter, artifact.
func BenchmarkExport10k(b *testing.B) {
	db, err := kv.Open(b.TempDir(), kv.Options{NoSync: true}) // seeding 10,000 interviews

	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	org, _, _ := db.CreateOrg(ctx, kv.OrgInput{Name: "Big", Email: "big@example.com", Credits: 20000})
	p := kv.Partition{Org: org.ID, Env: kv.EnvLive}
	title := "Big study"
	var verbatim []string
	for i := 0; i < 20; i++ {
		verbatim = append(verbatim, fmt.Sprintf("Question number %d about the rota?", i+1))
	}
	st, err := db.CreateStudy(ctx, kv.StudyInput{Partition: p, Brief: kv.Brief{Title: &title, VerbatimQuestions: verbatim}})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := db.SetStudyMode(ctx, p, st.ID, kv.ModeLive); err != nil {
		b.Fatal(err)
	}
	if err := seedCompletedInterviews(ctx, db, st, 10000, verbatim); err != nil {
		b.Fatal(err)
	}
	r := NewRunner(Config{DB: db, Moderator: moderator.NewBuiltin(), Log: zerolog.Nop(), Plugins: mustPlugins(b)})
	defer r.Close(ctx)
	if _, err := r.plugins.Builtin(ctx, plugins.BuiltinRedactor); err != nil {
		b.Fatal(err)
	}
	if _, err := r.plugins.Builtin(ctx, plugins.BuiltinCSV); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j, err := db.CreateExportJob(ctx, kv.ExportInput{Partition: p, JobID: kv.NewV4(), StudyID: st.ID, Format: "csv"}, nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := r.runExport(ctx, j); err != nil {
			b.Fatal(err)
		}
		done, _ := db.FindJobByID(ctx, p, kv.JobExport, j.ID)
		if res, ok := done.ExportResult(); !ok || res.Rows != 10000 {
			b.Fatalf("export %+v", done)
		}
	}
}

// seedCompletedInterviews makes n completed live interviews of the study, each with a
// transcript of one interviewer question and one answer per verbatim question.
func seedCompletedInterviews(ctx context.Context, db *kv.DB, st kv.Study, n int, questions []string) error {
	answer := "We plan it on paper every Friday; call me on 020 7946 0958 if you need more, or mail rota@example.com."
	p := st.Partition()
	for i := 0; i < n; i++ {
		session := fmt.Sprint("seed-", i)
		opened, err := db.OpenLink(ctx, st.LinkToken, session)
		if err != nil {
			return err
		}
		at := opened.Interview.StartedAt
		msgs := make([]kv.Message, 0, 2*len(questions))
		for _, q := range questions {
			msgs = append(msgs, kv.Message{Speaker: kv.SpeakerInterviewer, Text: q, At: at},
				kv.Message{Speaker: kv.SpeakerParticipant, Text: answer, At: at.Add(30 * time.Second)})
			at = at.Add(time.Minute)
		}
		if _, err := db.AppendTurn(ctx, p, opened.Interview.ID, kv.Turn{Session: session, Messages: msgs, Status: kv.InterviewCompleted}); err != nil {
			return err
		}
	}
	return nil
}

// TestChunkedCSVMatchesOneRun: the parallel, chunked CSV is byte-identical to one run
// of the formatter over every row (headers with quoted line breaks included).
func TestChunkedCSVMatchesOneRun(t *testing.T) {
	db := mustOpenDB(t, t.TempDir())
	defer db.Close()
	r := NewRunner(Config{DB: db, Moderator: moderator.NewBuiltin(), Log: zerolog.Nop(), Plugins: mustPlugins(t)})
	defer r.Close(context.Background())
	ctx := context.Background()
	f, err := r.plugins.Builtin(ctx, plugins.BuiltinCSV)
	if err != nil {
		t.Fatal(err)
	}
	records := []json.RawMessage{mustJSON(t, formatRecord{Cells: []string{"id", "a \"quoted\"\nheader", "=b"}})}
	for i := 0; i < 2*exportChunk+17; i++ {
		records = append(records, mustJSON(t, formatRecord{Cells: []string{fmt.Sprint(i), "line one\nline, two", "-x"}}))
	}
	var one, chunked bytes.Buffer
	if err := f.Format(ctx, nil, records, &one); err != nil {
		t.Fatal(err)
	}
	if err := r.format(ctx, f, records, &chunked); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(one.Bytes(), chunked.Bytes()) {
		t.Fatalf("chunked CSV (%d bytes) differs from one run (%d bytes)", chunked.Len(), one.Len())
	}
}

func mustJSON(tb testing.TB, v any) json.RawMessage {
	tb.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return raw
}
