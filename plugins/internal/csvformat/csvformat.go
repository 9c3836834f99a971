// Package csvformat writes rows as RFC 4180 CSV made safe to open in a spreadsheet. It
// is the logic of the built-in CSV formatter plugin, kept importable so it is tested and
// fuzzed natively while the plugin itself is tested through the WebAssembly host.
package csvformat

import (
	"bufio"
	"errors"
	"io"
	"strconv"

	"interviewd/plugins/internal/bytescan"
	"interviewd/plugins/internal/jsontext"
)

// MaxLine bounds one NDJSON line (the configuration or a row) the formatter reads.
const MaxLine = 32 << 20

// MediaType is the media type of the artifact.
const MediaType = "text/csv; charset=utf-8"

// isTrigger reports whether a cell starting with c would be read as a formula by a
// spreadsheet (CSV injection): = + - @, tab and carriage return.
func isTrigger(c byte) bool {
	switch c {
	case '=', '+', '-', '@', '\t', '\r':
		return true
	}
	return false
}

var (
	commas = bytescan.Repeat(',')
	quotes = bytescan.Repeat('"')
	crs    = bytescan.Repeat('\r')
	lfs    = bytescan.Repeat('\n')
)

// needsQuotes reports whether cell holds a comma, double quote, CR or LF, looking at
// 32 bytes per loop iteration (see package bytescan for why that matters here).
func needsQuotes(cell []byte) bool {
	i := 0
	for ; i+32 <= len(cell); i += 32 {
		b := cell[i : i+32] // one bounds check for the four loads
		if quoteMask(bytescan.Load(b, 0))|quoteMask(bytescan.Load(b, 8))|quoteMask(bytescan.Load(b, 16))|quoteMask(bytescan.Load(b, 24)) != 0 {
			return true
		}
	}
	var tmp [32]byte // the tail, padded with zeros, which need no quotes
	copy(tmp[:], cell[i:])
	return quoteMask(bytescan.Load(tmp[:], 0))|quoteMask(bytescan.Load(tmp[:], 8))|quoteMask(bytescan.Load(tmp[:], 16))|quoteMask(bytescan.Load(tmp[:], 24)) != 0
}

// quoteMask marks the commas, double quotes, CRs and LFs of x (whether there is one is
// exact, not which).
func quoteMask(x uint64) uint64 {
	return bytescan.HasByte(x, commas) | bytescan.HasByte(x, quotes) | bytescan.HasByte(x, crs) | bytescan.HasByte(x, lfs)
}

// AppendCell appends one CSV field holding cell to dst and returns it. A cell starting
// with a formula trigger gets a leading apostrophe; a field containing a comma, double
// quote, CR or LF is quoted, with its double quotes doubled.
func AppendCell(dst, cell []byte) []byte {
	quote := needsQuotes(cell)
	if quote {
		dst = append(dst, '"')
	}
	if len(cell) > 0 && isTrigger(cell[0]) {
		dst = append(dst, '\'')
	}
	if !quote {
		return append(dst, cell...)
	}
	for i := 0; ; {
		j := bytescan.IndexByte(cell, i, '"')
		if j == len(cell) {
			dst = append(dst, cell[i:]...)
			return append(dst, '"')
		}
		dst = append(dst, cell[i:j+1]...)
		dst = append(dst, '"')
		i = j + 1
	}
}

// AppendRow appends cells as one CSV record ending in CRLF to dst and returns it. A row
// of one empty cell is written as "" rather than as a blank line, which readers skip.
func AppendRow(dst []byte, cells [][]byte) []byte {
	if len(cells) == 1 && len(cells[0]) == 0 {
		return append(dst, '"', '"', '\r', '\n')
	}
	for i, c := range cells {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendCell(dst, c)
	}
	return append(dst, '\r', '\n')
}

// rowReader decodes {"cells": [...]} records, reusing its buffers between rows.
type rowReader struct {
	cells  [][]byte
	store  []byte
	bounds []int // start,end pairs into store, which may move while it grows
}

