package extract

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// fuzzLimits keeps each fuzz input cheap, so the fuzzer explores instead of inflating.
var fuzzLimits = Limits{MaxEntries: 64, MaxDecompressed: 1 << 20, MaxText: 4096, Timeout: time.Second}

// checkOutput fails unless text is what an extractor may return: valid UTF-8 within
// the cap, and empty whenever ok is false.
func checkOutput(t *testing.T, text string, ok bool, lim Limits) {
	t.Helper()
	if len(text) > lim.MaxText {
		t.Fatalf("text is %d bytes, over MaxText %d", len(text), lim.MaxText)
	}
	if !utf8.ValidString(text) {
		t.Fatalf("text is not valid UTF-8: %q", text)
	}
	if !ok && text != "" {
		t.Fatalf("ok is false but text is %q", text)
	}
	if ok && strings.TrimSpace(text) != text {
		t.Fatalf("text is not trimmed: %q", text)
	}
}

func mustReadFixture(f *testing.F, name string) []byte {
	f.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		f.Fatal(err)
	}
	return data
}

// FuzzPDF runs the PDF extractor without File's recover, so any panic fails.
func FuzzPDF(f *testing.F) {
	sample := mustReadFixture(f, "sample.pdf")
	f.Add(sample)
	f.Add(sample[:len(sample)/2])
	f.Add(pdfWith("/Filter /FlateDecode", zlibOf("BT [(a) -300 (b)] TJ 0 -12 Td (c) ' 1 2 (d) \" ET")))
	f.Add(pdfWith("/Filter [/ASCII85Decode /FlateDecode]", []byte("Gar8O~>")))
	f.Add(pdfWith("/Filter /ASCIIHexDecode", []byte("4254 2028 6869 2920 546a 2045 54>")))
	f.Add(pdfWith("", []byte("BT <FEFFD83D> Tj BI ID \x00 EI (x) Tj [[[ ET")))
	f.Add([]byte("%PDF-1.4\n1 0 obj << /Length 5 0 R >>\nstream\r\nBT (\\"))
	f.Fuzz(func(t *testing.T, data []byte) {
		text, ok := pdfText(context.Background(), data, fuzzLimits)
		checkOutput(t, text, ok, fuzzLimits)
	})
}

// FuzzOfficeZip runs the office extractors on arbitrary archives, without File's
// recover, so any panic fails.
func FuzzOfficeZip(f *testing.F) {
	for _, name := range []string{"sample.docx", "sample.pptx", "sample.xlsx"} {
		f.Add(mustReadFixture(f, name))
	}
	f.Add(mustZip(f, zipPart{name: "word/document.xml", data: docxHead + `<w:p><w:r><w:t>x</w:t><w:tab/><w:br/></w:r></w:p>` + docxTail}))
	f.Add(mustZip(f,
		zipPart{name: "xl/sharedStrings.xml", data: `<sst><si><t>a</t></si><si><r><t>b</t></r><rPh><t>c</t></rPh></si></sst>`},
		zipPart{name: "xl/worksheets/sheet1.xml", data: `<worksheet><sheetData><row><c t="s"><v>1</v></c><c t="inlineStr"><is><t>d</t></is></c><c t="b"><v>0</v></c></row></sheetData></worksheet>`},
	))
	f.Add(mustZip(f, zipPart{name: "ppt/slides/slide1.xml", data: `<p:sld><a:p><a:t>s</a:t><a:br/></a:p><mc:Fallback><a:t>no</a:t></mc:Fallback></p:sld>`}))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, ext := range []string{".docx", ".pptx", ".xlsx"} {
			text, ok := officeText(context.Background(), bytes.NewReader(data), int64(len(data)), ext, fuzzLimits)
			checkOutput(t, text, ok, fuzzLimits)
		}
	})
}

// FuzzPlainText checks the text file reader on arbitrary bytes.
func FuzzPlainText(f *testing.F) {
	f.Add(mustReadFixture(f, "sample.txt"))
	f.Add(mustReadFixture(f, "sample.csv"))
	f.Add([]byte("\xff\xfeh\x00i\x00\x00\xd8"))
	f.Add([]byte("\xfe\xff\x00h\xdc\x00"))
	f.Add([]byte("a\r\n\r\r\n\t b\u2028\xc3"))
	f.Fuzz(func(t *testing.T, data []byte) {
		text, ok := plainText(context.Background(), bytes.NewReader(data), int64(len(data)), fuzzLimits)
		checkOutput(t, text, ok, fuzzLimits)
		if ok && bytes.IndexByte(data, 0) >= 0 && !bytes.HasPrefix(data, []byte{0xff, 0xfe}) && !bytes.HasPrefix(data, []byte{0xfe, 0xff}) && len(data) <= fuzzLimits.MaxText {
			t.Fatalf("a NUL byte read as text: %q", text)
		}
	})
}
