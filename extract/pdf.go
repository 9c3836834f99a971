package extract

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/zlib"
	"context"
	"encoding/ascii85"
	"errors"
	"io"
)

const (
	// pdfJunkPercent is the share of unreadable runes above which PDF output is taken
	// for text in a font encoding this package cannot read (composite fonts show
	// two-byte glyph codes, which come out as control characters).
	pdfJunkPercent = 10
	// pdfDictWindow bounds how far back from a stream keyword its dictionary is
	// looked for.
	pdfDictWindow = 4096
	// pdfHeaderWindow is how far into the file the %PDF- header may start, as
	// readers commonly allow.
	pdfHeaderWindow = 1024
)

var errNotPDF = errors.New("extract: not a readable PDF")

// pdfText extracts the text of the PDF in data. It does not resolve the document's
// object structure: it scans the file once for streams, in file order, skips those
// whose dictionary marks them as images, fonts, metadata or cross-reference data,
// inflates the rest within the budget and reads their text operators (see
// pdfContent). ok is false for a file without a %PDF- header, an encrypted one, one
// that yields no text or mostly unreadable text, and a hostile one (see budget).
func pdfText(ctx context.Context, data []byte, lim Limits) (string, bool) {
	s := newSink(lim.MaxText, 0)
	if err := readPDF(ctx, data, lim, s); errors.Is(err, errRejected) || errors.Is(err, errNotPDF) {
		return "", false
	}
	return s.result(pdfJunkPercent)
}

// readPDF writes the text of data's content streams to s. It returns errNotPDF,
// errRejected, or nil (also when s filled up).
func readPDF(ctx context.Context, data []byte, lim Limits, s *sink) error {
	if !bytes.Contains(data[:min(len(data), pdfHeaderWindow)], []byte("%PDF-")) {
		return errNotPDF
	}
	// Encrypted content cannot be read without implementing the security handlers.
	if bytes.Contains(data, []byte("/Encrypt")) {
		return errNotPDF
	}
	b := newBudget(ctx, lim)
	content := newPDFContent(s, lim.MaxText)
	br := bufio.NewReaderSize(nil, 32*1024)
	// Each pass moves pos forward past a "stream" keyword and, when the stream is
	// taken, past its data, so the loop ends within len(data) passes, and the
	// dictionary windows looked at never overlap.
	pos, prevEnd := 0, 0
	for pos < len(data) {
		if ctx.Err() != nil {
			return errRejected
		}
		i := bytes.Index(data[pos:], []byte("stream"))
		if i < 0 {
			return nil
		}
		at := pos + i
		pos = at + len("stream")
		if at > 0 && pdfRegular(data[at-1]) {
			continue // "endstream", or inside another word
		}
		start := pos
		if start < len(data) && data[start] == '\r' {
			start++
		}
		if start < len(data) && data[start] == '\n' {
			start++
		}
		if start == pos {
			continue // the keyword must end its line
		}
		dict := parseStreamDict(data[max(prevEnd, at-pdfDictWindow):at])
		end, next := streamEnd(data, start, dict.length)
		pos, prevEnd = next, next
		if dict.skip {
			continue
		}
		err := showStream(ctx, b, br, content, data[start:end], dict.filters, lim.MaxText)
		if errors.Is(err, errRejected) {
			return errRejected
		}
		if err == errFull {
			return nil
		}
	}
	return nil
}

// streamEnd returns the end of the data of the stream starting at start, and the
// offset after its endstream keyword. A declared length is used only when it is in
// range and endstream follows it; otherwise the keyword is searched for, and a
// stream without one runs to the end of the file.
func streamEnd(data []byte, start int, length int64) (end, next int) {
	if length >= 0 && length <= int64(len(data)-start) {
		e := start + int(length)
		j := e
		for j < len(data) && j-e < 4 && pdfSpace(data[j]) {
			j++
		}
		if bytes.HasPrefix(data[j:], []byte("endstream")) {
			return e, j + len("endstream")
		}
	}
	k := bytes.Index(data[start:], []byte("endstream"))
	if k < 0 {
		return len(data), len(data)
	}
	end = start + k
	next = end + len("endstream")
	// The end of line before endstream is not part of the data.
	if end > start && data[end-1] == '\n' {
		end--
	}
	if end > start && data[end-1] == '\r' {
		end--
	}
	return end, next
}

// streamDict is what matters of a stream's dictionary.
type streamDict struct {
	filters []string
	length  int64 // -1 when absent or an indirect reference
	skip    bool  // the stream holds no page content
}