// read returns the cells of one record: strings as their text, numbers and booleans
// as written, null as an empty cell. It returns an error if the record is not an
// object whose "cells" member is an array of such values.
func (rr *rowReader) read(line []byte) ([][]byte, error) {
	raw, found, err := jsontext.Member(line, "cells")
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, errors.New(`record has no "cells"`)
	}
	i, err := jsontext.Expect(raw, 0, '[')
	if err != nil {
		return nil, errors.New(`"cells" is not an array`)
	}
	rr.store, rr.bounds = rr.store[:0], rr.bounds[:0]
	i = jsontext.SkipSpace(raw, i)
	if i < len(raw) && raw[i] == ']' {
		rr.cells = rr.cells[:0]
		return rr.cells, nil
	}
	for {
		i = jsontext.SkipSpace(raw, i)
		start := len(rr.store)
		if i >= len(raw) {
			return nil, jsontext.ErrEnd
		}
		switch c := raw[i]; {
		case c == '"':
			if rr.store, i, err = jsontext.DecodeString(rr.store, raw, i); err != nil {
				return nil, err
			}
		case c == 'n':
			if i, err = jsontext.SkipValue(raw, i); err != nil {
				return nil, err
			}
		case c == 't' || c == 'f' || c == '-' || (c >= '0' && c <= '9'):
			j, err := jsontext.SkipValue(raw, i)
			if err != nil {
				return nil, err
			}
			rr.store = append(rr.store, raw[i:j]...)
			i = j
		default:
			return nil, errors.New("cell " + strconv.Itoa(len(rr.bounds)/2+1) + " is not a string, number, boolean or null")
		}
		rr.bounds = append(rr.bounds, start, len(rr.store))
		i = jsontext.SkipSpace(raw, i)
		if i >= len(raw) {
			return nil, jsontext.ErrEnd
		}
		if raw[i] == ']' {
			break
		}
		if raw[i] != ',' {
			return nil, jsontext.Syntax(i, "want ',' or ']' in cells")
		}
		i++
	}
	rr.cells = rr.cells[:0]
	for k := 0; k < len(rr.bounds); k += 2 {
		rr.cells = append(rr.cells, rr.store[rr.bounds[k]:rr.bounds[k+1]])
	}
	return rr.cells, nil
}

// Run speaks the formatter side of the plugin ABI: it reads the {"config": ...} line
// (the CSV formatter has no settings and ignores its content) and then one row per line
// from stdin, the first being the header, and writes the CSV to stdout. It returns an
// error (for the plugin to print before exiting non-zero) for a missing configuration
// line, a malformed row, a row whose cell count differs from the header's, or a failed
// write.
func Run(stdin io.Reader, stdout io.Writer) error {
	lines := jsontext.NewLineReader(stdin, MaxLine)
	line, err := lines.Next()
	if errors.Is(err, io.EOF) {
		return errors.New(`no input: the first line must be {"config": {...}}`)
	}
	if err != nil {
		return err
	}
	if _, found, err := jsontext.Member(line, "config"); err != nil || !found {
		return errors.New(`the first line must be {"config": {...}}`)
	}
	w := bufio.NewWriterSize(stdout, 64<<10)
	var (
		rr    rowReader
		out   []byte
		width = -1
	)
	for row := 1; ; row++ {
		line, err := lines.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		cells, err := rr.read(line)
		if err != nil {
			return jsontext.Prefix("row "+strconv.Itoa(row), err)
		}
		if width < 0 {
			width = len(cells)
		} else if len(cells) != width {
			return errors.New("row " + strconv.Itoa(row) + " has " + strconv.Itoa(len(cells)) + " cells, the header has " + strconv.Itoa(width))
		}
		out = AppendRow(out[:0], cells)
		if _, err := w.Write(out); err != nil {
			return err
		}
	}
	return w.Flush()
}
