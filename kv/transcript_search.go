package kv

import (
	"bytes"
	"context"
	"crypto/hmac"
	"encoding/base64"
	"encoding/binary"
)

// Searching a study's transcripts is a scan: the interviews of the partition in the
// order they started, the study's ones read message by message, each message offered
// to the caller's matcher. There is no index to keep in step with appends and
// erasures; instead every page reads at most TranscriptSearch.Budget messages and
// stops with a cursor there, so one request costs the same however large the study
// is, and a large study is searched over several pages.

// TranscriptSearch is one page of a search of a study's transcripts.
type TranscriptSearch struct {
	Partition Partition
	StudyID   ID
	// Match reports whether a message is a hit.
	Match  func(speaker, text string) bool
	Limit  int    // hits in a page
	Budget int    // messages (and interview records) read in a page at most
	Cursor string // where the previous page stopped; "" from the start
}

// SearchHit is a message that matched.
type SearchHit struct {
	InterviewID  ID
	IsTest       bool
	MessageIndex int
	Speaker      string
	Text         string
}

// searchCursorLen: version, kind, interview id, the next message index to read, MAC.
const searchCursorLen = 2 + 16 + 4 + cursorMACLen

const cursorSearch byte = 'q'

func (db *DB) searchCursorMAC(p Partition, study ID, head []byte) []byte {
	return db.cursorMAC(p, append(append([]byte(nil), head...), study[:]...))
}

func (db *DB) encodeSearchCursor(p Partition, study, iv ID, msg int) string {
	var raw [searchCursorLen]byte
	raw[0], raw[1] = cursorVersion, cursorSearch
	copy(raw[2:18], iv[:])
	binary.BigEndian.PutUint32(raw[18:22], uint32(msg))
	copy(raw[22:], db.searchCursorMAC(p, study, raw[:22]))
	return base64.RawURLEncoding.EncodeToString(raw[:])
}

func (db *DB) decodeSearchCursor(p Partition, study ID, s string) (ID, int, error) {
	bad := Invalid(FieldError{Loc: []any{"cursor"}, Msg: "Cursor is not valid; pass the next_cursor of the previous page of the same search unchanged.", Type: "cursor_invalid"})
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(raw) != searchCursorLen || raw[0] != cursorVersion || raw[1] != cursorSearch ||
		!hmac.Equal(raw[22:], db.searchCursorMAC(p, study, raw[:22])) || base64.RawURLEncoding.EncodeToString(raw) != s {
		return ID{}, 0, bad
	}
	var id ID
	copy(id[:], raw[2:18])
	return id, int(binary.BigEndian.Uint32(raw[18:22])), nil
}

// SearchTranscripts returns one page of the messages of the study's interviews that
// match, and the cursor of the next page ("" when the search has reached the end).
// A page may hold fewer hits than Limit, even none, and still have a next page: it
// stopped at its budget. ENOTFOUND for a study outside the partition; EINVALID for a
// malformed cursor.
func (db *DB) SearchTranscripts(ctx context.Context, s TranscriptSearch) ([]SearchHit, string, error) {
	var (
		from    ID
		fromMsg int // the next message of interview from to read
	)
	if s.Cursor != "" {
		var err error
		if from, fromMsg, err = db.decodeSearchCursor(s.Partition, s.StudyID, s.Cursor); err != nil {
			return nil, "", err
		}
	}
	var hits []SearchHit
	next := ""
	err := db.view(ctx, func(tx Tx) error {
		hits, next = nil, ""
		if _, err := studyByID(tx, s.Partition, s.StudyID); err != nil {
			return err
		}
		prefix := s.Partition.prefix()
		read, examined := 0, 0 // a page examines one message at least, so paging always moves on
		ivc := tx.Bucket(bucketInterviews).Cursor()
		start := s.Partition.key(from)
		for k, v := ivc.Seek(start); k != nil && len(k) == len(prefix)+16 && bytes.HasPrefix(k, prefix); k, v = ivc.Next() {
			if err := ctx.Err(); err != nil {
				return err
			}
			var id ID
			copy(id[:], k[len(prefix):])
			first := 0
			if id == from {
				first = fromMsg
			}
			read++
			if read > s.Budget {
				next = db.encodeSearchCursor(s.Partition, s.StudyID, id, first)
				return nil
			}
			var iv Interview
			if err := jsonUnmarshal(v, &iv); err != nil {
				return err
			}
			if iv.StudyID != s.StudyID {
				continue
			}
			tc := tx.Bucket(bucketTranscripts).Cursor()
			for mk, mv := tc.Seek(transcriptKey(id, first)); mk != nil && bytes.HasPrefix(mk, id[:]); mk, mv = tc.Next() {
				idx := int(binary.BigEndian.Uint32(mk[16:]))
				read++
				if read > s.Budget && examined > 0 {
					next = db.encodeSearchCursor(s.Partition, s.StudyID, id, idx)
					return nil
				}
				examined++
				var m Message
				if err := jsonUnmarshal(mv, &m); err != nil {
					return err
				}
				if !s.Match(m.Speaker, m.Text) {
					continue
				}
				hits = append(hits, SearchHit{InterviewID: id, IsTest: iv.IsTest, MessageIndex: idx, Speaker: m.Speaker, Text: m.Text})
				if len(hits) == s.Limit {
					next = db.encodeSearchCursor(s.Partition, s.StudyID, id, idx+1)
					return nil
				}
			}
		}
		return nil
	})
	return hits, next, err
}

// InterviewNeighbours returns the interviews of the same study that started just
// before and just after the interview (nil at either end), its position among the
// study's interviews in the partition (from 1) and how many there are. It reads every
// interview record of the partition: a page's cost, like the interviews list's filter.
// ENOTFOUND for an interview outside the partition.
func (db *DB) InterviewNeighbours(ctx context.Context, p Partition, id ID) (prev, next *ID, at, of int, err error) {
	err = db.view(ctx, func(tx Tx) error {
		prev, next, at, of = nil, nil, 0, 0
		iv, err := interviewByID(tx, p, id)
		if err != nil {
			return err
		}
		prefix := p.prefix()
		c := tx.Bucket(bucketInterviews).Cursor()
		var last *ID
		for k, v := c.Seek(prefix); k != nil && len(k) == len(prefix)+16 && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			var other struct {
				StudyID ID `json:"study_id"`
			}
			if err := jsonUnmarshal(v, &other); err != nil {
				return err
			}
			if other.StudyID != iv.StudyID {
				continue
			}
			var cur ID
			copy(cur[:], k[len(prefix):])
			of++
			switch {
			case cur == id:
				at, prev = of, last
			case at > 0 && next == nil:
				next = &cur
			}
			last = &cur
		}
		return nil
	})
	return prev, next, at, of, err
}
