package extract

import (
	"context"
	"unicode/utf16"
	"unicode/utf8"
)

const (
	// maxPDFOperands is the deepest operand stack kept. Text operators take at most
	// six (Tm); when more pile up the stack is cleared, since no operator shown here
	// could use them.
	maxPDFOperands = 8
	// pdfWordGap is the TJ adjustment, in thousandths of an em, from which a gap
	// between two strings reads as a word space rather than kerning.
	pdfWordGap = 200
	// pdfCheckEvery is how many tokens pass between checks of the context.
	pdfCheckEvery = 1024
)

// pdfOperand is one operand on the stack; text holds a decoded string or array.
type pdfOperand struct {
	kind pdfKind
	num  float64
	text []byte
}

// pdfContent interprets content streams (ISO 32000-1 §9.4) for their text: the
// strings shown by Tj, TJ, ' and " inside BT ... ET, with line breaks where the
// text position moves to another line. It keeps its state across streams, as a page
// may split its content over several.
type pdfContent struct {
	s      *sink
	maxStr int

	ops  [maxPDFOperands]pdfOperand
	nops int

	arrDepth int    // nesting of the array being read; 0 outside arrays
	arr      []byte // decoded text of the outermost array being read

	inText    bool
	lineY     float64 // y of the current text line, in text space
	shownY    float64 // lineY when text was last shown
	shown     bool    // any text shown yet
	breakLine bool    // T*, ' or " asked for a new line
	gap       bool    // a text object ended since text was last shown
}

func newPDFContent(s *sink, maxStr int) *pdfContent {
	return &pdfContent{s: s, maxStr: maxStr}
}

// run interprets one stream from l. It returns errFull when the sink is full,
// errRejected when ctx ends, and nil at the end of the stream.
func (p *pdfContent) run(ctx context.Context, l *pdfLexer) error {
	for n := 1; ; n++ {
		if n%pdfCheckEvery == 0 && ctx.Err() != nil {
			return errRejected
		}
		t := l.next()
		switch t.kind {
		case pdfEOF:
			p.nops, p.arrDepth = 0, 0
			return nil
		case pdfArrOpen:
			if p.arrDepth == 0 {
				p.arr = p.arr[:0]
			}
			p.arrDepth++
		case pdfArrClose:
			if p.arrDepth > 0 {
				p.arrDepth--
				if p.arrDepth == 0 {
					p.push(pdfArr, 0, p.arr, false)
				}
			}
		case pdfStr:
			switch p.arrDepth {
			case 0:
				p.push(pdfStr, 0, t.data, true)
			case 1:
				p.arr = appendPDFText(p.arr, t.data, p.maxStr)
			}
		case pdfNum:
			switch p.arrDepth {
			case 0:
				p.push(pdfNum, t.num, nil, false)
			case 1:
				if t.num <= -pdfWordGap && len(p.arr) > 0 && p.arr[len(p.arr)-1] != ' ' && len(p.arr) < p.maxStr {
					p.arr = append(p.arr, ' ')
				}
			}
		case pdfName:
			if p.arrDepth == 0 {
				p.push(pdfName, 0, nil, false)
			}
		case pdfKeyword:
			if p.arrDepth > 0 {
				continue // operators cannot occur inside arrays
			}
			err := p.operator(string(t.data), l)
			p.nops = 0
			if err != nil {
				return err
			}
		}
	}
}

// push adds an operand; a string is decoded to UTF-8 when decode is set. The operand
// slot keeps its buffer, so a long stream reuses a handful of allocations.
func (p *pdfContent) push(kind pdfKind, num float64, data []byte, decode bool) {
	if p.nops == maxPDFOperands {
		p.nops = 0
	}
	op := &p.ops[p.nops]
	p.nops++
	op.kind, op.num = kind, num
	if decode {
		op.text = appendPDFText(op.text[:0], data, p.maxStr)
	} else {
		op.text = append(op.text[:0], data...)
	}
}

// operand returns the i-th operand from the top of the stack (0 is the top), or a
// zero operand when there are fewer.
func (p *pdfContent) operand(i int) pdfOperand {
	if i >= p.nops {
		return pdfOperand{}
	}
	return p.ops[p.nops-1-i]
}

// operator applies one operator to the text state.
func (p *pdfContent) operator(op string, l *pdfLexer) error {
	switch op {
	case "BT":
		p.inText, p.lineY = true, 0
	case "ET":
		p.inText, p.gap = false, true
	case "Td", "TD":
		if ty := p.operand(0); ty.kind == pdfNum && p.operand(1).kind == pdfNum {
			p.lineY += ty.num
		}
	case "Tm":
		if f := p.operand(0); f.kind == pdfNum && p.nops >= 6 {
			p.lineY = f.num
		}
	case "T*":
		p.breakLine = true
	case "Tj":
		return p.show(p.operand(0), pdfStr)
	case "TJ":
		return p.show(p.operand(0), pdfArr)
	case "'", "\"":
		p.breakLine = true
		return p.show(p.operand(0), pdfStr)
	case "ID":
		l.skipInlineImage()
	}
	return nil
}

// show writes the text of operand o, if it is of kind want and inside a text object.
func (p *pdfContent) show(o pdfOperand, want pdfKind) error {
	if !p.inText || o.kind != want || len(o.text) == 0 {
		return nil
	}
	if p.shown {
		switch {
		case p.breakLine || p.lineY-p.shownY > 0.5 || p.shownY-p.lineY > 0.5:
			p.s.newline()
		case p.gap:
			p.s.blank()
		}
	}
	p.breakLine, p.gap = false, false
	p.shown, p.shownY = true, p.lineY
	return p.s.writeBytes(o.text)
}

// appendPDFText appends the UTF-8 text of the PDF string b to dst while dst is under
// max bytes. A string starting with the UTF-16BE byte order mark is read as UTF-16BE;
// any other is read byte by byte as WinAnsiEncoding (Windows-1252), the encoding of
// simple fonts in most PDFs. Undefined bytes become U+FFFD.
func appendPDFText(dst, b []byte, max int) []byte {
	if len(b) >= 2 && b[0] == 0xfe && b[1] == 0xff {
		for i := 2; i+1 < len(b) && len(dst) < max; i += 2 {
			r := rune(b[i])<<8 | rune(b[i+1])
			if utf16.IsSurrogate(r) && i+3 < len(b) {
				if pair := utf16.DecodeRune(r, rune(b[i+2])<<8|rune(b[i+3])); pair != utf8.RuneError {
					r = pair
					i += 2
				}
			}
			dst = utf8.AppendRune(dst, r)
		}
		return dst
	}
	for _, c := range b {
		if len(dst) >= max {
			break
		}
		switch {
		case c < 0x80:
			dst = append(dst, c)
		case c < 0xa0:
			dst = utf8.AppendRune(dst, winAnsiHigh[c-0x80])
		default:
			dst = utf8.AppendRune(dst, rune(c))
		}
	}
	return dst
}

// winAnsiHigh maps bytes 0x80-0x9f of Windows-1252 to Unicode; unassigned bytes map
// to U+FFFD.
var winAnsiHigh = [32]rune{
	0x20ac, 0xfffd, 0x201a, 0x0192, 0x201e, 0x2026, 0x2020, 0x2021,
	0x02c6, 0x2030, 0x0160, 0x2039, 0x0152, 0xfffd, 0x017d, 0xfffd,
	0xfffd, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014,
	0x02dc, 0x2122, 0x0161, 0x203a, 0x0153, 0xfffd, 0x017e, 0x0178,
}
