// Package kv is interviewd's storage core: the record types (organisations, keys,
// studies, briefs, links, interviews, jobs), their invariants, coded errors, and every
// transaction. Each method is one transaction of an engine behind one seam
// (kv/internal/engine): bbolt, one file written with group commit
// (kv/internal/boltengine), or PostgreSQL shared by several nodes
// (kv/internal/pgengine). Beside the engines it imports go-json and blobs (the store of
// the files its records name, which erasure and backups reach), never a surface, and
// keeps engine types out of its exported signatures.
//
// Errors speak the domain: a code, a reason word, and for validation the path of each
// refused value inside the input, the rule and its limits (see FieldError) — never
// where on the wire the value came from, which each surface adds. Idempotency records
// hold an operation's result, not a wire response, for the same reason.
package kv
