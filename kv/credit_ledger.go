package kv

import (
	"context"
	"time"
)

// The credit ledger: every change of an organisation's balance is a row written in the
// transaction that changes it, so the history always adds up to the balance. A spend is
// one live interview started; a grant is the operator's `interviewd credits add` (or
// the credits an organisation was created with). When a spend takes the balance under
// the threshold an owner set, the same transaction leaves a pending alert that the
// server mails to the owners (ClaimCreditAlerts).

// CreditKind says what moved a balance.
type CreditKind string

const (
	CreditSpend CreditKind = "spend" // a live interview started: -1
	CreditGrant CreditKind = "grant" // credits added (or, negative, taken back) by the operator
)

// CreditEntry is one row of an organisation's credit history.
type CreditEntry struct {
	ID    ID         `json:"id"`
	OrgID ID         `json:"org_id"`
	Kind  CreditKind `json:"kind"`
	// Amount is signed: -1 for a spend, what was added for a grant.
	Amount int `json:"amount"`
	// Balance is the balance right after this row.
	Balance int `json:"balance"`
	// For a spend: the interview it started and its study, named as it was then.
	StudyID     *ID       `json:"study_id,omitempty"`
	StudyName   string    `json:"study_name,omitempty"`
	InterviewID *ID       `json:"interview_id,omitempty"`
	At          time.Time `json:"at"`
}

// CursorCredits is the kind of a credit history cursor.
const CursorCredits byte = 'c'

// MaxCreditAlertBelow bounds the threshold an owner may set.
const MaxCreditAlertBelow = 1_000_000

// creditPartition is the partition credit cursors are signed for: credits belong to the
// organisation and are spent only in the live environment.
func creditPartition(org ID) Partition { return Partition{Org: org, Env: EnvLive} }

// orgRowKey is the key of an organisation's time-ordered row (history, changes).
func orgRowKey(org, id ID) []byte { return append(append([]byte(nil), org[:]...), id[:]...) }

// putCreditEntry appends a row to the organisation's history.
func (db *DB) putCreditEntry(tx Tx, e CreditEntry) error {
	e.ID, e.At = db.NewID(), db.Now()
	return putJSON(tx.Bucket(bucketCreditLedger), orgRowKey(e.OrgID, e.ID), e)
}

// spendCredit takes one credit from org for the live interview iv of study st, writes
// the organisation and its history row, and leaves a pending alert when the balance
// has just fallen under the owners' threshold. It reports whether it did. The caller
// has checked that a credit is left.
func (db *DB) spendCredit(tx Tx, org *Org, st Study, iv ID) (bool, error) {
	before := org.Credits
	org.Credits--
	if err := db.putOrg(tx, *org); err != nil {
		return false, err
	}
	sid, ivID := st.ID, iv
	err := db.putCreditEntry(tx, CreditEntry{OrgID: org.ID, Kind: CreditSpend, Amount: -1, Balance: org.Credits,
		StudyID: &sid, StudyName: st.Name, InterviewID: &ivID})
	if err != nil {
		return false, err
	}
	if t := org.CreditAlertBelow; t <= 0 || before < t || org.Credits >= t {
		return false, nil
	}
	// One pending alert per organisation: a newer crossing (after a grant) replaces it.
	a := creditAlert{Balance: org.Credits, Threshold: org.CreditAlertBelow, At: db.Now()}
	return true, putJSON(tx.Bucket(bucketCreditAlerts), org.ID[:], a)
}

// CreditFilter pages an organisation's credit history, newest first.
type CreditFilter struct {
	OrgID  ID
	Limit  int    // 1..100; 0 means 50
	Cursor string // the Next of the previous page
}

// FindCreditEntries returns a page of the organisation's credit history, newest first.
// EINVALID for a bad cursor.
func (db *DB) FindCreditEntries(ctx context.Context, f CreditFilter) (Page[CreditEntry], error) {
	limit := f.Limit
	if limit <= 0 || limit > 100 {
		limit = 50
	}
	var after *ID
	if f.Cursor != "" {
		id, err := db.DecodeCursor(CursorCredits, creditPartition(f.OrgID), f.Cursor)
		if err != nil {
			return Page[CreditEntry]{}, err
		}
		after = &id
	}
	var page Page[CreditEntry]
	err := db.view(ctx, func(tx Tx) error {
		page = Page[CreditEntry]{Items: []CreditEntry{}}
		more, last, err := pageNewest(tx.Bucket(bucketCreditLedger), f.OrgID[:], after, limit, func(v []byte) (bool, error) {
			var e CreditEntry
			if err := jsonUnmarshal(v, &e); err != nil {
				return false, err
			}
			page.Items = append(page.Items, e)
			return true, nil
		})
		if err != nil {
			return err
		}
		if len(page.Items) > limit {
			page.Items = page.Items[:limit]
		}
		if more {
			page.Next = db.EncodeCursor(CursorCredits, creditPartition(f.OrgID), last)
		}
		return nil
	})
	return page, err
}

// CreditAlertInput sets the balance under which owners are warned (0: never).
type CreditAlertInput struct {
	OrgID ID
	Actor ID
	Below int
}

