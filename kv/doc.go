// Package kv is interviewd's storage core: the record types (organisations, keys,
// studies, briefs, links, interviews, jobs), their invariants, coded errors, and every
// transaction on the single bbolt file. It imports only bbolt, go-json and blobs (the
// store of the files its records name, which erasure and backups reach), and keeps
// bbolt types out of its exported signatures so another engine can slot in underneath.
//
// Errors speak the domain: a code, a reason word, and for validation the path of each
// refused value inside the input, the rule and its limits (see FieldError) — never
// where on the wire the value came from, which each surface adds. Idempotency records
// hold an operation's result, not a wire response, for the same reason.
package kv
