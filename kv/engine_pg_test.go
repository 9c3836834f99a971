package kv

import (
	"errors"
	"strings"
	"testing"

	"interviewd/kv/pgtest"
)

// The PostgreSQL engine's own behaviour (pool settings, pooling modes, statements
// after a migration, notices) is tested in kv/internal/pgengine; here, what kv makes of
// its errors. These run in the PostgreSQL round only.

// A store URL pgxpool cannot read is EINVALID naming the setting, without the password.
func TestPostgres_InvalidStoreURL(t *testing.T) {
	if !testPostgres {
		t.Skip("PostgreSQL engine only")
	}
	u := strings.Replace(pgtest.URL(t)+"&pool_max_conns=none", "postgres@", "postgres:sekrit@", 1)
	_, err := Open(t.TempDir(), Options{Store: u})
	var ke *Error
	if !errors.As(err, &ke) || ke.Code != EINVALID || ke.Reason != "store_invalid" || !strings.Contains(err.Error(), "pool_max_conns") {
		t.Fatalf("open with pool_max_conns=none: %v, want EINVALID store_invalid naming pool_max_conns", err)
	}
	if strings.Contains(err.Error(), "sekrit") {
		t.Errorf("the error shows the password: %v", err)
	}
}
