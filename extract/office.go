package extract

import (
	"archive/zip"
	"context"
	"encoding/xml"
	"errors"
	"io"
	"sort"
	"strconv"
	"strings"
)

// officeJunkPercent is the share of unreadable runes tolerated in office text. XML
// text is clean, so this only matters for deliberately odd documents.
const officeJunkPercent = 30

// officeText extracts the text of a .docx, .pptx or .xlsx held in r (size bytes).
// ok is false when the archive is not a readable zip, lacks the parts that hold text,
// holds no text, or is hostile (see openArchive and budget). Text read before a
// malformed part is kept.
func officeText(ctx context.Context, r io.ReaderAt, size int64, ext string, lim Limits) (string, bool) {
	a, err := openArchive(ctx, r, size, lim)
	if err != nil {
		return "", false
	}
	s := newSink(lim.MaxText, 0)
	switch ext {
	case ".docx":
		err = docxText(a, s)
	case ".pptx":
		err = pptxText(a, s)
	case ".xlsx":
		err = xlsxText(a, s, lim)
	default:
		return "", false
	}
	if errors.Is(err, errRejected) {
		return "", false
	}
	return s.result(officeJunkPercent)
}

// walkPart streams the XML of one archive part through fn, token by token. It returns
// nil at the end of the part or when fn returns errFull, errRejected from the budget or
// the XML guard, and the decoder's error for malformed XML.
func (a *archive) walkPart(f *zip.File, fn func(xml.Token) error) error {
	r, release, err := a.open(f)
	if err != nil {
		return err
	}
	defer release()
	// RawToken keeps no stack of open elements, so deep nesting costs nothing; names
	// are matched on their local part whatever the prefix.
	d := xml.NewDecoder(&xmlGuard{r: r})
	for {
		tok, err := d.RawToken()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(tok); err != nil {
			if err == errFull {
				return nil
			}
			return err
		}
	}
}

// fallbackSkipper hides the mc:Fallback branch of markup-compatibility blocks, which
// repeats the content of mc:Choice (text boxes, shapes) for older readers.
type fallbackSkipper struct{ depth int }

// skip updates the state for tok and reports whether tok lies inside a fallback.
func (f *fallbackSkipper) skip(tok xml.Token) bool {
	switch t := tok.(type) {
	case xml.StartElement:
		if t.Name.Local == "Fallback" {
			f.depth++
		}
	case xml.EndElement:
		if t.Name.Local == "Fallback" && f.depth > 0 {
			f.depth--
			return true
		}
	}
	return f.depth > 0
}

// docxText writes the text of word/document.xml: w:t runs, w:tab as a tab, w:br and
// w:cr as line breaks, one line per paragraph. Deleted text (w:delText) is left out.
func docxText(a *archive, s *sink) error {
	f := a.files["word/document.xml"]
	if f == nil {
		return errors.New("extract: no word/document.xml")
	}
	return runText(a, f, s, true)
}

// pptxText writes the text of the slides (ppt/slides/slideN.xml) in slide-number
// order, a blank line between slides: a:t runs, a:br as a line break, one line per
// paragraph. Speaker notes are left out.
func pptxText(a *archive, s *sink) error {
	slides := numberedParts(a, "ppt/slides/slide", ".xml")
	if len(slides) == 0 {
		return errors.New("extract: no slides")
	}
	for _, f := range slides {
		err := runText(a, f, s, false)
		if errors.Is(err, errRejected) {
			return err
		}
		if s.full {
			return nil
		}
		// A malformed slide loses only its own remaining text.
		s.paragraph()
	}
	return nil
}

// runText writes the text runs (t elements) of one part, a line per paragraph (p) and
// a line break for br. WordprocessingML also has tab and cr as run content; in
// DrawingML (slides) a tab element is a tab-stop definition, not text, so it is only
// honoured when word is set.
func runText(a *archive, f *zip.File, s *sink, word bool) error {
	var fb fallbackSkipper
	inText := false
	return a.walkPart(f, func(tok xml.Token) error {
		if fb.skip(tok) {
			return nil
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "t":
				inText = true
			case "br":
				s.newline()
			case "tab":
				if word {
					s.tab()
				}
			case "cr":
				if word {
					s.newline()
				}
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "t":
				inText = false
			case "p":
				s.newline()
			}
		case xml.CharData:
			if inText {
				return s.writeBytes(t)
			}
		}
		return nil
	})
}

// numberedParts returns the parts named prefix+N+suffix, ordered by N.
func numberedParts(a *archive, prefix, suffix string) []*zip.File {
	type part struct {
		n int
		f *zip.File
	}
	var parts []part
	for name, f := range a.files {
		num, ok := strings.CutPrefix(name, prefix)
		if !ok {
			continue
		}
		num, ok = strings.CutSuffix(num, suffix)
		if !ok {
			continue
		}
		n, err := strconv.Atoi(num)
		if err != nil || n < 0 {
			continue
		}
		parts = append(parts, part{n, f})
	}
	// Ties ("slide01", "slide1") are broken by name so the order never depends on
	// map iteration.
	sort.Slice(parts, func(i, j int) bool {
		if parts[i].n != parts[j].n {
			return parts[i].n < parts[j].n
		}
		return parts[i].f.Name < parts[j].f.Name
	})
	files := make([]*zip.File, len(parts))
	for i, p := range parts {
		files[i] = p.f
	}
	return files
}
