//go:build ignore

// Command gen writes the sample fixtures of package extract's tests:
//
//	cd extract/testdata && go run ./gen
//
// The committed files are its output; the tests pin the text each one yields.
package main

import (
	"archive/zip"
	"bytes"
	"compress/zlib"
	"encoding/ascii85"
	"fmt"
	"log"
	"os"
	"time"
)

func main() {
	files := map[string][]byte{
		"sample.txt":  []byte("Research notes\r\n\r\n\r\nThe  participant   said:\t“it’s fine”.\r\nÜnïcödé line  \n"),
		"sample.md":   []byte("# Findings\n\n- **Speed** matters\n- Trust    matters\n\n\n\nEnd.\n"),
		"sample.csv":  []byte("name,score,comment\r\nAda,42,\"liked it, a lot\"\r\nGrace,37,\"multi\r\nline\"\r\n"),
		"sample.docx": zipOf(docxParts),
		"sample.pptx": zipOf(pptxParts),
		"sample.xlsx": zipOf(xlsxParts),
		"sample.pdf":  samplePDF(),
	}
	for name, data := range files {
		if err := os.WriteFile(name, data, 0o644); err != nil {
			log.Fatal(err)
		}
	}
}

// zipOf builds a zip of the given parts, in order, with a fixed time so the output
// does not change between runs.
func zipOf(parts [][2]string) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, p := range parts {
		w, err := zw.CreateHeader(&zip.FileHeader{
			Name:     p[0],
			Method:   zip.Deflate,
			Modified: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
		})
		if err != nil {
			log.Fatal(err)
		}
		w.Write([]byte(p[1]))
	}
	if err := zw.Close(); err != nil {
		log.Fatal(err)
	}
	return buf.Bytes()
}

const xmlHead = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n"

var docxParts = [][2]string{
	{"[Content_Types].xml", xmlHead + `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`},
	{"_rels/.rels", xmlHead + `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`},
	{"word/document.xml", xmlHead + `<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape" xmlns:v="urn:schemas-microsoft-com:vml" mc:Ignorable="wps"><w:body>` +
		`<w:p><w:pPr><w:pStyle w:val="Title"/><w:tabs><w:tab w:val="left" w:pos="720"/></w:tabs></w:pPr><w:r><w:t>Onboarding study</w:t></w:r></w:p>` +
		`<w:p><w:r><w:t xml:space="preserve">Participants </w:t></w:r><w:r><w:rPr><w:b/></w:rPr><w:t>preferred</w:t></w:r><w:r><w:t xml:space="preserve"> the blue prototype.</w:t></w:r></w:p>` +
		`<w:p><w:r><w:t>Goal</w:t></w:r><w:r><w:tab/></w:r><w:r><w:t>learn why &amp; when</w:t></w:r><w:r><w:br/></w:r><w:r><w:t>Café “naïve” résumé — 日本語</w:t></w:r></w:p>` +
		`<w:p/><w:p/>` +
		`<w:p><w:del w:id="1" w:author="A"><w:r><w:delText>removed words</w:delText></w:r></w:del><w:r><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing><wps:txbx><w:txbxContent><w:p><w:r><w:t>Text box note</w:t></w:r></w:p></w:txbxContent></wps:txbx></w:drawing></mc:Choice><mc:Fallback><w:pict><v:textbox><w:txbxContent><w:p><w:r><w:t>Text box note</w:t></w:r></w:p></w:txbxContent></v:textbox></w:pict></mc:Fallback></mc:AlternateContent></w:r></w:p>` +
		`<w:sectPr/></w:body></w:document>`},
}

const pptNS = `xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"`

func slide(body string) string {
	return xmlHead + `<p:sld ` + pptNS + `><p:cSld><p:spTree>` + body + `</p:spTree></p:cSld></p:sld>`
}

func shape(paragraphs string) string {
	return `<p:sp><p:txBody><a:bodyPr/><a:lstStyle/>` + paragraphs + `</p:txBody></p:sp>`
}

var pptxParts = [][2]string{
	{"[Content_Types].xml", xmlHead + `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/></Types>`},
	{"ppt/presentation.xml", xmlHead + `<p:presentation ` + pptNS + `/>`},
	// Written out of order: slides are read by number, not by position or name.
	{"ppt/slides/slide10.xml", slide(shape(`<a:p><a:r><a:t>Tenth slide</a:t></a:r></a:p>`))},
	{"ppt/slides/slide2.xml", slide(shape(`<a:p><a:r><a:t>Second slide</a:t></a:r></a:p>`))},
	{"ppt/slides/slide1.xml", slide(shape(`<a:p><a:r><a:t>Welcome</a:t></a:r></a:p>`) +
		shape(`<a:p><a:r><a:t>First point</a:t></a:r></a:p><a:p><a:r><a:t>Line one</a:t></a:r><a:br/><a:r><a:t>Line two</a:t></a:r></a:p>`))},
	{"ppt/slides/_rels/slide1.xml.rels", xmlHead + `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"/>`},
	{"ppt/notesSlides/notesSlide1.xml", slide(shape(`<a:p><a:r><a:t>Speaker notes</a:t></a:r></a:p>`))},
	{"ppt/slideLayouts/slideLayout1.xml", slide(shape(`<a:p><a:r><a:t>Click to edit Master title style</a:t></a:r></a:p>`))},
}

