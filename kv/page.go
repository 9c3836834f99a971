package kv

import (
	"bytes"
	"encoding/base64"

	bolt "go.etcd.io/bbolt"
)

// Page is one page of a newest-first list. Next is the opaque cursor of the following
// page, empty on the last one.
type Page[T any] struct {
	Items []T
	Next  string
}

// Cursor kinds: a cursor from one list is refused by another.
const (
	CursorStudies    byte = 's'
	CursorInterviews byte = 'i'
)

const cursorVersion = 1

// EncodeCursor returns the opaque cursor naming the last row of a page.
func EncodeCursor(kind byte, last ID) string {
	var raw [18]byte
	raw[0] = cursorVersion
	raw[1] = kind
	copy(raw[2:], last[:])
	return base64.RawURLEncoding.EncodeToString(raw[:])
}

// DecodeCursor parses a cursor of the given kind. It returns an EINVALID error for
// anything that is not such a cursor.
func DecodeCursor(kind byte, s string) (ID, error) {
	bad := Invalid(FieldError{Loc: []any{"query", "cursor"}, Msg: "Cursor is not valid; pass the X-Next-Cursor value of the previous page unchanged.", Type: "cursor_invalid"})
	if len(s) != 24 {
		return ID{}, bad
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(raw) != 18 || raw[0] != cursorVersion || raw[1] != kind {
		return ID{}, bad
	}
	var id ID
	copy(id[:], raw[2:])
	if base64.RawURLEncoding.EncodeToString(raw) != s { // one spelling per cursor
		return ID{}, bad
	}
	return id, nil
}

// pageNewest walks the keys under prefix (each prefix + 16-byte id) from newest to
// oldest, starting just below after (or at the newest when after is nil), and calls
// take for each value until take has accepted limit+1 rows. take appends what it
// accepts; the caller keeps the first limit. more reports whether a row beyond them was
// found, and last is the id of the limit-th accepted row. Keyset paging: rows inserted
// meanwhile never shift a page.
func pageNewest(b *bolt.Bucket, prefix []byte, after *ID, limit int, take func(v []byte) (bool, error)) (more bool, last ID, err error) {
	c := b.Cursor()
	var start []byte
	if after != nil {
		start = append(append([]byte(nil), prefix...), after[:]...)
	} else {
		start = append(append([]byte(nil), prefix...), bytes.Repeat([]byte{0xff}, 17)...)
	}
	k, v := c.Seek(start)
	if k == nil {
		k, v = c.Last()
	} else {
		k, v = c.Prev()
	}
	n := 0
	for ; k != nil && bytes.HasPrefix(k, prefix); k, v = c.Prev() {
		if len(k) != len(prefix)+16 {
			continue
		}
		ok, err := take(v)
		if err != nil {
			return false, ID{}, err
		}
		if !ok {
			continue
		}
		n++
		if n > limit {
			return true, last, nil
		}
		copy(last[:], k[len(prefix):])
	}
	return false, last, nil
}
