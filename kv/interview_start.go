package kv

import (
	"context"
	"crypto/sha256"
)

// Why an invite link opened without starting an interview.
const (
	LinkOpen        = "open"
	LinkPaused      = "paused"
	LinkClosed      = "closed"
	LinkUnavailable = "unavailable" // live with no credits left
	// LinkConsentRequired: the study asks for consent before an interview starts and
	// the participant has not given it; nothing was created or spent.
	LinkConsentRequired = "consent_required"
)

// Opened is what opening an invite link found: the link's state and, when open, the
// interview to continue (or the one just started).
type Opened struct {
	State     string
	Link      Link
	Study     Study
	Interview *Interview
	Started   bool // a new interview was created by this call
	// Session is the session secret the link was opened for (ResumeLink).
	Session string
	// Opening is the first turn's messages when ResumeLinkOpening stored them with the
	// interview it started.
	Opening []Message
	// Brief is the normalised brief the Opening was made from (set with Opening).
	Brief Brief
	// SpentCredit is set when this call spent one of the organisation's credits;
	// CreditsLeft is then the balance after it.
	SpentCredit bool
	CreditsLeft int
	// CreditAlert is set when that spend took the balance under the owners' threshold:
	// a low-credit mail is pending (ClaimCreditAlerts).
	CreditAlert bool
}

// ResumeLink opens an invite link like OpenLink, but never for a session a client made
// up: presented (what the request carried, or "") is used only when the store already
// knows it for this link (it opened this group link before, or was added to this person
// link's interview); otherwise the link is opened for fresh, a secret the caller has
// just minted. Opened.Session is the secret in effect. ENOTFOUND for an unknown token.
func (db *DB) ResumeLink(ctx context.Context, token, presented, fresh string) (Opened, error) {
	return db.ResumeLinkOpening(ctx, token, presented, fresh, nil)
}

// Opening returns the first turn of a new interview of brief (the study's design version
// the interview starts with) through link: the interviewer's opening messages. It runs
// while the interview is being created (usually just before the commit that stores it,
// see preparedOpening), so it must be quick and depend on nothing but its arguments (it
// may run more than once).
type Opening func(brief Brief, iv Interview, link Link) Turn

// ResumeLinkOpening is ResumeLink that, when it starts a new interview, also stores
// open's turn for it in the same transaction (nil open: none). Opened.Interview is then
// the interview after that turn, Opened.Opening its messages and Opened.Brief the brief
// they were made from: a participant's first request waits for one commit, not two,
// and need not read the new interview back. EINVALID when open returns a turn
// AppendTurn would refuse.
func (db *DB) ResumeLinkOpening(ctx context.Context, token, presented, fresh string, open Opening) (Opened, error) {
	return db.ResumeLinkConsented(ctx, token, presented, fresh, false, open)
}

// ResumeLinkConsented is ResumeLinkOpening for a participant who has (consented) or
// has not ticked the study's consent. An interview that would start on a study asking
// for consent starts only with it, recording when and to what text in the transaction
// that creates it; without it the answer is LinkConsentRequired and nothing is written.
// An interview already under way continues either way.
func (db *DB) ResumeLinkConsented(ctx context.Context, token, presented, fresh string, consented bool, open Opening) (Opened, error) {
	prep := db.prepareOpening(ctx, token, presented, fresh, consented, open)
	if prep != nil && prep.resumed != nil {
		return *prep.resumed, nil
	}
	var out Opened
	err := db.update(ctx, func(tx Tx) error {
		if prep != nil {
			o, stored, err := db.storePrepared(tx, prep)
			if stored || err != nil {
				out = o
				return err
			}
		}
		session := fresh
		if presented != "" {
			known, err := sessionKnown(tx, token, sha256.Sum256([]byte(presented)))
			if err != nil {
				return err
			}
			if known {
				session = presented
			}
		}
		var err error
		out, err = db.openLink(tx, token, session, true, consented)
		out.Session = session
		if err != nil || open == nil || !out.Started {
			return err
		}
		return db.storeOpening(tx, &out, open)
	})
	return out, err
}

