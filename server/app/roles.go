package app

import (
	"interviewd/kv"
)

// Roles in the app (DECISIONS §22): owner, admin, researcher (the contract's `member`,
// stored and sent as "member" and shown as "Researcher") and viewer.
//
//   - owner and admin: everything (only an owner makes owners and sets the low-credit
//     warning);
//   - researcher: creates and edits studies, rehearses them, makes links, reads the
//     organisation's transcripts and findings and runs analyses; does not go live,
//     change a study's mode, export, or manage the organisation;
//   - viewer: reads studies, transcripts and findings and changes nothing.
//
// Routes state the least role they need (appAccess); a session's principal carries its
// role, and appCall refuses a change to a viewer's principal and an export to anyone
// who may not export, so a route listed with too little access still cannot change
// anything. Keys and OAuth grants follow kv.Role.MayHoldScope, which the contract
// fixes for members (never studies:golive or export:read) and which gives a viewer
// studies:read and links:read only.

// RoleRefusal is the app's 403 for a route the session's role does not reach, or nil.
func RoleRefusal(access Access, role kv.Role, org string) error {
	switch {
	case access == AccessAdmin && !role.Manages():
		return appForbidden("Only owners and admins of " + org + " can do this.")
	case access == AccessOwner && role != kv.RoleOwner:
		return appForbidden("Only owners of " + org + " can do this.")
	case access == AccessResearch && !role.Changes():
		return appForbidden("Viewers of " + org + " read studies, transcripts and findings but change nothing.")
	}
	return nil
}

// roleOption is one choice of a role menu: the stored value and its name in the app.
type roleOption struct{ Value, Label string }

func roleOptions(roles []string) []roleOption {
	out := make([]roleOption, len(roles))
	for i, r := range roles {
		out[i] = roleOption{Value: r, Label: kv.Role(r).Label()}
	}
	return out
}