// parseStreamDict reads the dictionary at the end of window (the bytes before a
// stream keyword), starting after the last "obj" keyword in it when there is one.
// Every key and value is looked at flat, nested dictionaries included: the keys that
// mark a stream as not content never appear in a content stream's dictionary.
func parseStreamDict(window []byte) streamDict {
	if i := bytes.LastIndex(window, []byte("obj")); i >= 0 {
		window = window[i+len("obj"):]
	}
	type tok struct {
		kind pdfKind
		num  float64
		word string
	}
	// A window of pdfDictWindow bytes holds at most that many tokens.
	var toks []tok
	l := newPDFLexer(bytes.NewReader(window), pdfDictWindow)
	for t := l.next(); t.kind != pdfEOF; t = l.next() {
		toks = append(toks, tok{kind: t.kind, num: t.num, word: string(t.data)})
	}
	d := streamDict{length: -1}
	for i, t := range toks {
		if t.kind != pdfName {
			continue
		}
		var v tok
		if i+1 < len(toks) {
			v = toks[i+1]
		}
		switch t.word {
		case "Filter":
			if v.kind == pdfName {
				d.filters = append(d.filters, v.word)
			}
			for j := i + 2; v.kind == pdfArrOpen && j < len(toks) && toks[j].kind == pdfName; j++ {
				d.filters = append(d.filters, toks[j].word)
			}
		case "Length":
			// "12 0 R" is a reference to the length, not a length.
			ref := i+3 < len(toks) && toks[i+2].kind == pdfNum && toks[i+3].kind == pdfKeyword && toks[i+3].word == "R"
			if v.kind == pdfNum && v.num >= 0 && v.num < 1<<53 && v.num == float64(int64(v.num)) && !ref {
				d.length = int64(v.num)
			}
		case "Type":
			switch v.word {
			case "XRef", "ObjStm", "Metadata", "EmbeddedFile":
				d.skip = true
			}
		case "Subtype":
			switch v.word {
			case "Image", "XML", "Type1C", "CIDFontType0C", "OpenType":
				d.skip = true
			}
		case "Length1", "Length2", "Length3", "Predictor":
			d.skip = true // font programs, and predicted image or xref data
		}
	}
	return d
}

// showStream decodes one stream through its filters and runs its content. It
// returns errRejected or errFull from below, an error for a filter it cannot decode,
// and nil otherwise: damaged data ends the stream, not the document.
func showStream(ctx context.Context, b *budget, br *bufio.Reader, content *pdfContent, raw []byte, filters []string, maxStr int) error {
	var r io.Reader = bytes.NewReader(raw)
	for _, f := range filters {
		switch f {
		case "ASCIIHexDecode", "AHx":
			r = &asciiHexReader{r: bufio.NewReader(r)}
		case "ASCII85Decode", "A85":
			r = ascii85.NewDecoder(&untilTilde{r: r})
		case "FlateDecode", "Fl":
			counted := &countingReader{r: r}
			pr := bufio.NewReader(counted)
			var dec io.ReadCloser
			if hdr, _ := pr.Peek(2); zlibHeader(hdr) {
				zr, err := zlib.NewReader(pr)
				if err != nil {
					return err
				}
				dec = zr
			} else {
				// Some writers omit the zlib header: read the bare deflate data.
				dec = flate.NewReader(pr)
			}
			defer dec.Close()
			r = b.inflated(dec, counted)
		default:
			return errors.New("extract: unsupported filter " + f)
		}
	}
	br.Reset(r)
	l := newPDFLexer(br, maxStr)
	if err := content.run(ctx, l); err != nil {
		return err
	}
	if errors.Is(l.err, errRejected) {
		return errRejected
	}
	return nil
}

// zlibHeader reports whether h starts a zlib stream of deflate data (RFC 1950).
func zlibHeader(h []byte) bool {
	return len(h) == 2 && h[0]&0x0f == 8 && (uint16(h[0])<<8|uint16(h[1]))%31 == 0
}

// asciiHexReader decodes ASCIIHexDecode data up to its '>' end marker, ignoring
// anything that is not a hex digit.
type asciiHexReader struct {
	r    *bufio.Reader
	done bool
}

func (a *asciiHexReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && !a.done {
		hi, ok := a.digit()
		if !ok {
			break
		}
		lo, ok := a.digit()
		if !ok {
			lo = 0 // an odd final digit counts as followed by 0
		}
		p[n] = hi<<4 | lo
		n++
	}
	if n == 0 && a.done {
		return 0, io.EOF
	}
	return n, nil
}

// digit returns the next hex digit, or false at the end marker or end of input.
func (a *asciiHexReader) digit() (byte, bool) {
	for !a.done {
		c, err := a.r.ReadByte()
		if err != nil || c == '>' {
			a.done = true
			break
		}
		if d, ok := unhex(c); ok {
			return d, true
		}
	}
	return 0, false
}

// untilTilde passes bytes through up to the first '~', which starts the "~>" end
// marker of ASCII85Decode data.
type untilTilde struct {
	r    io.Reader
	done bool
}

func (u *untilTilde) Read(p []byte) (int, error) {
	if u.done {
		return 0, io.EOF
	}
	n, err := u.r.Read(p)
	if i := bytes.IndexByte(p[:n], '~'); i >= 0 {
		u.done = true
		return i, nil
	}
	return n, err
}
