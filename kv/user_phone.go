package kv

import (
	"context"

	bolt "go.etcd.io/bbolt"
)

// SetUserPhone sets the user's verified number for two-step codes by text message, or
// clears it with "". The caller has verified the number (a code sent to it was read
// back). EINVALID at ["phone"] for anything but E.164 (+ and 8 to 15 digits, no
// leading zero); ENOTFOUND for an unknown user.
func (db *DB) SetUserPhone(ctx context.Context, userID ID, phone string) error {
	if phone != "" && !validE164(phone) {
		return Invalid(FieldError{Loc: []any{"phone"}, Msg: "Phone must be an E.164 number such as +447700900123.", Type: "phone"})
	}
	return db.update(ctx, func(tx *bolt.Tx) error {
		u, err := userByID(tx, userID)
		if err != nil {
			return err
		}
		u.Phone = phone
		return putUser(tx, u)
	})
}

func validE164(s string) bool {
	if len(s) < 9 || len(s) > 16 || s[0] != '+' || s[1] == '0' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