// storeOpening applies open's turn to the interview o has just started.
func (db *DB) storeOpening(tx Tx, o *Opened, open Opening) error {
	var brief Brief
	if o.Study.Brief != nil {
		brief = o.Study.Brief.Normalised()
	}
	t := open(brief, *o.Interview, o.Link)
	if err := validTurn(t); err != nil {
		return err
	}
	iv, messages, err := db.applyTurn(*o.Interview, t)
	if err != nil {
		return err
	}
	tb := tx.Bucket(bucketTranscripts)
	for i, m := range messages {
		if err := tb.Put(transcriptKey(iv.ID, i), m); err != nil {
			return err
		}
	}
	if err := putJSON(tx.Bucket(bucketInterviews), iv.Partition().key(iv.ID), iv); err != nil {
		return err
	}
	if err := wantAnalysis(tx, iv, db.Now()); err != nil { // a design with no questions completes at once
		return err
	}
	if err := db.interviewStored(tx, iv); err != nil {
		return err
	}
	o.Interview, o.Opening, o.Brief = &iv, t.Messages, brief
	return nil
}

// sessionKnown reports whether a session (by hash) belongs to the link: a group or
// plain link's session of one of its interviews, or a session of a person link's
// interview.
func sessionKnown(tx Tx, token string, hash [32]byte) (bool, error) {
	var l Link
	ok, err := getJSON(tx.Bucket(bucketLinks), []byte(token), &l)
	if err != nil || !ok {
		return false, err
	}
	if l.Audience == AudiencePerson {
		return l.InterviewID != nil && sessionMatches(tx, *l.InterviewID, hash), nil
	}
	return tx.Bucket(bucketSessions).Get(sessionKey(token, hash)) != nil, nil
}

// OpenLink opens an invite link for a participant whose session secret is session (a
// random value the caller keeps in a cookie; only its hash is stored). It follows the
// study's mode at this moment: test → a rehearsal interview (is_test, no credits);
// live → a real interview that spends 1 credit at start in the live environment (none
// left → LinkUnavailable and nothing created); paused and closed create nothing.
// A person link's first opener claims its single interview; later opens from any
// session continue it. A group or plain link continues the session's own interview or
// starts a new one. ENOTFOUND for an unknown token.
func (db *DB) OpenLink(ctx context.Context, token, session string) (Opened, error) {
	var out Opened
	err := db.update(ctx, func(tx Tx) error {
		var err error
		out, err = db.openLink(tx, token, session, true, false)
		return err
	})
	return out, err
}

// PeekLink answers what OpenLink would find for session now, changing nothing: no
// interview is created, no credit spent and no session recorded. Interview is set only
// when one already exists for this session (or is the person link's); State is
// LinkOpen with a nil Interview when opening would start one. ENOTFOUND for an unknown
// token.
func (db *DB) PeekLink(ctx context.Context, token, session string) (Opened, error) {
	var out Opened
	err := db.view(ctx, func(tx Tx) error {
		var err error
		out, err = db.openLink(tx, token, session, false, false)
		return err
	})
	return out, err
}

