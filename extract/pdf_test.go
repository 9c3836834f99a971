package extract

import (
	"bytes"
	"compress/zlib"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pdfWith returns a PDF file holding one stream per content, each with the given
// dictionary entries (a /Length is added), and a trailer.
func pdfWith(dict string, contents ...[]byte) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	for i, c := range contents {
		fmt.Fprintf(&b, "%d 0 obj\n<< /Length %d %s >>\nstream\n", i+1, len(c), dict)
		b.Write(c)
		b.WriteString("\nendstream\nendobj\n")
	}
	b.WriteString("trailer\n<< /Root 1 0 R >>\n%%EOF\n")
	return b.Bytes()
}

func zlibOf(s string) []byte {
	var b bytes.Buffer
	w := zlib.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.Bytes()
}

func TestPDFText(t *testing.T) {
	tests := []struct {
		name   string
		data   []byte
		want   string
		wantOK bool
	}{
		{"OKUncompressed", pdfWith("", []byte("BT /F1 12 Tf 72 700 Td (Plain) Tj ET")), "Plain", true},
		{"OKFlate", pdfWith("/Filter /FlateDecode", zlibOf("BT (Squeezed) Tj ET")), "Squeezed", true},
		{"OKFlateArray", pdfWith("/Filter [/FlateDecode]", zlibOf("BT (In an array) Tj ET")), "In an array", true},
		{"OKASCIIHex", pdfWith("/Filter /ASCIIHexDecode", []byte("42 54 2028 6869 2920 546a 2045 54 >")), "hi", true},
		{"OKRawDeflate", pdfWith("/Filter /FlateDecode", zlibOf("BT (No header) Tj ET")[2:]), "No header", true},
		{"OKTwoStreams", pdfWith("", []byte("BT 0 700 Td (one) Tj ET"), []byte("BT 0 600 Td (two) Tj ET")), "one\ntwo", true},
		{"OKInlineImageSkipped", pdfWith("", []byte("BI /W 4 /H 1 /BPC 8 /CS /G ID \x00(\xff) Tj BT (junk EI\n BT (After image) Tj ET")), "After image", true},
		{"OKOctalAndLineContinuation", pdfWith("", []byte("BT (a\\101\\1010b\\\nc\\q) Tj ET")), "aAA0bcq", true},
		{"OKNestedParentheses", pdfWith("", []byte("BT (f(x) = (y)) Tj ET")), "f(x) = (y)", true},
		{"OKUTF16String", pdfWith("", []byte("BT <FEFF00E9D83DDE00> Tj ET")), "é😀", true},
		{"OKComments", pdfWith("", []byte("% BT (comment) Tj ET\nBT (shown) Tj ET")), "shown", true},
		{"OKIndirectLength", []byte("%PDF-1.4\n1 0 obj << /Length 2 0 R >>\nstream\nBT (Far) Tj ET\nendstream\nendobj\n"), "Far", true},
		{"OKNoEndstream", []byte("%PDF-1.4\n1 0 obj << /Length 99999999999999999999 >>\nstream\nBT (Cut) Tj ET"), "Cut", true},
		{"ErrEmpty", nil, "", false},
		{"ErrHeaderOnly", []byte("%PDF-1.7\n"), "", false},
		{"ErrNoHeader", []byte("BT (no header) Tj ET stream\nBT (x) Tj ET\nendstream"), "", false},
		{"ErrTruncatedHeader", []byte("%PD"), "", false},
		{"ErrEncrypted", append(pdfWith("", []byte("BT (secret) Tj ET")), "trailer << /Encrypt 5 0 R >>"...), "", false},
		{"ErrImageSkipped", pdfWith("/Type /XObject /Subtype /Image", []byte("BT (pixels) Tj ET")), "", false},
		{"ErrFontProgramSkipped", pdfWith("/Length1 20", []byte("BT (glyphs) Tj ET")), "", false},
		{"ErrObjectStreamSkipped", pdfWith("/Type /ObjStm /N 1 /First 4", []byte("BT (objects) Tj ET")), "", false},
		{"ErrTextOutsideBT", pdfWith("", []byte("(loose) Tj")), "", false},
		{"ErrUnsupportedFilter", pdfWith("/Filter /LZWDecode", []byte("BT (lzw) Tj ET")), "", false},
		{"ErrFlateGarbage", pdfWith("/Filter /FlateDecode", []byte("\x78\x9c not deflate data at all")), "", false},
		{"ErrCompositeFontCodes", pdfWith("", []byte("BT <002B0048004F004F0052> Tj ET")), "", false},
		{"ErrHugeLength", []byte("%PDF-1.4\n1 0 obj << /Length 9223372036854775807 >>\nstream\n\x00\x01"), "", false},
		{"ErrNegativeLength", pdfWith("/Length -5", []byte("\x00\x02\x03")), "", false},
		{"ErrEndlessNestedArrays", pdfWith("", []byte("BT "+strings.Repeat("[", 1<<20)+" (x) Tj ET")), "", false},
		{"ErrEndlessNestedDicts", pdfWith("", []byte("BT "+strings.Repeat("<<", 1<<19)+" (x) ET")), "", false},
		{"ErrUnterminatedString", pdfWith("", []byte("BT ("+strings.Repeat("(", 1<<20)+" Tj ET")), "", false},
		{"ErrUnterminatedHex", pdfWith("", []byte("BT <"+strings.Repeat("41", 1<<19)+" Tj ET")), "", false},
		{"ErrManyOperands", pdfWith("", []byte("BT "+strings.Repeat("(x) ", 1<<18)+"ET")), "", false},
		{"ErrStreamKeywordsOnly", []byte("%PDF-1.4\n" + strings.Repeat("stream\nendstream\n", 1<<16)), "", false},
		{"ErrGarbage", append([]byte("%PDF-1.4\n"), randomBytes(1<<20)...), "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := mustExtract(t, tt.data, ".pdf", DefaultLimits())
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("extracted %.200q, %v; want %q, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func randomBytes(n int) []byte {
	r := rand.New(rand.NewPCG(3, 4))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func TestPDFTruncatedYieldsAPrefix(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "sample.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	full := fixtureText["sample.pdf"]
	some := false
	for cut := 0; cut < len(data); cut += 23 {
		got, ok := pdfText(context.Background(), data[:cut], DefaultLimits())
		if ok && !strings.HasPrefix(full, got) {
			t.Errorf("cut at %d: extracted %q; want a prefix of the full text", cut, got)
		}
		if cut < 200 && ok {
			t.Errorf("cut at %d, before any content: extracted %q", cut, got)
		}
		some = some || ok
	}
	if !some {
		t.Error("no truncation kept any text; want the streams before the cut read")
	}
}

func TestPDFBombs(t *testing.T) {
	// 300 MiB of spaces inside a text object, behind a zlib header.
	spaces := mustBomb(t, "BT (", " ", 300, ") Tj ET")
	bomb := append([]byte{0x78, 0xda}, spaces.raw...)
	small := DefaultLimits()
	small.MaxDecompressed = 64 << 10
	words := zlibOf("BT (" + randomWords(400<<10) + ") Tj ET")
	tests := []struct {
		name string
		data []byte
		lim  Limits
	}{
		{"ErrRatio", pdfWith("/Filter /FlateDecode", bomb), DefaultLimits()},
		{"ErrRatioInFormXObject", pdfWith("/Type /XObject /Subtype /Form /Filter /FlateDecode", bomb), DefaultLimits()},
		{"ErrMaxDecompressed", pdfWith("/Filter /FlateDecode", words), small},
		{"ErrMaxDecompressedOverStreams", pdfWith("/Filter /FlateDecode", zlibOf(randomWords(40<<10)), zlibOf(randomWords(40<<10))), small},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, ok := mustExtract(t, tt.data, ".pdf", tt.lim); ok {
				t.Errorf("extracted %.80q; want the bomb refused", got)
			}
		})
	}
	t.Run("OKSameTextUnderTheLimit", func(t *testing.T) {
		if _, ok := mustExtract(t, pdfWith("/Filter /FlateDecode", words), ".pdf", DefaultLimits()); !ok {
			t.Error("extracted nothing; want the text")
		}
	})
}

func TestPDFCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	data := pdfWith("", []byte("BT (never) Tj ET"))
	if got, ok := pdfText(ctx, data, DefaultLimits()); ok {
		t.Errorf("extracted %q after cancel; want nothing", got)
	}
}

func TestParseStreamDict(t *testing.T) {
	tests := []struct {
		name   string
		window string
		want   streamDict
	}{
		{"Direct", "1 0 obj << /Length 42 /Filter /FlateDecode >>", streamDict{length: 42, filters: []string{"FlateDecode"}}},
		{"Reference", "1 0 obj << /Length 7 0 R /Filter [/ASCII85Decode /FlateDecode] >>", streamDict{length: -1, filters: []string{"ASCII85Decode", "FlateDecode"}}},
		{"LengthBeforeName", "<< /Length 12 /Filter /FlateDecode >>", streamDict{length: 12, filters: []string{"FlateDecode"}}},
		{"PreviousObjectIgnored", "<< /Subtype /Image >> endobj 2 0 obj << /Length 3 >>", streamDict{length: 3}},
		{"Image", "<< /Type /XObject /Subtype /Image /Length 3 >>", streamDict{length: 3, skip: true}},
		{"XRef", "<< /Type /XRef /W [1 2 1] /Length 3 >>", streamDict{length: 3, skip: true}},
		{"Predictor", "<< /DecodeParms << /Predictor 12 /Columns 4 >> /Length 3 >>", streamDict{length: 3, skip: true}},
		{"FractionalLength", "<< /Length 3.5 >>", streamDict{length: -1}},
		{"HugeLength", "<< /Length 1e300 >>", streamDict{length: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := parseStreamDict([]byte(tt.window))
			if got.length != tt.want.length || got.skip != tt.want.skip || strings.Join(got.filters, ",") != strings.Join(tt.want.filters, ",") {
				t.Errorf("parseStreamDict = %+v, want %+v", got, tt.want)
			}
		})
	}
}
