package extract

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestAllowed(t *testing.T) {
	tests := []struct {
		name    string
		wantExt string
		wantOK  bool
	}{
		{"report.pdf", ".pdf", true},
		{"Report.PDF", ".pdf", true},
		{"notes.Docx", ".docx", true},
		{"data.xlsx", ".xlsx", true},
		{"deck.pptx", ".pptx", true},
		{"export.CSV", ".csv", true},
		{"readme.txt", ".txt", true},
		{"README.md", ".md", true},
		{"archive.tar.gz", "", false},
		{"report.pdf.exe", "", false},
		{"old.doc", "", false},
		{"noextension", "", false},
		{"", "", false},
		{"trailing.pdf.", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ext, ok := Allowed(tt.name)
			if ext != tt.wantExt || ok != tt.wantOK {
				t.Errorf("Allowed(%q) = %q, %v; want %q, %v", tt.name, ext, ok, tt.wantExt, tt.wantOK)
			}
		})
	}
}

func TestMaxSize(t *testing.T) {
	tests := []struct {
		ext  string
		want int64
	}{
		{".txt", 10 * 1024 * 1024},
		{".md", 10 * 1024 * 1024},
		{".csv", 10 * 1024 * 1024},
		{".CSV", 10 * 1024 * 1024},
		{".pdf", 50 * 1024 * 1024},
		{".docx", 50 * 1024 * 1024},
		{".xlsx", 50 * 1024 * 1024},
		{".pptx", 50 * 1024 * 1024},
		{".exe", 0},
		{"", 0},
	}
	for _, tt := range tests {
		if got := MaxSize(tt.ext); got != tt.want {
			t.Errorf("MaxSize(%q) = %d, want %d", tt.ext, got, tt.want)
		}
	}
}

// fixtureText is the text each committed fixture must yield (testdata/gen makes them).
var fixtureText = map[string]string{
	"sample.txt": "Research notes\n\nThe participant said:\t“it’s fine”.\nÜnïcödé line",
	"sample.md":  "# Findings\n\n- **Speed** matters\n- Trust matters\n\nEnd.",
	"sample.csv": "name,score,comment\nAda,42,\"liked it, a lot\"\nGrace,37,\"multi\nline\"",
	"sample.docx": "Onboarding study\nParticipants preferred the blue prototype.\n" +
		"Goal\tlearn why & when\nCafé “naïve” résumé — 日本語\n\nText box note",
	"sample.pptx": "Welcome\nFirst point\nLine one\nLine two\n\nSecond slide\n\nTenth slide",
	"sample.xlsx": "Name\tScore\tNotes\nAda Lovelace\t42.5\tTRUE\n東京\t42.5\tdone\n\nSecond sheet",
	"sample.pdf": "Interview guide\nParticipants liked it\nEscapes: (paren) back\\slash café “quoted”\n" +
		"Next line via quote\nDouble quote operator\nHex string\nSame line continues\n" +
		"Page two text\nEncoded with ASCII85",
}

func TestFileFixtures(t *testing.T) {
	for name, want := range fixtureText {
		t.Run(name, func(t *testing.T) {
			ext, ok := Allowed(name)
			if !ok {
				t.Fatalf("fixture %s has no accepted extension", name)
			}
			text, ok, err := File(context.Background(), filepath.Join("testdata", name), ext, DefaultLimits())
			if err != nil || !ok {
				t.Fatalf("File = ok %v, err %v; want text", ok, err)
			}
			if text != want {
				t.Errorf("text:\n%q\nwant:\n%q", text, want)
			}
		})
	}
}

func TestFileUpperCaseExtension(t *testing.T) {
	text, ok, err := File(context.Background(), filepath.Join("testdata", "sample.docx"), "DOCX", Limits{})
	if err != nil || !ok || text != fixtureText["sample.docx"] {
		t.Errorf("File(DOCX) = %q, %v, %v; want the docx text", text, ok, err)
	}
}

func TestFileUnknownExtension(t *testing.T) {
	path := mustWriteFile(t, "tool.exe", []byte("plain words that would read as text"))
	text, ok, err := File(context.Background(), path, ".exe", DefaultLimits())
	if ok || text != "" || err != nil {
		t.Errorf("File(.exe) = %q, %v, %v; want nothing and no error", text, ok, err)
	}
}

func TestFileMissing(t *testing.T) {
	_, ok, err := File(context.Background(), filepath.Join(t.TempDir(), "gone.txt"), ".txt", DefaultLimits())
	if ok || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("File(missing) = ok %v, err %v; want fs.ErrNotExist", ok, err)
	}
}

func TestFileWrongContentForExtension(t *testing.T) {
	pdf, err := os.ReadFile(filepath.Join("testdata", "sample.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	docx, err := os.ReadFile(filepath.Join("testdata", "sample.docx"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		data []byte
		ext  string
	}{
		{"PDFAsDocx", pdf, ".docx"},
		{"DocxAsPDF", docx, ".pdf"},
		{"DocxAsText", docx, ".txt"},
		{"DocxAsXlsx", docx, ".xlsx"},
		{"DocxAsPptx", docx, ".pptx"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if text, ok := mustExtract(t, tt.data, tt.ext, DefaultLimits()); ok {
				t.Errorf("extracted %q; want nothing", text)
			}
		})
	}
}

func TestFileCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	text, ok, err := File(ctx, filepath.Join("testdata", "sample.pdf"), ".pdf", DefaultLimits())
	if ok || err != nil {
		t.Errorf("File(cancelled) = %q, %v, %v; want nothing", text, ok, err)
	}
}

func TestFileMaxTextCapsOutput(t *testing.T) {
	for name := range fixtureText {
		t.Run(name, func(t *testing.T) {
			ext, _ := Allowed(name)
			lim := DefaultLimits()
			lim.MaxText = 12
			text, ok, err := File(context.Background(), filepath.Join("testdata", name), ext, lim)
			if err != nil || !ok {
				t.Fatalf("File = ok %v, err %v; want the first bytes", ok, err)
			}
			if len(text) > lim.MaxText || !strings.HasPrefix(fixtureText[name], text) || len(text) < lim.MaxText-4 {
				t.Errorf("text %q (%d bytes); want a prefix of at most %d bytes, cut at a rune", text, len(text), lim.MaxText)
			}
		})
	}
}

func TestIsolate(t *testing.T) {
	t.Run("ResultReturned", func(t *testing.T) {
		text, ok := isolate(context.Background(), time.Hour, func(context.Context) (string, bool) { return "x", true })
		if text != "x" || !ok {
			t.Errorf("isolate = %q, %v; want x, true", text, ok)
		}
	})
	t.Run("PanicRecovered", func(t *testing.T) {
		text, ok := isolate(context.Background(), time.Hour, func(context.Context) (string, bool) {
			var m map[string]int
			m["boom"]++ // a nil map write panics
			return "unreachable", true
		})
		if text != "" || ok {
			t.Errorf("isolate = %q, %v; want nothing", text, ok)
		}
	})
	t.Run("DeadlineAbandonsWork", func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		text, ok := isolate(context.Background(), 10*time.Millisecond, func(context.Context) (string, bool) {
			<-release // work that ignores its context
			return "late", true
		})
		if text != "" || ok {
			t.Errorf("isolate = %q, %v; want nothing", text, ok)
		}
	})
}

func TestLimitsOrDefault(t *testing.T) {
	got := Limits{MaxText: 7}.orDefault()
	want := DefaultLimits()
	want.MaxText = 7
	if got != want {
		t.Errorf("orDefault = %+v, want %+v", got, want)
	}
}
