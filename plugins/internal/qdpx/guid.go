package qdpx

import (
	"crypto/sha1"
	"encoding/hex"
)

// namespace seeds every GUID of a project (UUID version 5 style: SHA-1 of a namespace
// and a name). It is fixed, so the same analysis always gives the same GUIDs, and a
// code, source or selection keeps its GUID from one export to the next.
var namespace = [16]byte{0x6b, 0x1d, 0x3c, 0x52, 0x8e, 0x0f, 0x4a, 0x7d, 0x9b, 0x21, 0x5e, 0x44, 0xc3, 0x90, 0x1f, 0xa6}

// guid returns a deterministic UUID-shaped GUID for the parts, which together name one
// object of the project (the study's id is always the first, so two studies never
// share a GUID).
func guid(parts ...string) string {
	h := sha1.New()
	h.Write(namespace[:])
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0}) // a separator no part holds, so ("ab","c") differs from ("a","bc")
	}
	var u [16]byte
	copy(u[:], h.Sum(nil))
	u[6] = u[6]&0x0f | 0x50 // version 5: name-based, SHA-1
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:36], u[10:16])
	return string(b[:])
}
