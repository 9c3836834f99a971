package kv

import (
	"bytes"
	"context"
	"crypto/sha256"

	json "github.com/goccy/go-json"
)

// A participant's first request starts an interview and stores its opening, inside the
// shared commit that every other writer waits for. Decoding the link and the study,
// building the interview, asking for its opening and encoding it all depend only on
// the link and the study records, so they are done before the commit, in a read
// transaction; the commit then checks that both records are still byte for byte the
// ones read, that the sessions are still unknown to the link, spends the credit, and
// writes the prepared bytes. An open that continues an interview writes nothing, so
// the read finds it and there is no commit at all. Anything else (a paused or closed
// study, a record that moved in between, an error) goes through openLink inside the
// commit as before.

// preparedOpening is a new interview of a link with its opening turn, ready to store.
type preparedOpening struct {
	token             string
	linkRaw, studyRaw []byte // the stored link and study it was prepared from
	studyKey          []byte
	before            Opened // the link and the study as read
	opened            Opened // the outcome once stored (without the credit)
	// sessions are the hashes that must still be unknown to a group or plain link: the
	// session the interview is started for and the one the request presented.
	sessions [][32]byte
	hash     [32]byte // the session's
	link     []byte   // a person link claimed by the interview, encoded; nil otherwise
	record   []byte   // the interview after its opening, encoded
	messages [][]byte // the opening's messages, encoded, from transcript position 0
	charge   bool     // a live interview in the live environment: it spends a credit
	// conv is the conversation its session will read once it is stored, decoded from
	// the bytes stored, for the conversation cache (cacheOnCommit).
	conv Conversation
	// resumed is set instead of all the above when the open continues an interview.
	resumed *Opened
}

// prepareOpening prepares the interview that opening token for presented would start,
// with fresh as its session, or, when presented continues an interview, finds it
// (resumed): that open writes nothing, so it needs no commit at all. It returns nil when
// the open would do anything else (or the records cannot be read): the commit then does
// it all.
func (db *DB) prepareOpening(ctx context.Context, token, presented, fresh string, consented bool, open Opening) *preparedOpening {
	p := &preparedOpening{token: token, hash: sha256.Sum256([]byte(fresh))}
	var presentedHash [32]byte
	if presented != "" {
		presentedHash = sha256.Sum256([]byte(presented))
	}
	err := db.view(ctx, func(tx Tx) error {
		p.linkRaw = bytes.Clone(tx.Bucket(bucketLinks).Get([]byte(token)))
		if p.linkRaw == nil || jsonUnmarshal(p.linkRaw, &p.before.Link) != nil {
			return errNotPrepared
		}
		l := p.before.Link
		if presented != "" {
			if resumed, ok := resumedInterview(tx, token, presented, presentedHash, l); ok {
				p.resumed = resumed
				return nil
			}
		}
		if open == nil || fresh == "" || l.Disabled {
			return errNotPrepared
		}
		if l.Audience == AudiencePerson {
			if l.InterviewID != nil { // its interview continues
				return errNotPrepared
			}
		} else {
			sb := tx.Bucket(bucketSessions)
			p.sessions = append(p.sessions, p.hash)
			if presented != "" {
				p.sessions = append(p.sessions, presentedHash)
			}
			for _, h := range p.sessions {
				if sb.Get(sessionKey(token, h)) != nil { // a session it knows: resumed
					return errNotPrepared
				}
			}
		}
		lp := Partition{Org: l.OrgID, Env: l.Env}
		p.studyKey = lp.key(l.StudyID)
		p.studyRaw = bytes.Clone(tx.Bucket(bucketStudies).Get(p.studyKey))
		if p.studyRaw == nil || jsonUnmarshal(p.studyRaw, &p.before.Study) != nil {
			return errNotPrepared
		}
		return nil
	})
	if err != nil {
		return nil
	}
	if p.resumed != nil {
		return p
	}
	l, st := p.before.Link, p.before.Study
	if st.Mode == ModePaused || st.Mode == ModeClosed {
		return nil
	}
	if !consented && st.ParticipantSettings().ConsentText != "" {
		// No consent, no interview: an answer that writes nothing needs no commit.
		p.resumed = &Opened{State: LinkConsentRequired, Link: l, Study: st, Session: fresh}
		return p
	}
	isTest := st.Mode == ModeTest
	p.charge = !isTest && l.Env == EnvLive
	iv := db.newLinkInterview(token, l, st, isTest, consented)
	if l.Audience == AudiencePerson {
		l.InterviewID = &iv.ID
		if p.link, err = json.Marshal(l); err != nil {
			return nil
		}
	}
	p.opened = Opened{State: LinkOpen, Link: l, Study: st, Interview: &iv, Started: true, Session: fresh}
	if st.Brief != nil {
		p.opened.Brief = st.Brief.Normalised()
	}
	t := open(p.opened.Brief, iv, l)
	if validTurn(t) != nil {
		return nil
	}
	after, messages, err := db.applyTurn(iv, t)
	if err != nil {
		return nil
	}
	if p.record, err = marshalInterview(after); err != nil {
		return nil
	}
	p.opened.Interview, p.opened.Opening, p.messages = &after, t.Messages, messages
	p.conv = Conversation{Link: p.before.Link, Brief: p.opened.Brief, record: p.record}
	if p.link != nil && jsonUnmarshal(p.link, &p.conv.Link) != nil || jsonUnmarshal(p.record, &p.conv.Interview) != nil {
		p.conv = Conversation{} // not cached
	}
	return p
}

