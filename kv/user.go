package kv

import (
	"context"
	"strings"
	"time"
)

// User is a person who signs in to the web app. The secrets of their two-step check
// (TOTP secret, hashed recovery codes) live in a record of their own that never leaves
// kv, so a User can be handed to templates and logs without care.
type User struct {
	ID    ID     `json:"id"`
	Email string `json:"email"` // normalised: trimmed, lower-case; unique
	Name  string `json:"name,omitempty"`
	// Verified is set once the person has proved they read this address (a sign-in
	// code or an invitation reached them).
	Verified     bool       `json:"verified"`
	CreatedAt    time.Time  `json:"created_at"`
	LastSignInAt *time.Time `json:"last_sign_in_at,omitempty"`
	// TOTPEnabled: the user confirmed an authenticator app; two-step is then required
	// at every sign-in.
	TOTPEnabled bool `json:"totp_enabled"`
	// RecoveryCodesLeft counts the unused recovery codes (10 when issued).
	RecoveryCodesLeft int `json:"recovery_codes_left"`
	// EmailFallback lets a user with TOTP pass two-step with a code sent by email
	// instead (on by default; a user may turn it off).
	EmailFallback bool `json:"email_fallback"`
	// Phone is the verified E.164 number two-step codes may be sent to by text message;
	// empty when none. It is set only once a code sent to it was read back.
	Phone string `json:"phone,omitempty"`
}

// NeedsTwoStep reports whether a session of user must pass a two-step check: when
// they enabled an authenticator or added a phone (user_phone.go), or when org (zero
// when none is chosen yet) requires it.
func NeedsTwoStep(user User, org Org) bool {
	return user.twoStepOn() || org.RequireMFA
}

// NormalizeEmail returns the form emails are stored and compared in, and whether it
// looks like an address (name@host.tld, at most 254 characters, no spaces or brackets).
func NormalizeEmail(s string) (string, bool) {
	e := strings.ToLower(strings.TrimSpace(s))
	return e, validEmail(e)
}

var errEmail = FieldError{Loc: []any{"email"}, Msg: "Email must be an address like name@example.com.", Type: "email"}

func validEmail(s string) bool {
	at := strings.LastIndexByte(s, '@')
	return at > 0 && at < len(s)-3 && strings.Contains(s[at:], ".") && len(s) <= 254 &&
		!strings.ContainsAny(s, " \t\r\n<>,;\"")
}

// FindUserByID returns the user, or ENOTFOUND.
func (db *DB) FindUserByID(ctx context.Context, id ID) (User, error) {
	var u User
	err := db.view(ctx, func(tx Tx) error {
		var err error
		u, err = userByID(tx, id)
		return err
	})
	return u, err
}

// FindUserByEmail returns the user with the email (normalised first), or ENOTFOUND.
func (db *DB) FindUserByEmail(ctx context.Context, email string) (User, error) {
	e, _ := NormalizeEmail(email)
	var u User
	err := db.view(ctx, func(tx Tx) error {
		var err error
		u, err = userByEmail(tx, e)
		return err
	})
	return u, err
}

// UpdateUserName sets the user's display name (0 to 100 characters after trimming).
// EINVALID for a longer name, ENOTFOUND for an unknown user.
func (db *DB) UpdateUserName(ctx context.Context, id ID, name string) (User, error) {
	name = strings.TrimSpace(name)
	if len([]rune(name)) > 100 || strings.ContainsAny(name, "\x00\r\n") {
		return User{}, Invalid(FieldError{Loc: []any{"name"}, Msg: "Name must be at most 100 characters on one line.", Type: "string_too_long", Ctx: map[string]any{"max_length": 100}})
	}
	var u User
	err := db.update(ctx, func(tx Tx) error {
		var err error
		if u, err = userByID(tx, id); err != nil {
			return err
		}
		u.Name = name
		return putUser(tx, u)
	})
	return u, err
}

// userForEmail returns the user with the (normalised) email, creating them if new.
func (db *DB) userForEmail(tx Tx, email string) (User, error) {
	if u, err := userByEmail(tx, email); err == nil {
		return u, nil
	}
	u := User{ID: db.NewID(), Email: email, CreatedAt: db.Now(), EmailFallback: true}
	if err := putUser(tx, u); err != nil {
		return User{}, err
	}
	return u, tx.Bucket(bucketUserEmails).Put([]byte(email), u.ID[:])
}

func putUser(tx Tx, u User) error {
	return putJSON(tx.Bucket(bucketUsers), u.ID[:], u)
}

func userByID(tx Tx, id ID) (User, error) {
	var u User
	ok, err := getJSON(tx.Bucket(bucketUsers), id[:], &u)
	if err != nil {
		return User{}, err
	}
	if !ok {
		return User{}, notFound("User")
	}
	return u, nil
}

func userByEmail(tx Tx, email string) (User, error) {
	raw := tx.Bucket(bucketUserEmails).Get([]byte(email))
	if raw == nil {
		return User{}, notFound("User")
	}
	var u User
	if ok, err := getJSON(tx.Bucket(bucketUsers), raw, &u); !ok || err != nil {
		return User{}, notFound("User")
	}
	return u, nil
}