const sheetNS = `xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"`

var xlsxParts = [][2]string{
	{"[Content_Types].xml", xmlHead + `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/></Types>`},
	{"xl/workbook.xml", xmlHead + `<workbook ` + sheetNS + `><sheets><sheet name="Results" sheetId="1"/><sheet name="Other" sheetId="2"/></sheets></workbook>`},
	{"xl/sharedStrings.xml", xmlHead + `<sst ` + sheetNS + ` count="4" uniqueCount="4">` +
		`<si><t>Name</t></si><si><t>Score</t></si>` +
		`<si><r><t xml:space="preserve">Ada </t></r><r><rPr><b/></rPr><t>Lovelace</t></r></si>` +
		`<si><t>東京</t><rPh sb="0" eb="2"><t>トウキョウ</t></rPh></si></sst>`},
	{"xl/worksheets/sheet2.xml", xmlHead + `<worksheet ` + sheetNS + `><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>Second sheet</t></is></c></row></sheetData></worksheet>`},
	{"xl/worksheets/sheet1.xml", xmlHead + `<worksheet ` + sheetNS + `><sheetData>` +
		`<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c><c r="C1" t="inlineStr"><is><t>Notes</t></is></c></row>` +
		`<row r="2"><c r="A2" t="s"><v>2</v></c><c r="B2"><v>42.5</v></c><c r="C2" t="b"><v>1</v></c><c r="D2" s="1"/></row>` +
		`<row r="3"><c r="A3" t="s"><v>3</v></c><c r="B3"><f>SUM(B2)</f><v>42.5</v></c><c r="C3" t="str"><f>"do"&amp;"ne"</f><v>done</v></c></row>` +
		`</sheetData></worksheet>`},
}

// samplePDF builds a two-page PDF with the cases the extractor handles: Flate,
// ASCII85 and unfiltered content, direct and indirect lengths, Tj TJ ' " and T*,
// escapes and hex strings, and an image and a font program that must be skipped.
func samplePDF() []byte {
	page1 := `BT
/F1 18 Tf
72 720 Td
(Interview guide) Tj
/F1 12 Tf
0 -24 Td
[(Par) 20 (tic) -10 (ipants) -250 (liked) -300 (it)] TJ
0 -16 Td
(Escapes: \(paren\) back\\slash caf\351 \223quoted\224) Tj
14 TL
(Next line via quote) '
2 1 (Double quote operator) "
T*
<48657820737472696E67> Tj
ET
q 100 0 0 50 72 400 cm /Im1 Do Q
BT 1 0 0 1 72 300 Tm (Same line) Tj ET
BT 1 0 0 1 200 300 Tm (continues) Tj ET
`
	page2a := "BT /F1 12 Tf 72 720 Td (Page two text) Tj ET"
	page2b := "BT /F1 12 Tf 72 700 Td (Encoded with ASCII85) Tj ET"

	flate := func(s string) []byte {
		var b bytes.Buffer
		w := zlib.NewWriter(&b)
		w.Write([]byte(s))
		w.Close()
		return b.Bytes()
	}
	a85 := func(b []byte) []byte {
		out := make([]byte, ascii85.MaxEncodedLen(len(b)))
		n := ascii85.Encode(out, b)
		return append(out[:n], "~>"...)
	}
	stream := func(dict string, data []byte) string {
		return fmt.Sprintf("<< %s >>\nstream\n%s\nendstream", dict, data)
	}
	p1 := flate(page1)
	p2b := a85(flate(page2b))
	img := flate("BT (IMAGE JUNK) Tj ET")
	font := "BT (FONT JUNK) Tj ET"
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> /XObject << /Im1 8 0 R >> >> /Contents 6 0 R >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents [7 0 R 10 0 R] >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
		stream(fmt.Sprintf("/Length %d /Filter /FlateDecode", len(p1)), p1),
		stream("/Length 9 0 R", []byte(page2a)),
		stream(fmt.Sprintf("/Type /XObject /Subtype /Image /Width 1 /Height 1 /ColorSpace /DeviceGray /BitsPerComponent 8 /Length %d /Filter /FlateDecode", len(img)), img),
		fmt.Sprint(len(page2a)),
		stream(fmt.Sprintf("/Length %d /Filter [/ASCII85Decode /FlateDecode]", len(p2b)), p2b),
		stream(fmt.Sprintf("/Length %d /Length1 %d", len(font), len(font)), []byte(font)),
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}
