package extract

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
)

const docxHead = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` +
	`<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>`
const docxTail = `</w:body></w:document>`

// docxOf returns a minimal .docx whose body is body.
func docxOf(tb testing.TB, body string) []byte {
	tb.Helper()
	return mustZip(tb, zipPart{name: "word/document.xml", data: docxHead + body + docxTail})
}

// randomWords returns n bytes of pseudo-random lower-case words: text that deflate
// cannot shrink much, so inflating it is no bomb.
func randomWords(n int) string {
	r := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	for b.Len() < n {
		for range 3 + r.IntN(6) {
			b.WriteByte(byte('a' + r.IntN(26)))
		}
		b.WriteByte(' ')
	}
	return b.String()
}

func TestOfficeText(t *testing.T) {
	tests := []struct {
		name   string
		ext    string
		parts  []zipPart
		want   string
		wantOK bool
	}{
		{
			name:   "OKDocxDeepNesting", // 60,000 levels, still under the inflate ratio grace
			ext:    ".docx",
			parts:  []zipPart{{name: "word/document.xml", data: docxHead + strings.Repeat("<w:sdt>", 60000) + `<w:p><w:r><w:t>deep</w:t></w:r></w:p>` + strings.Repeat("</w:sdt>", 60000) + docxTail}},
			want:   "deep",
			wantOK: true,
		},
		{
			name:   "OKDocxMalformedAfterText",
			ext:    ".docx",
			parts:  []zipPart{{name: "word/document.xml", data: docxHead + `<w:p><w:r><w:t>kept</w:t></w:r></w:p><w:p><w:t>&bogus;</w:t>`}},
			want:   "kept",
			wantOK: true,
		},
		{
			name:   "OKDocxCommentAndCDATA",
			ext:    ".docx",
			parts:  []zipPart{{name: "word/document.xml", data: docxHead + `<!-- a <note> --><w:p><w:r><w:t><![CDATA[a < b]]></w:t></w:r></w:p>` + docxTail}},
			want:   "a < b",
			wantOK: true,
		},
		{
			name: "OKPptxMalformedSlideSkipped",
			ext:  ".pptx",
			parts: []zipPart{
				{name: "ppt/slides/slide1.xml", data: `<p:sld xmlns:p="p" xmlns:a="a"><a:p><a:t>one</a:t></a:p><a:t>`},
				{name: "ppt/slides/slide2.xml", data: `<p:sld xmlns:p="p" xmlns:a="a"><a:p><a:t>two</a:t></a:p></p:sld>`},
			},
			want:   "one\n\ntwo",
			wantOK: true,
		},
		{
			name: "OKXlsxSharedStringOutOfRange",
			ext:  ".xlsx",
			parts: []zipPart{
				{name: "xl/sharedStrings.xml", data: `<sst><si><t>only</t></si></sst>`},
				{name: "xl/worksheets/sheet1.xml", data: `<worksheet><sheetData><row><c t="s"><v>0</v></c><c t="s"><v>7</v></c><c t="s"><v>-1</v></c><c t="s"><v>x</v></c><c><v>3</v></c></row></sheetData></worksheet>`},
			},
			want:   "only\t3",
			wantOK: true,
		},
		{
			name:   "ErrDocxWithoutDocument",
			ext:    ".docx",
			parts:  []zipPart{{name: "word/other.xml", data: "<w:t>hidden</w:t>"}},
			wantOK: false,
		},
		{
			name:   "ErrDocxEmptyDocument",
			ext:    ".docx",
			parts:  []zipPart{{name: "word/document.xml", data: docxHead + `<w:p/><w:p><w:r><w:t>   </w:t></w:r></w:p>` + docxTail}},
			wantOK: false,
		},
		{
			name:   "ErrDocxNotXML",
			ext:    ".docx",
			parts:  []zipPart{{name: "word/document.xml", data: "\x00\x01\x02 binary"}},
			wantOK: false,
		},
		{
			name:   "ErrDocxDoctype",
			ext:    ".docx",
			parts:  []zipPart{{name: "word/document.xml", data: `<?xml version="1.0"?><!DOCTYPE w [<!ENTITY a "aaaa">]><w:document><w:p><w:t>&a;</w:t></w:p></w:document>`}},
			wantOK: false,
		},
		{
			name:   "ErrPptxWithoutSlides",
			ext:    ".pptx",
			parts:  []zipPart{{name: "ppt/presentation.xml", data: "<p/>"}},
			wantOK: false,
		},
		{
			name:   "ErrXlsxWithoutSheets",
			ext:    ".xlsx",
			parts:  []zipPart{{name: "xl/sharedStrings.xml", data: "<sst><si><t>orphan</t></si></sst>"}},
			wantOK: false,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := mustExtract(t, mustZip(t, tt.parts...), tt.ext, DefaultLimits())
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("extracted %.200q, %v; want %q, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestOfficeNotAZip(t *testing.T) {
	tests := map[string][]byte{
		"Empty":     nil,
		"Garbage":   []byte("PK\x03\x04 this is not really a zip"),
		"EndRecord": append(bytes.Repeat([]byte{0}, 10), 'P', 'K', 5, 6, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0),
	}
	docx := docxOf(t, `<w:p><w:r><w:t>hello</w:t></w:r></w:p>`)
	tests["Truncated"] = docx[:len(docx)/2]
	for name, data := range tests {
		t.Run("Err"+name, func(t *testing.T) {
			if got, ok := mustExtract(t, data, ".docx", DefaultLimits()); ok {
				t.Errorf("extracted %q; want nothing", got)
			}
		})
	}
}

func TestOfficeBombs(t *testing.T) {
	// A real bomb: 300 MiB of valid, empty paragraphs from well under 1 MiB.
	paragraphs := mustBomb(t, docxHead, "<w:p/>", 300, docxTail)
	if len(paragraphs.raw) > 1<<20 || paragraphs.size < 300_000_000 {
		t.Fatalf("bomb inflates %d bytes to %d; want a real bomb", len(paragraphs.raw), paragraphs.size)
	}
	// Text that inflates to several times a small MaxDecompressed, at an ordinary ratio.
	words := docxHead + `<w:p><w:r><w:t>` + randomWords(400<<10) + `</w:t></w:r></w:p>` + docxTail
	small := DefaultLimits()
	small.MaxDecompressed = 64 << 10
	// One text node longer than the XML guard allows.
	longRun := docxHead + `<w:p><w:r><w:t>` + strings.Repeat("abcdefghijklmnopqrstuvwxyz"[:13], (maxXMLRun/13)+1000) + `</w:t></w:r></w:p>` + docxTail

	tests := []struct {
		name string
		zip  []byte
		lim  Limits
	}{
		{"ErrRatio", mustZip(t, zipPart{name: "word/document.xml", raw: paragraphs.raw, declared: uint64(paragraphs.size), crc: paragraphs.crc}), DefaultLimits()},
		{"ErrRatioDeclaredSizeLies", mustZip(t, zipPart{name: "word/document.xml", raw: paragraphs.raw, declared: 100, crc: paragraphs.crc}), DefaultLimits()},
		{"ErrMaxDecompressed", mustZip(t, zipPart{name: "word/document.xml", data: words}), small},
		{"ErrMaxDecompressedOverParts", mustZip(t,
			zipPart{name: "ppt/slides/slide1.xml", data: `<p:sld><a:t>` + randomWords(40<<10) + `</a:t></p:sld>`},
			zipPart{name: "ppt/slides/slide2.xml", data: `<p:sld><a:t>` + randomWords(40<<10) + `</a:t></p:sld>`},
		), small},
		{"ErrLongXMLRun", mustZip(t, zipPart{name: "word/document.xml", data: longRun}), Limits{MaxText: 4 << 20}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ext := ".docx"
			if strings.Contains(tt.name, "Parts") {
				ext = ".pptx"
			}
			if got, ok := mustExtract(t, tt.zip, ext, tt.lim); ok {
				t.Errorf("extracted %.80q; want the bomb refused", got)
			}
		})
	}
	t.Run("OKSameTextUnderTheLimit", func(t *testing.T) {
		if _, ok := mustExtract(t, mustZip(t, zipPart{name: "word/document.xml", data: words}), ".docx", DefaultLimits()); !ok {
			t.Error("extracted nothing; want the text")
		}
	})
}

func TestMustBombInflatesAsBuilt(t *testing.T) {
	b := mustBomb(t, "<head>", "<w:p/>", 3, "<tail>")
	r := flate.NewReader(bytes.NewReader(b.raw))
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	chunk := strings.Repeat("<w:p/>", (1<<20)/6)
	want := "<head>" + strings.Repeat(chunk, 3) + "<tail>"
	if int64(len(got)) != b.size || string(got) != want {
		t.Errorf("bomb inflates to %d bytes, want %d as built", len(got), len(want))
	}
}

func TestOfficeEntryCount(t *testing.T) {
	entries := func(n int) []byte {
		parts := []zipPart{{name: "word/document.xml", data: docxHead + `<w:p><w:r><w:t>counted</w:t></w:r></w:p>` + docxTail}}
		for i := 1; i < n; i++ {
			parts = append(parts, zipPart{name: fmt.Sprintf("word/media/filler%d.bin", i)})
		}
		return mustZip(t, parts...)
	}
	lim := DefaultLimits()
	t.Run("OKAtLimit", func(t *testing.T) {
		if got, ok := mustExtract(t, entries(lim.MaxEntries), ".docx", lim); !ok || got != "counted" {
			t.Errorf("extracted %q, %v; want the text", got, ok)
		}
	})
	t.Run("ErrOverLimit", func(t *testing.T) {
		if got, ok := mustExtract(t, entries(lim.MaxEntries+1), ".docx", lim); ok {
			t.Errorf("extracted %q; want the archive refused", got)
		}
	})
}

func TestCountZipEntries(t *testing.T) {
	small := mustZip(t, zipPart{name: "a"}, zipPart{name: "b"}, zipPart{name: "c"})
	if n, err := countZipEntries(bytes.NewReader(small), int64(len(small)), 10); err != nil || n != 3 {
		t.Errorf("countZipEntries(3 entries) = %d, %v; want 3", n, err)
	}
	if n, _ := countZipEntries(bytes.NewReader(small), int64(len(small)), 2); n <= 2 {
		t.Errorf("countZipEntries(3 entries, max 2) = %d; want more than 2", n)
	}

	// A zip64 directory of 65,538 entries whose end record claims 2: archive/zip
	// compares counts modulo 65,536 only, so it would build all of them.
	var parts []zipPart
	for i := range 65538 {
		parts = append(parts, zipPart{name: fmt.Sprint(i)})
	}
	big := mustZip(t, parts...)
	lying := patchZip64Count(t, big, 2)
	if zr, err := zip.NewReader(bytes.NewReader(lying), int64(len(lying))); err != nil || len(zr.File) != 65538 {
		t.Fatalf("archive/zip read the lying zip as %v entries, err %v; the test needs it to read them all", len(zr.File), err)
	}
	n, err := countZipEntries(bytes.NewReader(lying), int64(len(lying)), 2000)
	if err != nil || n <= 2000 {
		t.Errorf("countZipEntries(lying zip) = %d, %v; want more than 2000", n, err)
	}
}

// patchZip64Count rewrites the entry counts of a zip64 archive's end records.
func patchZip64Count(tb testing.TB, data []byte, count uint64) []byte {
	tb.Helper()
	out := bytes.Clone(data)
	i := bytes.LastIndex(out, []byte{'P', 'K', 6, 6})
	if i < 0 {
		tb.Fatal("no zip64 end record")
	}
	binary.LittleEndian.PutUint64(out[i+24:], count)
	binary.LittleEndian.PutUint64(out[i+32:], count)
	return out
}

func TestXMLGuard(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		wantErr bool
	}{
		{"OKMarkup", `<a b="c">text</a>`, false},
		{"OKComment", `<!-- <<< -- >>> --><a/>`, false},
		{"OKCDATA", `<a><![CDATA[ <x> ]] ]]></a>`, false},
		{"OKProcessingInstruction", `<?xml version="1.0"?><?pi <x> ?><a/>`, false},
		{"ErrDoctype", `<!DOCTYPE a><a/>`, true},
		{"OKTruncatedOpener", `<![CDAT`, false},
		{"ErrBadCDATAOpener", `<![CDOTA[x]]>`, true},
		{"ErrBadCommentOpener", `<!-x-->`, true},
		{"ErrLongText", "<a>" + strings.Repeat("x", maxXMLRun+1) + "</a>", true},
		{"ErrLongComment", "<!--" + strings.Repeat("<", maxXMLRun+1) + "-->", true},
		{"ErrLongCDATA", "<![CDATA[" + strings.Repeat("<a>", maxXMLRun/3+1) + "]]>", true},
		{"OKAnglesInTagLeftToDecoder", "<a " + strings.Repeat(`b="<>" `, maxXMLRun/7+1) + "/>", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Read in small pieces so openers and closers straddle reads.
			g := &xmlGuard{r: &oneByteReader{r: strings.NewReader(tt.in)}}
			_, err := io.Copy(io.Discard, g)
			if (err != nil) != tt.wantErr {
				t.Errorf("guard error = %v, want error %v", err, tt.wantErr)
			}
		})
	}
}

// oneByteReader returns at most three bytes a read.
type oneByteReader struct{ r io.Reader }

func (o *oneByteReader) Read(p []byte) (int, error) { return o.r.Read(p[:min(len(p), 3)]) }

func TestOfficeCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	data := docxOf(t, `<w:p><w:r><w:t>never read</w:t></w:r></w:p>`)
	if got, ok := officeText(ctx, bytes.NewReader(data), int64(len(data)), ".docx", DefaultLimits()); ok {
		t.Errorf("extracted %q after cancel; want nothing", got)
	}
}
