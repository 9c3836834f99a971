package pgxpool_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestQueryRaw: rows come back in binary as the server sent them (NULL nil, an empty
// bytea empty but not nil), in order; a row the caller refuses stops the walk with its
// error, and a statement that fails midway reports the server's error; either way the
// connection (the pool's only one) goes on serving.
func TestQueryRaw(t *testing.T) {
	p := newPool(t, "pool_max_conns=1")
	ctx := ctxT(t)
	if _, err := p.Exec(ctx, `CREATE TABLE kv (k bytea PRIMARY KEY, v bytea)`); err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct{ k, v []byte }{{[]byte("a"), []byte{0, 0xff}}, {[]byte("b"), []byte{}}, {[]byte("c"), nil}} {
		if _, err := p.Exec(ctx, `INSERT INTO kv (k, v) VALUES ($1, $2)`, r.k, r.v); err != nil {
			t.Fatal(err)
		}
	}
	c, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	const q = `SELECT k, v, length(k)::int8 FROM kv WHERE k >= $1 ORDER BY k`
	var got []string
	err = c.QueryRaw(ctx, q, [][]byte{[]byte("a")}, []int16{1}, func(v [][]byte) error {
		if len(v) != 3 || len(v[2]) != 8 {
			return fmt.Errorf("row %q", v)
		}
		got = append(got, fmt.Sprintf("%s=%v nil=%v len=%d", v[0], v[1], v[1] == nil, binary.BigEndian.Uint64(v[2])))
		return nil
	})
	want := []string{"a=[0 255] nil=false len=1", "b=[] nil=false len=1", "c=[] nil=true len=1"}
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %q, %v; want %q", got, err, want)
	}

	stop := errors.New("enough")
	rows := 0
	err = c.QueryRaw(ctx, q, [][]byte{[]byte("a")}, []int16{1}, func([][]byte) error {
		rows++
		return stop
	})
	if !errors.Is(err, stop) || rows != 1 {
		t.Errorf("refused row: %v after %d rows", err, rows)
	}

	var pe *pgconn.PgError
	err = c.QueryRaw(ctx, `SELECT 1 / (3 - i) FROM generate_series(1, 5) i`, nil, nil, func([][]byte) error { return nil })
	if !errors.As(err, &pe) || pe.Code != "22012" {
		t.Errorf("division by zero midway: %v", err)
	}

	if err := c.QueryRaw(ctx, q, [][]byte{[]byte("a")}, []int16{1, 1}, func([][]byte) error { return nil }); err == nil {
		t.Error("two formats for one parameter accepted")
	}

	rows = 0
	if err := c.QueryRaw(ctx, q, [][]byte{[]byte("b")}, []int16{1}, func([][]byte) error { rows++; return nil }); err != nil || rows != 2 {
		t.Errorf("after the failures: %d rows, %v", rows, err)
	}
}