// resumedInterview is openLink for a session the link knows, as a read: a group or
// plain link's session of an interview it still holds, or a session of a person link's
// interview (which openLink only records again). It returns false when the link does
// not know the session or anything is amiss: the commit then does it all, errors
// included.
func resumedInterview(tx Tx, token, session string, hash [32]byte, l Link) (*Opened, bool) {
	var id ID
	switch {
	case l.Audience == AudiencePerson:
		if l.InterviewID == nil || !sessionMatches(tx, *l.InterviewID, hash) {
			return nil, false
		}
		id = *l.InterviewID
	default:
		raw := tx.Bucket(bucketSessions).Get(sessionKey(token, hash))
		if len(raw) != len(id) {
			return nil, false
		}
		copy(id[:], raw)
	}
	p := Partition{Org: l.OrgID, Env: l.Env}
	st, err := studyByID(tx, p, l.StudyID)
	if err != nil {
		return nil, false
	}
	iv, err := interviewByID(tx, p, id)
	if err != nil {
		return nil, false
	}
	return &Opened{State: LinkOpen, Link: l, Study: st, Interview: &iv, Session: session}, true
}

// errNotPrepared ends prepareOpening's read: the open is left to the commit.
var errNotPrepared = Errorf(ECONFLICT, "not_prepared", "not prepared")

// storePrepared stores p in tx and returns the outcome, or false when the link, the
// study or the link's sessions are no longer what p was prepared from.
func (db *DB) storePrepared(tx Tx, p *preparedOpening) (Opened, bool, error) {
	if !bytes.Equal(tx.Bucket(bucketLinks).Get([]byte(p.token)), p.linkRaw) ||
		!bytes.Equal(tx.Bucket(bucketStudies).Get(p.studyKey), p.studyRaw) {
		return Opened{}, false, nil
	}
	sb := tx.Bucket(bucketSessions)
	for _, h := range p.sessions {
		if sb.Get(sessionKey(p.token, h)) != nil {
			return Opened{}, false, nil
		}
	}
	out := p.opened
	if p.charge {
		org, err := orgByID(tx, p.before.Link.OrgID)
		if err != nil {
			return Opened{}, true, err
		}
		if org.Credits < 1 {
			return Opened{State: LinkUnavailable, Link: p.before.Link, Study: p.before.Study, Session: out.Session}, true, nil
		}
		if out.CreditAlert, err = db.spendCredit(tx, &org, p.before.Study, out.Interview.ID); err != nil {
			return Opened{}, true, err
		}
		out.SpentCredit, out.CreditsLeft = true, org.Credits
	}
	iv := out.Interview
	if err := tx.Bucket(bucketInterviews).Put(iv.Partition().key(iv.ID), p.record); err != nil {
		return Opened{}, true, err
	}
	if err := interviewStarted(tx, *iv, db.Now()); err != nil {
		return Opened{}, true, err
	}
	if err := wantAnalysis(tx, *iv, db.Now()); err != nil { // a design with no questions completes at once
		return Opened{}, true, err
	}
	if err := db.interviewStored(tx, *iv); err != nil {
		return Opened{}, true, err
	}
	if p.link != nil {
		if err := tx.Bucket(bucketLinks).Put([]byte(p.token), p.link); err != nil {
			return Opened{}, true, err
		}
	} else if err := sb.Put(sessionKey(p.token, p.hash), iv.ID[:]); err != nil {
		return Opened{}, true, err
	}
	if err := sb.Put(interviewSessionKey(iv.ID, p.hash), []byte{1}); err != nil {
		return Opened{}, true, err
	}
	tb := tx.Bucket(bucketTranscripts)
	for i, m := range p.messages {
		if err := tb.Put(transcriptKey(iv.ID, i), m); err != nil {
			return Opened{}, true, err
		}
	}
	if p.conv.record != nil {
		cacheOnCommit(tx, p.token, out.Session, p.hash, p.conv)
	}
	return out, true, nil
}