var errOwnerSetsAlert = Errorf(EFORBIDDEN, "owner_only", "Only an owner can set when credits are running low.")

// SetCreditAlert sets the organisation's low-credit threshold: an owner's choice.
// EINVALID for a negative or over-large value; EFORBIDDEN owner_only; ENOTFOUND for an
// unknown org or a non-member actor.
func (db *DB) SetCreditAlert(ctx context.Context, in CreditAlertInput) (Org, error) {
	if in.Below < 0 || in.Below > MaxCreditAlertBelow {
		return Org{}, Invalid(FieldError{Loc: []any{"below"}, Msg: "Warn below must be a whole number from 0 (never) to 1000000.",
			Type: "range", Ctx: map[string]any{"ge": 0, "le": MaxCreditAlertBelow}})
	}
	var org Org
	err := db.update(ctx, func(tx Tx) error {
		var err error
		if org, err = orgByID(tx, in.OrgID); err != nil {
			return err
		}
		m, err := memberFor(tx, in.OrgID, in.Actor)
		if err != nil || in.Actor.IsZero() {
			return notFound("Organisation")
		}
		if m.Role != RoleOwner {
			return errOwnerSetsAlert
		}
		org.CreditAlertBelow = in.Below
		return db.putOrg(tx, org)
	})
	return org, err
}

// LowCredits reports whether the organisation's balance is under its threshold: the
// app's banner.
func (o Org) LowCredits() bool { return o.CreditAlertBelow > 0 && o.Credits < o.CreditAlertBelow }

// creditAlert is a pending low-credit mail. ClaimedUntil keeps a second sender (another
// node, the next sweep) off it while one is sending.
type creditAlert struct {
	Balance      int        `json:"balance"`
	Threshold    int        `json:"threshold"`
	At           time.Time  `json:"at"`
	ClaimedUntil *time.Time `json:"claimed_until,omitempty"`
}

// CreditAlert is a low-credit mail to send: to every owner of the organisation.
type CreditAlert struct {
	OrgID     ID
	OrgName   string
	Balance   int
	Threshold int
	At        time.Time // when the spend crossed the threshold; names the alert
	Owners    []string  // email addresses
}

// creditAlertLease is how long a claimed alert stays with its sender before another
// may take it (a sender that died mid-way).
const creditAlertLease = 10 * time.Minute

// ClaimCreditAlerts returns the pending low-credit alerts no other sender holds, each
// with the owners' addresses, and holds them for this sender for ten minutes. The
// sender calls DoneCreditAlert after mailing; one it never finishes is offered again.
func (db *DB) ClaimCreditAlerts(ctx context.Context) ([]CreditAlert, error) {
	// Almost always there is none: look before taking a write transaction each minute.
	pending := false
	err := db.view(ctx, func(tx Tx) error {
		k, _ := tx.Bucket(bucketCreditAlerts).Cursor().First()
		pending = k != nil
		return nil
	})
	if err != nil || !pending {
		return nil, err
	}
	var out []CreditAlert
	err = db.update(ctx, func(tx Tx) error {
		out = nil
		now := db.Now()
		b := tx.Bucket(bucketCreditAlerts)
		type claim struct {
			org ID
			a   creditAlert
		}
		var claims []claim
		err := b.ForEach(func(k, v []byte) error {
			var a creditAlert
			if err := jsonUnmarshal(v, &a); err != nil {
				return err
			}
			if a.ClaimedUntil != nil && now.Before(*a.ClaimedUntil) {
				return nil
			}
			var org ID
			copy(org[:], k)
			claims = append(claims, claim{org, a})
			return nil
		})
		if err != nil {
			return err
		}
		for _, c := range claims {
			until := now.Add(creditAlertLease)
			c.a.ClaimedUntil = &until
			if err := putJSON(b, c.org[:], c.a); err != nil {
				return err
			}
			org, err := orgByID(tx, c.org)
			if err != nil {
				if ErrorCode(err) == ENOTFOUND { // erased meanwhile: nobody to tell
					if err := b.Delete(c.org[:]); err != nil {
						return err
					}
					continue
				}
				return err
			}
			alert := CreditAlert{OrgID: c.org, OrgName: org.Name, Balance: c.a.Balance, Threshold: c.a.Threshold, At: c.a.At}
			err = eachMember(tx, c.org, func(m Membership) error {
				if m.Role != RoleOwner {
					return nil
				}
				u, err := userByID(tx, m.UserID)
				if err != nil {
					return err
				}
				alert.Owners = append(alert.Owners, u.Email)
				return nil
			})
			if err != nil {
				return err
			}
			out = append(out, alert)
		}
		return nil
	})
	return out, err
}

// DoneCreditAlert forgets a sent alert, unless a newer crossing replaced it meanwhile
// (that one is still to send).
func (db *DB) DoneCreditAlert(ctx context.Context, a CreditAlert) error {
	return db.update(ctx, func(tx Tx) error {
		b := tx.Bucket(bucketCreditAlerts)
		var cur creditAlert
		ok, err := getJSON(b, a.OrgID[:], &cur)
		if err != nil || !ok || !cur.At.Equal(a.At) {
			return err
		}
		return b.Delete(a.OrgID[:])
	})
}
