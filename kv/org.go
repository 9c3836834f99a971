package kv

import (
	"context"
	"fmt"
	"strings"
	"time"

	json "github.com/goccy/go-json"
)

// Role is a member's role in an organisation.
type Role string

const (
	RoleOwner Role = "owner"
	RoleAdmin Role = "admin"
	// RoleMember is shown in the app as "Researcher": the contract's value stays.
	RoleMember Role = "member"
	// RoleViewer reads studies, transcripts and findings and changes nothing.
	RoleViewer Role = "viewer"
)

// Org is an organisation: the tenant every key, study and interview belongs to.
type Org struct {
	ID         ID     `json:"id"`
	Name       string `json:"name"`
	Credits    int    `json:"credits"`
	RequireMFA bool   `json:"require_mfa"`
	// TwoStepEmail: a code by email counts as a second step in this organisation
	// (twostep_email.go). Off unless an owner or admin turns it on; a record stored
	// before the setting existed reads as off.
	TwoStepEmail bool       `json:"two_step_email,omitempty"`
	Redaction    *Redaction `json:"redaction,omitempty"` // nil: DefaultRedaction
	// RetentionDays deletes interviews, transcripts and export artifacts older than
	// this many days (see SweepRetention); 0 keeps them.
	RetentionDays int `json:"retention_days,omitempty"`
	// CreditAlertBelow: when a spend takes the balance under this, owners get one mail
	// and the app a banner (credit_ledger.go); 0 is off.
	CreditAlertBelow int       `json:"credit_alert_below,omitempty"`
	CreatedAt        time.Time `json:"created_at"`
	// Brand is how the organisation appears on its participant pages (org_brand.go);
	// nil: its name only.
	Brand *Brand `json:"brand,omitempty"`
}

// OrgInput creates an organisation with its owner.
type OrgInput struct {
	Name    string
	Email   string
	Credits int
	// OwnerName is the owner's display name, set when the owner has none yet.
	OwnerName string
	// AllowDuplicate creates the organisation even when one with the same name (compared
	// without case) exists; otherwise that is ECONFLICT org_exists.
	AllowDuplicate bool
}

// Validate returns EINVALID for an empty or over-long name, a malformed email or
// negative credits: what CreateOrg checks before it touches the file.
func (in OrgInput) Validate() error {
	var fields []FieldError
	if name := strings.TrimSpace(in.Name); name == "" || len([]rune(name)) > 200 {
		fields = append(fields, FieldError{Loc: []any{"org"}, Msg: "Organisation name must be 1 to 200 characters.", Type: "string_length"})
	}
	if !validEmail(strings.ToLower(strings.TrimSpace(in.Email))) {
		fields = append(fields, errEmail)
	}
	if in.Credits < 0 {
		fields = append(fields, FieldError{Loc: []any{"credits"}, Msg: "Credits cannot be negative.", Type: "greater_than_equal"})
	}
	if n := strings.TrimSpace(in.OwnerName); len([]rune(n)) > 100 || strings.ContainsAny(n, "\x00\r\n") {
		fields = append(fields, FieldError{Loc: []any{"name"}, Msg: "Name must be at most 100 characters on one line.", Type: "string_too_long", Ctx: map[string]any{"max_length": 100}})
	}
	if len(fields) > 0 {
		return Invalid(fields...)
	}
	return nil
}

// CreateOrg creates an organisation and makes the user with Email (created if new) its
// owner. It returns EINVALID as Validate does, and ECONFLICT org_exists (the message
// names the existing id) when an organisation of that name exists and AllowDuplicate is
// not set; the check and the creation are one transaction.
func (db *DB) CreateOrg(ctx context.Context, in OrgInput) (Org, User, error) {
	if err := in.Validate(); err != nil {
		return Org{}, User{}, err
	}
	name := strings.TrimSpace(in.Name)
	email := strings.ToLower(strings.TrimSpace(in.Email))
	now := db.Now()
	org := Org{ID: db.NewID(), Name: name, Credits: in.Credits, CreatedAt: now}
	var user User
	err := db.update(ctx, func(tx Tx) error {
		if !in.AllowDuplicate {
			if same, ok, err := orgByName(tx, name); err != nil {
				return err
			} else if ok {
				return Errorf(ECONFLICT, "org_exists", fmt.Sprintf("an organisation named %q already exists with id %s", same.Name, same.ID))
			}
		}
		var err error
		if user, err = db.userForEmail(tx, email); err != nil {
			return err
		}
		if name := strings.TrimSpace(in.OwnerName); name != "" && user.Name == "" {
			user.Name = name
			if err := putUser(tx, user); err != nil {
				return err
			}
		}
		if err := db.putOrg(tx, org); err != nil {
			return err
		}
		if org.Credits > 0 {
			if err := db.putCreditEntry(tx, CreditEntry{OrgID: org.ID, Kind: CreditGrant, Amount: org.Credits, Balance: org.Credits}); err != nil {
				return err
			}
		}
		return putMember(tx, Membership{OrgID: org.ID, UserID: user.ID, Role: RoleOwner, CreatedAt: now})
	})
	return org, user, err
}

