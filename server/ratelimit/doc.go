// Package ratelimit provides interviewd's admission budgets: the per-credential and
// per-organisation request limits (reads and writes apart), the per-address limit of
// unauthenticated endpoints, the failed-credential budget per client address, and the
// RateLimit-Policy and RateLimit header values (IETF httpapi draft) of a decision. Each
// is a strict sliding window, kept in memory on one node or, on a shared store
// (PostgreSQL, several nodes), in the store, where one statement decides and records.
// Parse reads the --rate-limits setting.
//
// It is its own package because it is a leaf the whole server relies on and that
// relies on nothing of it: it knows requests only as keys (a credential, an
// organisation, an address) and the store only through Store, so the server's surfaces
// and its pipeline call it rather than share its state, and it is tested on its own.
// It imports nothing of server (internal/depcheck holds that).
package ratelimit
