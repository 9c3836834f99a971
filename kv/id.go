package kv

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"sync"
	"time"
)

// ID is a 16-byte UUID. Listed records use UUIDv7 so byte order is creation order.
type ID [16]byte

// idSource makes UUIDv7 ids that are strictly increasing within the process, even for
// ids made in the same millisecond, so newest-first paging never ties.
type idSource struct {
	mu     sync.Mutex
	lastMS int64
	seq    uint16 // 12-bit counter in rand_a
}

// newV7 returns a UUIDv7 for now: 48-bit unix milliseconds, a 12-bit in-millisecond
// counter (RFC 9562 method 1) and 62 random bits.
func (s *idSource) newV7(now time.Time) ID {
	var id ID
	_, _ = rand.Read(id[6:])
	ms := now.UnixMilli()
	s.mu.Lock()
	if ms <= s.lastMS {
		ms = s.lastMS
		s.seq++
		if s.seq > 0x0fff { // counter exhausted: borrow the next millisecond
			ms++
			s.seq = 0
		}
	} else {
		s.seq = 0
	}
	s.lastMS = ms
	seq := s.seq
	s.mu.Unlock()
	binary.BigEndian.PutUint64(id[0:8], uint64(ms)<<16)
	id[6] = 0x70 | byte(seq>>8)
	id[7] = byte(seq)
	id[8] = 0x80 | (id[8] & 0x3f)
	return id
}

// NewV4 returns a random UUIDv4.
func NewV4() ID {
	var id ID
	_, _ = rand.Read(id[:])
	id[6] = 0x40 | (id[6] & 0x0f)
	id[8] = 0x80 | (id[8] & 0x3f)
	return id
}

// String formats the id as a lower-case hyphenated UUID.
func (id ID) String() string {
	var buf [36]byte
	id.format(&buf)
	return string(buf[:])
}

// format writes the id's string form into buf.
func (id ID) format(buf *[36]byte) {
	hex.Encode(buf[0:8], id[0:4])
	buf[8] = '-'
	hex.Encode(buf[9:13], id[4:6])
	buf[13] = '-'
	hex.Encode(buf[14:18], id[6:8])
	buf[18] = '-'
	hex.Encode(buf[19:23], id[8:10])
	buf[23] = '-'
	hex.Encode(buf[24:], id[10:16])
}

// IsZero reports whether id is the nil UUID.
func (id ID) IsZero() bool { return id == ID{} }

// MarshalText encodes the id as its string form.
func (id ID) MarshalText() ([]byte, error) { return []byte(id.String()), nil }

// UnmarshalText parses a hyphenated UUID; it returns an error for anything else.
func (id *ID) UnmarshalText(b []byte) error {
	v, ok := ParseID(string(b))
	if !ok {
		return &Error{Code: EINVALID, Reason: "uuid_parsing", Message: "not a valid UUID"}
	}
	*id = v
	return nil
}

// ParseID parses a hyphenated UUID string (any version, either case). ok is false for
// anything else.
func ParseID(s string) (ID, bool) {
	var id ID
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return id, false
	}
	j := 0
	for i := 0; i < 36; {
		if s[i] == '-' {
			i++
			continue
		}
		hi, ok1 := unhex(s[i])
		lo, ok2 := unhex(s[i+1])
		if !ok1 || !ok2 {
			return ID{}, false
		}
		id[j] = hi<<4 | lo
		j++
		i += 2
	}
	return id, true
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