// FindOrgs returns every organisation, oldest first (ids are time-ordered). It is an
// operator's listing: the API never ranges over organisations.
func (db *DB) FindOrgs(ctx context.Context) ([]Org, error) {
	orgs := []Org{}
	err := db.view(ctx, func(tx Tx) error {
		return tx.Bucket(bucketOrgs).ForEach(func(_, v []byte) error {
			var o Org
			if err := json.Unmarshal(v, &o); err != nil {
				return err
			}
			orgs = append(orgs, o)
			return nil
		})
	})
	return orgs, err
}

// FindOrgByName returns the oldest organisation whose name equals name without regard
// to case or surrounding spaces, or ENOTFOUND.
func (db *DB) FindOrgByName(ctx context.Context, name string) (Org, error) {
	var org Org
	err := db.view(ctx, func(tx Tx) error {
		o, ok, err := orgByName(tx, strings.TrimSpace(name))
		if err == nil && !ok {
			err = notFound("Organisation")
		}
		org = o
		return err
	})
	return org, err
}

// orgByName scans the organisations: there are few, and only set-up asks.
func orgByName(tx Tx, name string) (Org, bool, error) {
	c := tx.Bucket(bucketOrgs).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		var o Org
		if err := json.Unmarshal(v, &o); err != nil {
			return Org{}, false, err
		}
		if strings.EqualFold(o.Name, name) {
			return o, true, nil
		}
	}
	return Org{}, false, nil
}

// FindOrgByID returns the organisation, or ENOTFOUND.
func (db *DB) FindOrgByID(ctx context.Context, id ID) (Org, error) {
	var org Org
	err := db.view(ctx, func(tx Tx) error {
		var err error
		org, err = orgByID(tx, id)
		return err
	})
	return org, err
}

func orgByID(tx Tx, id ID) (Org, error) {
	var org Org
	ok, err := getJSON(tx.Bucket(bucketOrgs), id[:], &org)
	if err != nil {
		return Org{}, err
	}
	if !ok {
		return Org{}, notFound("Organisation")
	}
	return org, nil
}

// FindMembership returns the user's membership of the organisation, or ENOTFOUND.
func (db *DB) FindMembership(ctx context.Context, org, user ID) (Membership, error) {
	var m Membership
	err := db.view(ctx, func(tx Tx) error {
		ok, err := getJSON(tx.Bucket(bucketMembers), append(org[:], user[:]...), &m)
		if err == nil && !ok {
			err = notFound("Membership")
		}
		return err
	})
	return m, err
}

// AddCredits adds amount (which may be negative, but never below zero in total) to the
// organisation's credits, records it in the credit history as a grant, and returns the
// new balance. ENOTFOUND for an unknown org;
// EINVALID when the balance would go negative.
func (db *DB) AddCredits(ctx context.Context, id ID, amount int) (int, error) {
	var balance int
	err := db.update(ctx, func(tx Tx) error {
		org, err := orgByID(tx, id)
		if err != nil {
			return err
		}
		if org.Credits+amount < 0 {
			return Invalid(FieldError{Loc: []any{"amount"}, Msg: "Credits cannot go below zero.", Type: "greater_than_equal"})
		}
		org.Credits += amount
		balance = org.Credits
		if err := db.putOrg(tx, org); err != nil {
			return err
		}
		return db.putCreditEntry(tx, CreditEntry{OrgID: org.ID, Kind: CreditGrant, Amount: amount, Balance: org.Credits})
	})
	return balance, err
}

// putOrg writes the organisation record; every write of one goes through here, so the
// organisation's cached credentials (which carry the record) are dropped on commit.
func (db *DB) putOrg(tx Tx, org Org) error {
	db.authChanged(tx, org.ID)
	return putJSON(tx.Bucket(bucketOrgs), org.ID[:], org)
}
