package extract

import (
	"archive/zip"
	"encoding/xml"
	"errors"
	"math"
	"strconv"
)

const (
	// maxSharedStrings bounds the entries kept from the shared string table; cells
	// that refer past it read as empty. Excel itself allows far fewer per workbook
	// than its sheets could reference, so this only cuts hostile tables.
	maxSharedStrings = 1 << 20
	// maxCellBytes bounds one cell value (Excel's limit is 32,767 characters).
	maxCellBytes = 128 * 1024
)

// sharedStrings is the workbook's shared string table, packed into one buffer.
type sharedStrings struct {
	text []byte
	ends []int32 // ends[i] is the end of string i in text
}

// get returns string i, or "" when i is out of range.
func (t *sharedStrings) get(i int) []byte {
	if i < 0 || i >= len(t.ends) {
		return nil
	}
	start := int32(0)
	if i > 0 {
		start = t.ends[i-1]
	}
	return t.text[start:t.ends[i]]
}

// xlsxText writes the cell values of every worksheet (xl/worksheets/sheetN.xml, in
// N order), one line per row with cells separated by tabs and a blank line between
// sheets. Shared strings are resolved, inline strings read, numbers written as
// stored (dates stay serial numbers), booleans as TRUE/FALSE; formulas are left out.
func xlsxText(a *archive, s *sink, lim Limits) error {
	sheets := numberedParts(a, "xl/worksheets/sheet", ".xml")
	if len(sheets) == 0 {
		return errors.New("extract: no worksheets")
	}
	var sst sharedStrings
	if f := a.files["xl/sharedStrings.xml"]; f != nil {
		// Keep up to four times the output cap: the strings a sheet shows need not be
		// the first ones in the table.
		keep := int(min(4*int64(lim.MaxText), math.MaxInt32))
		if err := readSharedStrings(a, f, &sst, keep); errors.Is(err, errRejected) {
			return err
		}
	}
	for _, f := range sheets {
		err := readSheet(a, f, &sst, s)
		if errors.Is(err, errRejected) {
			return err
		}
		if s.full {
			return nil
		}
		// A malformed sheet loses only its own remaining cells.
		s.paragraph()
	}
	return nil
}

// readSharedStrings fills sst from the shared string table part f, keeping at most
// maxText bytes and maxSharedStrings entries. Phonetic runs (rPh) are left out.
func readSharedStrings(a *archive, f *zip.File, sst *sharedStrings, maxText int) error {
	inText, phonetic := false, 0
	return a.walkPart(f, func(tok xml.Token) error {
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "t":
				inText = true
			case "rPh":
				phonetic++
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "t":
				inText = false
			case "rPh":
				phonetic = max(phonetic-1, 0)
			case "si":
				if len(sst.ends) >= maxSharedStrings {
					return errFull
				}
				sst.ends = append(sst.ends, int32(len(sst.text)))
			}
		case xml.CharData:
			if inText && phonetic == 0 {
				room := maxText - len(sst.text)
				sst.text = append(sst.text, t[:min(len(t), max(room, 0))]...)
			}
		}
		return nil
	})
}

// readSheet writes the rows of one worksheet part.
func readSheet(a *archive, f *zip.File, sst *sharedStrings, s *sink) error {
	var (
		cellType string
		value    []byte
		inValue  bool // inside <v>, or <t> of an inline string
		cells    int  // cells written in this row
	)
	return a.walkPart(f, func(tok xml.Token) error {
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "c":
				cellType, value = "", value[:0]
				for _, at := range t.Attr {
					if at.Name.Local == "t" {
						cellType = at.Value
					}
				}
			case "v", "t":
				inValue = true
			case "row":
				cells = 0
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "v", "t":
				inValue = false
			case "c":
				text := cellText(cellType, value, sst)
				if len(text) == 0 {
					return nil
				}
				if cells > 0 {
					s.tab()
				}
				cells++
				return s.writeBytes(text)
			case "row":
				s.newline()
			}
		case xml.CharData:
			if inValue {
				value = append(value, t[:min(len(t), max(maxCellBytes-len(value), 0))]...)
			}
		}
		return nil
	})
}

// cellText returns the text a cell of type typ with raw value v shows.
func cellText(typ string, v []byte, sst *sharedStrings) []byte {
	switch typ {
	case "s":
		i, err := strconv.Atoi(string(v))
		if err != nil {
			return nil
		}
		return sst.get(i)
	case "b":
		switch string(v) {
		case "1":
			return []byte("TRUE")
		case "0":
			return []byte("FALSE")
		}
	}
	return v
}
