package kv

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
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

// cursorVersion 2 cursors are signed; version 1 (unsigned) ones are no longer accepted.
const cursorVersion = 2

// cursorMACLen is the length of a cursor's truncated HMAC-SHA256: 128 bits, far beyond
// what guessing online could reach.
const cursorMACLen = 16

const cursorRawLen = 2 + 16 + cursorMACLen

// EncodeCursor returns the opaque cursor naming the last row of a page of partition p:
// version, kind and row id, signed with the instance's secret (HMAC-SHA256 over those
// and the partition), so a cursor cannot be made up or edited to start a page at an
// arbitrary position, nor carried to another organisation or environment.
func (db *DB) EncodeCursor(kind byte, p Partition, last ID) string {
	var raw [cursorRawLen]byte
	raw[0] = cursorVersion
	raw[1] = kind
	copy(raw[2:18], last[:])
	copy(raw[18:], db.cursorMAC(p, raw[:18]))
	return base64.RawURLEncoding.EncodeToString(raw[:])
}

// DecodeCursor checks and parses a cursor of the given kind for partition p. It
// returns an EINVALID error for anything that is not such a cursor, signature included.
func (db *DB) DecodeCursor(kind byte, p Partition, s string) (ID, error) {
	bad := Invalid(FieldError{Loc: []any{"cursor"}, Msg: "Cursor is not valid; pass the X-Next-Cursor value of the previous page unchanged.", Type: "cursor_invalid"})
	if len(s) != base64.RawURLEncoding.EncodedLen(cursorRawLen) {
		return ID{}, bad
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(raw) != cursorRawLen || raw[0] != cursorVersion || raw[1] != kind {
		return ID{}, bad
	}
	if !hmac.Equal(raw[18:], db.cursorMAC(p, raw[:18])) {
		return ID{}, bad
	}
	if base64.RawURLEncoding.EncodeToString(raw) != s { // one spelling per cursor
		return ID{}, bad
	}
	var id ID
	copy(id[:], raw[2:18])
	return id, nil
}

func (db *DB) cursorMAC(p Partition, head []byte) []byte {
	m := hmac.New(sha256.New, db.secret)
	m.Write([]byte("interviewd cursor\x00"))
	m.Write(p.Org[:])
	m.Write([]byte(p.Env))
	m.Write([]byte{0})
	m.Write(head)
	return m.Sum(nil)[:cursorMACLen]
}

// pageNewest walks the keys under prefix (each prefix + 16-byte id) from newest to
// oldest, starting just below after (or at the newest when after is nil), and calls
// take for each value until take has accepted limit+1 rows. take appends what it
// accepts; the caller keeps the first limit. more reports whether a row beyond them was
// found, and last is the id of the limit-th accepted row. Keyset paging: rows inserted
// meanwhile never shift a page.
func pageNewest(b Bucket, prefix []byte, after *ID, limit int, take func(v []byte) (bool, error)) (more bool, last ID, err error) {
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
