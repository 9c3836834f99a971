package kv

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"strings"
	"time"
)

// MaxGap caps each gap between consecutive messages when measuring an interview's
// duration: a longer silence is a pause, not participant time.
const MaxGap = 120 * time.Second

// Message is one line of an interview's transcript. Transcripts never leave the service
// except to the participant who is having the conversation and in redacted exports.
type Message struct {
	Speaker string    `json:"speaker"`
	Text    string    `json:"text"`
	At      time.Time `json:"at"`
}

// transcriptKey is the interview id and the message's 0-based position, big-endian, so
// a cursor walks a transcript in order and appending never rewrites earlier messages.
func transcriptKey(id ID, seq int) []byte {
	k := make([]byte, 20)
	copy(k, id[:])
	binary.BigEndian.PutUint32(k[16:], uint32(seq))
	return k
}

func transcriptOf(tx Tx, id ID, n int) ([]Message, error) {
	out := make([]Message, 0, n)
	c := tx.Bucket(bucketTranscripts).Cursor()
	for k, v := c.Seek(id[:]); k != nil && bytes.HasPrefix(k, id[:]); k, v = c.Next() {
		var m Message
		if err := jsonUnmarshal(v, &m); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// FindTranscript returns an interview's messages in the order they were said, for an
// interview in partition p. ENOTFOUND for an interview outside the partition.
func (db *DB) FindTranscript(ctx context.Context, p Partition, id ID) ([]Message, error) {
	var out []Message
	err := db.view(ctx, func(tx Tx) error {
		iv, err := interviewByID(tx, p, id)
		if err != nil {
			return err
		}
		out, err = transcriptOf(tx, iv.ID, iv.TranscriptLen)
		return err
	})
	return out, err
}

// Conversation is what one participant session may see and continue: the link it came
// through (whose note is for the interviewer only), the interview, its transcript so far
// and the design version the interview started with.
type Conversation struct {
	Link       Link
	Interview  Interview
	Transcript []Message
	Brief      Brief
	// record is the stored interview Interview was decoded from: CurrentConversation
	// compares the store with it, and AppendTurnTo prepares the turn from it instead of
	// reading and decoding the interview again.
	record []byte
	// head: read without the transcript (FindConversationHead).
	head bool
	// token and session it was read through, and the session's hash, so that a turn
	// hashes its session once.
	token, session string
	hash           [32]byte
}

// sessionHash returns the hash of session, from conv when conv was read through the
// same token and session.
func (conv *Conversation) sessionHash(token, session string) [32]byte {
	if conv.session == "" || conv.session != session || conv.token != token {
		return sha256.Sum256([]byte(session))
	}
	return conv.hash
}

// errInvalidSession is the answer to a session that is not one of the link's interview.
func errInvalidSession() *Error {
	return Errorf(EUNAUTHORIZED, "invalid_session", "This session does not belong to an interview of this link; open the link again.")
}

// FindConversation returns the interview that session continues through the link
// token, with its transcript and the brief of the version it started with (a study
// refined since keeps the interview on its old version). ENOTFOUND for an unknown token;
// EUNAUTHORIZED (reason invalid_session) when session is empty or not a session of the
// link's interview.
func (db *DB) FindConversation(ctx context.Context, token, session string) (Conversation, error) {
	return db.findConversation(ctx, token, session, false)
}

// FindConversationHead is FindConversation without the transcript (Transcript is nil;
// Interview.TranscriptLen is its length): a turn whose interviewer does not read what
// was said before need not decode all of it. Errors as FindConversation.
func (db *DB) FindConversationHead(ctx context.Context, token, session string) (Conversation, error) {
	return db.findConversation(ctx, token, session, true)
}

func (db *DB) findConversation(ctx context.Context, token, session string, head bool) (Conversation, error) {
	if head && db.cache.conversations != nil && session != "" && strings.IndexByte(token, 0) < 0 { // see convID
		return db.cachedConversationHead(ctx, token, session)
	}
	var out Conversation
	err := db.view(ctx, func(tx Tx) error {
		var err error
		out, err = db.readConversation(tx, token, session, sha256.Sum256([]byte(session)), head)
		return err
	})
	return out, err
}

// cachedConversationHead is findConversation of a head through the conversation
// cache: a hit reads nothing, a miss reads the store, recording what it reads, and
// caches what it read unless a commit wrote any of it meanwhile.
func (db *DB) cachedConversationHead(ctx context.Context, token, session string) (Conversation, error) {
	if err := ctx.Err(); err != nil {
		return Conversation{}, err
	}
	id := convID(token, session)
	if conv, ok := db.cache.conversations.get(id); ok {
		return conv, nil // it carries the session's hash, made on the miss that cached it
	}
	hash := sha256.Sum256([]byte(session))
	gen := db.cache.conversations.generation()
	var (
		out Conversation
		rec recordingTx
	)
	err := db.view(ctx, func(tx Tx) error {
		rec = recordingTx{Tx: tx}
		var err error
		out, err = db.readConversation(&rec, token, session, hash, true)
		return err
	})
	if err == nil && !rec.uncacheable {
		p := out.Interview.Partition()
		db.cache.conversations.put(id, out, rec.keys, depKey(bucketInterviews, p.key(out.Interview.ID)), gen)
	}
	return out, err
}

// readConversation is findConversation's read, in tx.
func (db *DB) readConversation(tx Tx, token, session string, hash [32]byte, head bool) (Conversation, error) {
	out := Conversation{head: head, token: token, session: session, hash: hash}
	var (
		id  ID
		err error
	)
	if out.Link, id, err = sessionInterviewHash(tx, token, session, hash); err != nil {
		return Conversation{}, err
	}
	p := Partition{Org: out.Link.OrgID, Env: out.Link.Env}
	raw := tx.Bucket(bucketInterviews).Get(p.key(id))
	if raw == nil {
		return Conversation{}, notFound("Interview")
	}
	if err := jsonUnmarshal(raw, &out.Interview); err != nil {
		return Conversation{}, fmt.Errorf("decode record %x: %w", p.key(id), err)
	}
	out.record = bytes.Clone(raw)
	if !head {
		if out.Transcript, err = transcriptOf(tx, id, out.Interview.TranscriptLen); err != nil {
			return Conversation{}, err
		}
	}
	out.Brief, err = db.conversationBrief(tx, p, out.Interview.StudyID, out.Interview.DesignVersion)
	if ErrorCode(err) == ENOTFOUND {
		// A record without its version (none is written that way): the current brief.
		st, err := studyByID(tx, p, out.Interview.StudyID)
		if err != nil {
			return Conversation{}, err
		}
		out.Brief = Brief{}
		if st.Brief != nil {
			out.Brief = st.Brief.Normalised()
		}
		return out, nil
	}
	if err != nil {
		return Conversation{}, err
	}
	return out, nil
}

// CurrentConversation returns conv, read earlier through token and session, when its
// interview is still stored exactly as conv read it, and otherwise reads the
// conversation again (with its transcript unless conv was a head). A turn that waited
// for its interview's previous turn checks with one record read that nothing moved.
// Errors as FindConversation.
func (db *DB) CurrentConversation(ctx context.Context, token, session string, conv Conversation) (Conversation, error) {
	if conv.record != nil && db.cache.conversations != nil {
		if db.cache.conversations.holds(convID(token, session), conv.record) {
			return conv, nil // the cache holds exactly the committed record
		}
	}
	if conv.record != nil {
		var same bool
		err := db.view(ctx, func(tx Tx) error {
			key := conv.Interview.Partition().key(conv.Interview.ID)
			same = bytes.Equal(tx.Bucket(bucketInterviews).Get(key), conv.record)
			return nil
		})
		if err != nil {
			return Conversation{}, err
		}
		if same {
			return conv, nil
		}
	}
	return db.findConversation(ctx, token, session, conv.head)
}

// FindSessionInterview returns the id of the interview session continues through the
// link token, reading nothing else: a cheap check before the full conversation is read.
// Errors as FindConversation.
func (db *DB) FindSessionInterview(ctx context.Context, token, session string) (ID, error) {
	var id ID
	err := db.view(ctx, func(tx Tx) error {
		var err error
		_, id, err = sessionInterview(tx, token, session)
		return err
	})
	return id, err
}

// sessionInterview returns the link and the id of the interview that session may see
// through it.
func sessionInterview(tx Tx, token, session string) (Link, ID, error) {
	return sessionInterviewHash(tx, token, session, sha256.Sum256([]byte(session)))
}

// sessionInterviewHash is sessionInterview with the session's hash already made.
func sessionInterviewHash(tx Tx, token, session string, hash [32]byte) (Link, ID, error) {
	var (
		l  Link
		id ID
	)
	ok, err := getJSON(tx.Bucket(bucketLinks), []byte(token), &l)
	if err != nil {
		return Link{}, id, err
	}
	if !ok {
		return Link{}, id, notFound("Link")
	}
	if session == "" {
		return Link{}, id, errInvalidSession()
	}
	switch {
	case l.Audience == AudiencePerson && l.InterviewID != nil:
		id = *l.InterviewID
	case l.Audience != AudiencePerson:
		raw := tx.Bucket(bucketSessions).Get(sessionKey(token, hash))
		if len(raw) != len(id) {
			return Link{}, id, errInvalidSession()
		}
		copy(id[:], raw)
	default:
		return Link{}, id, errInvalidSession()
	}
	if !sessionMatches(tx, id, hash) {
		return Link{}, ID{}, errInvalidSession()
	}
	return l, id, nil
}

// Turn is one exchange appended to an interview in one transaction.
type Turn struct {
	// Session must be a session of the interview.
	Session string
	// ExpectLen is the transcript length the caller based the turn on; if another turn
	// landed since, the append is refused rather than interleaved.
	ExpectLen int
	// Messages are appended in order; their At times measure the duration.
	Messages []Message
	// Script is the interview's new position (nil keeps the old one).
	Script []byte
	// Status is the interview's status after the turn.
	Status string
	// Voice marks a spoken answer: the interview's modality becomes voice for good.
	Voice bool
	// CompletionCode, on a turn that completes the interview, is stored with it (see
	// Interview.CompletionCode); ignored on any other turn.
	CompletionCode string
}

// AppendTurn appends a turn's messages to an interview in partition p and, in the same
// transaction, stores its script position, last_message_at, duration_seconds (the sum of
// the gaps between consecutive messages, each capped at MaxGap, set once the participant
// has answered), modality and status (completed_at when it completes). It returns the
// updated interview. EUNAUTHORIZED (invalid_session) when t.Session is not a session of
// the interview; ECONFLICT interview_finished when it is no longer in progress and
// transcript_moved when its transcript is no longer t.ExpectLen long; EINVALID for an
// unknown status or speaker; ENOTFOUND for an interview outside p.
func (db *DB) AppendTurn(ctx context.Context, p Partition, id ID, t Turn) (Interview, error) {
	if err := validTurn(t); err != nil {
		return Interview{}, err
	}
	// The turn is prepared outside the shared commit, on the interview as it stands now:
	// decoding it, applying the turn and encoding the result are most of a turn's
	// storage work, and inside the commit they would run on the one writer every other
	// writer waits for. The commit then only checks that the stored record is still
	// byte for byte the one prepared from and writes the prepared bytes; if the
	// interview moved in between, the turn is applied inside the commit as usual.
	iv, _, err := db.appendTurn(ctx, p, id, t, sha256.Sum256([]byte(t.Session)), db.prepareTurn(ctx, p, id, t))
	return iv, err
}

// AppendTurnTo is AppendTurn on conv's interview, prepared from the interview as conv
// read it (no read, no decode); if the interview moved since, the turn is applied to it
// as it stands, with AppendTurn's checks. On success conv's interview is the one after
// the turn (its transcript is left to the caller). Errors as AppendTurn.
func (db *DB) AppendTurnTo(ctx context.Context, conv *Conversation, t Turn) (Interview, error) {
	if err := validTurn(t); err != nil {
		return Interview{}, err
	}
	var prep *preparedTurn
	if conv.record != nil {
		prep = db.prepareFrom(conv.record, conv.Interview, t)
	}
	hash := conv.sessionHash(conv.token, t.Session)
	iv, record, err := db.appendTurn(ctx, conv.Interview.Partition(), conv.Interview.ID, t, hash, prep)
	if err != nil {
		return Interview{}, err
	}
	conv.Interview, conv.record = iv, record
	return iv, nil
}

// validTurn refuses a turn with an unknown status or speaker.
func validTurn(t Turn) error {
	switch t.Status {
	case InterviewInProgress, InterviewCompleted, InterviewFailed:
	default:
		return Errorf(EINVALID, "status", "Unknown interview status "+t.Status+".")
	}
	for _, m := range t.Messages {
		if m.Speaker != SpeakerInterviewer && m.Speaker != SpeakerParticipant {
			return Errorf(EINVALID, "speaker", "Unknown speaker "+m.Speaker+".")
		}
	}
	return nil
}

// appendTurn commits t (hash is its session's hash), from prep when the interview is still what prep was made from
// (prep may be nil). It returns the interview after the turn and its stored record.
func (db *DB) appendTurn(ctx context.Context, p Partition, id ID, t Turn, hash [32]byte, prep *preparedTurn) (Interview, []byte, error) {
	var (
		out    Interview
		record []byte
	)
	err := db.update(ctx, func(tx Tx) error {
		b := tx.Bucket(bucketInterviews)
		if prep != nil && bytes.Equal(b.Get(p.key(id)), prep.base) {
			if err := checkTurn(tx, id, hash, t, prep.from); err != nil {
				return err
			}
			tb := tx.Bucket(bucketTranscripts)
			for i, m := range prep.messages {
				if err := tb.Put(transcriptKey(id, prep.from.TranscriptLen+i), m); err != nil {
					return err
				}
			}
			out, record = prep.to, prep.record
			if err := b.Put(p.key(id), prep.record); err != nil {
				return err
			}
			if err := wantAnalysis(tx, out, db.Now()); err != nil {
				return err
			}
			if err := db.interviewStored(tx, out); err != nil {
				return err
			}
			throughInterview(tx, p.key(id), out, record)
			return nil
		}
		iv, err := interviewByID(tx, p, id)
		if err != nil {
			return err
		}
		if err := checkTurn(tx, id, hash, t, iv); err != nil {
			return err
		}
		next, messages, err := db.applyTurn(iv, t)
		if err != nil {
			return err
		}
		tb := tx.Bucket(bucketTranscripts)
		for i, m := range messages {
			if err := tb.Put(transcriptKey(id, iv.TranscriptLen+i), m); err != nil {
				return err
			}
		}
		raw, err := marshalInterview(next)
		if err != nil {
			return err
		}
		out, record = next, raw
		if err := b.Put(p.key(id), raw); err != nil {
			return err
		}
		if err := wantAnalysis(tx, out, db.Now()); err != nil {
			return err
		}
		if err := db.interviewStored(tx, out); err != nil {
			return err
		}
		throughInterview(tx, p.key(id), out, record)
		return nil
	})
	return out, record, err
}

// preparedTurn is a turn applied to the interview record base, ready to be written.
type preparedTurn struct {
	base     []byte    // the stored interview it was prepared from
	from, to Interview // before and after the turn
	messages [][]byte  // the encoded messages, from transcript position from.TranscriptLen
	record   []byte    // to, encoded
}

// prepareTurn applies t to the interview as stored now, or returns nil when it cannot
// (no such interview, a record that does not decode): the commit then does it all.
func (db *DB) prepareTurn(ctx context.Context, p Partition, id ID, t Turn) *preparedTurn {
	var base []byte
	err := db.view(ctx, func(tx Tx) error {
		base = bytes.Clone(tx.Bucket(bucketInterviews).Get(p.key(id)))
		return nil
	})
	if err != nil || base == nil {
		return nil
	}
	var from Interview
	if jsonUnmarshal(base, &from) != nil {
		return nil
	}
	return db.prepareFrom(base, from, t)
}

// prepareFrom applies t to from, decoded from the stored record base, or returns nil
// when it cannot.
func (db *DB) prepareFrom(base []byte, from Interview, t Turn) *preparedTurn {
	to, messages, err := db.applyTurn(from, t)
	if err != nil {
		return nil
	}
	record, err := marshalInterview(to)
	if err != nil {
		return nil
	}
	return &preparedTurn{base: base, from: from, to: to, messages: messages, record: record}
}

// checkTurn refuses a turn that may not be appended to iv: a session not of the
// interview, an interview no longer in progress, a transcript that moved.
func checkTurn(tx Tx, id ID, hash [32]byte, t Turn, iv Interview) error {
	if t.Session == "" || !sessionMatches(tx, id, hash) {
		return errInvalidSession()
	}
	if iv.Status != InterviewInProgress {
		return Errorf(ECONFLICT, "interview_finished", "This interview has finished.")
	}
	if iv.TranscriptLen != t.ExpectLen {
		return Errorf(ECONFLICT, "transcript_moved", "The conversation moved on in the meantime; reload it and try again.")
	}
	return nil
}

// applyTurn returns iv after the turn and the turn's messages encoded, in order.
func (db *DB) applyTurn(iv Interview, t Turn) (Interview, [][]byte, error) {
	messages := make([][]byte, 0, len(t.Messages))
	for _, m := range t.Messages {
		m.At = m.At.UTC()
		raw, err := marshalMessage(m)
		if err != nil {
			return Interview{}, nil, err
		}
		messages = append(messages, raw)
		iv.TranscriptLen++
		if iv.LastMessageAt != nil {
			gap := min(max(m.At.Sub(*iv.LastMessageAt), 0), MaxGap)
			iv.ActiveMS += gap.Milliseconds()
		}
		at := m.At
		iv.LastMessageAt = &at
		if m.Speaker == SpeakerParticipant || iv.DurationSeconds != nil {
			secs := int((iv.ActiveMS + 500) / 1000)
			iv.DurationSeconds = &secs
		}
	}
	if t.Script != nil {
		iv.Script = append([]byte(nil), t.Script...)
	}
	if t.Voice {
		iv.Modality = ModalityVoice
	}
	iv.Status = t.Status
	if t.Status == InterviewCompleted {
		done := db.Now()
		if iv.LastMessageAt != nil {
			done = *iv.LastMessageAt
		}
		iv.CompletedAt = &done
		if t.CompletionCode != "" && iv.CompletionCode == "" {
			iv.CompletionCode = t.CompletionCode
		}
	}
	return iv, messages, nil
}
