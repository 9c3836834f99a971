package pipeline

import (
	"strings"
	"testing"

	"interviewd/kv"
)

// A 5xx answer never carries an internal path: a store held by another process is
// mapped to a fixed sentence, its cause (which names the data folder) kept for the log.
func TestLockedStoreErrorHidesThePath(t *testing.T) {
	cause := kv.Errorf(kv.ELOCKED, "data_locked", "data folder /srv/interviewd/data is in use by another interviewd process")
	ae := ToAPIError(cause)
	if ae.Status != 503 || ae.Code != "unavailable" || ae.RetryAfter <= 0 {
		t.Fatalf("locked store answered %d %s (retry %d); want 503 unavailable with Retry-After", ae.Status, ae.Code, ae.RetryAfter)
	}
	if strings.Contains(ae.Detail, "/srv/") || strings.Contains(ae.Detail, "data folder") {
		t.Fatalf("detail leaks the path: %q", ae.Detail)
	}
	if ae.cause != cause {
		t.Fatalf("the cause is not kept for the log: %v", ae.cause)
	}
}
