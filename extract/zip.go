package extract

import (
	"archive/zip"
	"bufio"
	"compress/flate"
	"context"
	"encoding/binary"
	"errors"
	"io"
)

// archive is an office file opened with its limits checked.
type archive struct {
	files  map[string]*zip.File
	budget *budget
}

// openArchive opens the zip in r (size bytes). It returns errRejected when the
// archive holds more than lim.MaxEntries entries (counted before archive/zip builds its
// list, so a central directory of a million entries costs nothing), and another error
// when r is not a readable zip.
func openArchive(ctx context.Context, r io.ReaderAt, size int64, lim Limits) (*archive, error) {
	if n, err := countZipEntries(r, size, lim.MaxEntries); err == nil && n > lim.MaxEntries {
		return nil, errRejected
	}
	zr, err := zip.NewReader(r, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		// Names are never used as paths here, so an insecure one is harmless.
		return nil, err
	}
	if len(zr.File) > lim.MaxEntries {
		return nil, errRejected
	}
	a := &archive{files: make(map[string]*zip.File, len(zr.File)), budget: newBudget(ctx, lim)}
	for _, f := range zr.File {
		if _, dup := a.files[f.Name]; !dup {
			a.files[f.Name] = f
		}
	}
	return a, nil
}

// open returns a reader of the inflated content of f, metered by the archive's budget,
// and a function that releases it. It returns an error for a compression method other
// than store or deflate, or a damaged local header.
func (a *archive) open(f *zip.File) (io.Reader, func(), error) {
	raw, err := f.OpenRaw()
	if err != nil {
		return nil, nil, err
	}
	switch f.Method {
	case zip.Store:
		return a.budget.inflated(raw, nil), func() {}, nil
	case zip.Deflate:
		counted := &countingReader{r: raw}
		dec := flate.NewReader(counted)
		return a.budget.inflated(dec, counted), func() { dec.Close() }, nil
	}
	return nil, nil, zip.ErrAlgorithm
}

// Zip record layouts (APPNOTE.TXT 4.3).
const (
	zipEndSig       = 0x06054b50
	zipEndLen       = 22
	zip64LocatorSig = 0x07064b50
	zip64LocatorLen = 20
	zip64EndSig     = 0x06064b50
	zip64EndLen     = 56
	zipCentralSig   = 0x02014b50
	zipCentralLen   = 46
)

// countZipEntries counts the central directory entries of the zip in r the way
// archive/zip will find them, but stops as soon as the count passes max. It returns an
// error when it cannot make sense of the directory; archive/zip then has the last word.
func countZipEntries(r io.ReaderAt, size int64, max int) (int, error) {
	endOff, end, err := findZipEnd(r, size)
	if err != nil {
		return 0, err
	}
	declared := uint64(binary.LittleEndian.Uint16(end[10:]))
	dirSize := uint64(binary.LittleEndian.Uint32(end[12:]))
	dirOff := uint64(binary.LittleEndian.Uint32(end[16:]))
	if declared == 0xffff || dirSize == 0xffff || dirOff == 0xffffffff {
		if off, ok := zip64End(r, endOff); ok {
			var rec [zip64EndLen]byte
			if _, err := r.ReadAt(rec[:], off); err != nil || binary.LittleEndian.Uint32(rec[:]) != zip64EndSig {
				return 0, errors.New("extract: bad zip64 end record")
			}
			endOff = off
			declared = binary.LittleEndian.Uint64(rec[32:])
			dirSize = binary.LittleEndian.Uint64(rec[40:])
			dirOff = binary.LittleEndian.Uint64(rec[48:])
		}
	}
	if declared > uint64(max) {
		return max + 1, nil
	}
	if dirSize > uint64(size) || dirOff > uint64(size) {
		return 0, errors.New("extract: zip directory out of range")
	}
	// Like archive/zip: the directory sits right before its end record, shifted by
	// any prepended data (a base offset), unless a header is found at its declared
	// offset as is.
	base := endOff - int64(dirSize) - int64(dirOff)
	if base > 0 {
		if n := walkZipDirectory(r, size, int64(dirOff), max); n > 0 {
			return n, nil
		}
	}
	n := walkZipDirectory(r, size, base+int64(dirOff), max)
	return n, nil
}

// findZipEnd returns the offset and the fixed part of the end of central directory
// record: the last one whose comment fits in the file, as archive/zip chooses it.
func findZipEnd(r io.ReaderAt, size int64) (int64, []byte, error) {
	n := min(size, 65*1024) // as far back as archive/zip looks
	if n < zipEndLen {
		return 0, nil, errors.New("extract: not a zip")
	}
	buf := make([]byte, n)
	if _, err := r.ReadAt(buf, size-n); err != nil && err != io.EOF {
		return 0, nil, err
	}
	for i := len(buf) - zipEndLen; i >= 0; i-- {
		comment := int(binary.LittleEndian.Uint16(buf[i+20:]))
		if binary.LittleEndian.Uint32(buf[i:]) == zipEndSig && i+zipEndLen+comment <= len(buf) {
			return size - n + int64(i), buf[i : i+zipEndLen], nil
		}
	}
	return 0, nil, errors.New("extract: no zip end record")
}

// zip64End returns the offset of the zip64 end record named by the locator just
// before endOff, if there is one.
func zip64End(r io.ReaderAt, endOff int64) (int64, bool) {
	if endOff < zip64LocatorLen {
		return 0, false
	}
	var loc [zip64LocatorLen]byte
	if _, err := r.ReadAt(loc[:], endOff-zip64LocatorLen); err != nil {
		return 0, false
	}
	if binary.LittleEndian.Uint32(loc[:]) != zip64LocatorSig {
		return 0, false
	}
	off := binary.LittleEndian.Uint64(loc[8:])
	if off > uint64(endOff) {
		return 0, false
	}
	return int64(off), true
}

// walkZipDirectory counts consecutive central directory headers from off, up to
// max+1 of them.
func walkZipDirectory(r io.ReaderAt, size, off int64, max int) int {
	if off < 0 || off >= size {
		return 0
	}
	br := bufio.NewReaderSize(io.NewSectionReader(r, off, size-off), 32*1024)
	var h [zipCentralLen]byte
	n := 0
	for n <= max {
		if _, err := io.ReadFull(br, h[:]); err != nil || binary.LittleEndian.Uint32(h[:]) != zipCentralSig {
			break
		}
		n++
		skip := int(binary.LittleEndian.Uint16(h[28:])) + int(binary.LittleEndian.Uint16(h[30:])) + int(binary.LittleEndian.Uint16(h[32:]))
		if _, err := br.Discard(skip); err != nil {
			break
		}
	}
	return n
}
