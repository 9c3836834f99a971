// Package kv is interviewd's storage core: the record types (organisations, keys,
// studies, briefs, links, interviews, jobs), their invariants, coded errors, and every
// transaction on the single bbolt file. It imports only bbolt and go-json, and keeps
// bbolt types out of its exported signatures so another engine can slot in underneath.
package kv