// openLink is OpenLink (create) or PeekLink (!create, in a read-only transaction).
// consented says the participant ticked the study's consent (see ResumeLinkConsented).
func (db *DB) openLink(tx Tx, token, session string, create, consented bool) (Opened, error) {
	var out Opened
	sessionHash := sha256.Sum256([]byte(session))
	ok, err := getJSON(tx.Bucket(bucketLinks), []byte(token), &out.Link)
	if err != nil {
		return Opened{}, err
	}
	if !ok {
		return Opened{}, notFound("Link")
	}
	l := out.Link
	p := Partition{Org: l.OrgID, Env: l.Env}
	if out.Study, err = studyByID(tx, p, l.StudyID); err != nil {
		return Opened{}, err
	}
	// An interview already under way continues whatever the mode now is; through a
	// disabled person link, only for the browsers already in it.
	if l.Audience == AudiencePerson && l.InterviewID != nil && (!l.Disabled || sessionMatches(tx, *l.InterviewID, sessionHash)) {
		iv, err := interviewByID(tx, p, *l.InterviewID)
		if err != nil {
			return Opened{}, err
		}
		if create && session != "" { // this browser or device may now continue it too
			if err := tx.Bucket(bucketSessions).Put(interviewSessionKey(iv.ID, sessionHash), []byte{1}); err != nil {
				return Opened{}, err
			}
		}
		out.State, out.Interview = LinkOpen, &iv
		return out, nil
	}
	if l.Audience != AudiencePerson && session != "" {
		if id := tx.Bucket(bucketSessions).Get(sessionKey(token, sessionHash)); id != nil {
			var ivID ID
			copy(ivID[:], id)
			if iv, err := interviewByID(tx, p, ivID); err == nil {
				out.State, out.Interview = LinkOpen, &iv
				return out, nil
			}
		}
	}
	if l.Disabled { // a disabled link offers no new interview: its page says closed
		out.State = LinkClosed
		return out, nil
	}
	switch out.Study.Mode {
	case ModePaused:
		out.State = LinkPaused
		return out, nil
	case ModeClosed:
		out.State = LinkClosed
		return out, nil
	}
	if create && !consented && out.Study.ParticipantSettings().ConsentText != "" {
		out.State = LinkConsentRequired
		return out, nil
	}
	isTest := out.Study.Mode == ModeTest
	var charge *Org // the organisation to take this interview's credit from
	if !isTest && p.Env == EnvLive {
		org, err := orgByID(tx, p.Org)
		if err != nil {
			return Opened{}, err
		}
		if org.Credits < 1 {
			out.State = LinkUnavailable
			return out, nil
		}
		charge = &org
	}
	if !create {
		out.State = LinkOpen
		return out, nil
	}
	iv := db.newLinkInterview(token, l, out.Study, isTest, consented)
	if charge != nil {
		if out.CreditAlert, err = db.spendCredit(tx, charge, out.Study, iv.ID); err != nil {
			return Opened{}, err
		}
		out.SpentCredit, out.CreditsLeft = true, charge.Credits
	}
	if err := putJSON(tx.Bucket(bucketInterviews), p.key(iv.ID), iv); err != nil {
		return Opened{}, err
	}
	if err := interviewStarted(tx, iv, db.Now()); err != nil {
		return Opened{}, err
	}
	if l.Audience == AudiencePerson {
		l.InterviewID = &iv.ID
		if err := putJSON(tx.Bucket(bucketLinks), []byte(token), l); err != nil {
			return Opened{}, err
		}
		out.Link = l
	} else if err := tx.Bucket(bucketSessions).Put(sessionKey(token, sessionHash), iv.ID[:]); err != nil {
		return Opened{}, err
	}
	if session != "" {
		if err := tx.Bucket(bucketSessions).Put(interviewSessionKey(iv.ID, sessionHash), []byte{1}); err != nil {
			return Opened{}, err
		}
	}
	out.State, out.Interview, out.Started = LinkOpen, &iv, true
	return out, nil
}

// newLinkInterview returns a new interview of study st through link l (stored under
// token), not yet stored; consented records the participant's consent when the study
// asks for one.
func (db *DB) newLinkInterview(token string, l Link, st Study, isTest, consented bool) Interview {
	iv := Interview{
		ID: db.NewID(), OrgID: l.OrgID, Env: l.Env, StudyID: l.StudyID, Status: InterviewInProgress,
		IsTest: isTest, Modality: ModalityText, StartedAt: db.Now(), EntryAttributes: make(map[string]string, len(l.Context)),
		LinkToken: token, DesignVersion: st.Version,
	}
	if text := st.ParticipantSettings().ConsentText; consented && text != "" {
		at := iv.StartedAt
		iv.ConsentedAt, iv.ConsentText = &at, text
	}
	for k, v := range l.Context {
		iv.EntryAttributes[k] = v
	}
	if !l.Plain {
		aud := l.Audience
		if aud == "" {
			aud = AudienceGroup
		}
		iv.InviteAudience = &aud
	}
	return iv
}

func sessionKey(token string, hash [32]byte) []byte {
	return append([]byte("l:"+token+":"), hash[:]...)
}

func interviewSessionKey(id ID, hash [32]byte) []byte {
	return append(append([]byte("i:"), id[:]...), hash[:]...)
}

// sessionMatches reports whether hash is a session of the interview. A plain lookup
// is enough: the key is the SHA-256 of a 256-bit secret, which cannot be guessed.
func sessionMatches(tx Tx, id ID, hash [32]byte) bool {
	return tx.Bucket(bucketSessions).Get(interviewSessionKey(id, hash)) != nil
}
