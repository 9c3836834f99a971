// Package pgxpool is the part of github.com/jackc/pgx/v5/pgxpool's API that the
// PostgreSQL store uses, with the same names: a pool of interviewd/internal/pgx
// connections (see that package for why it is not pgx's own).
package pgxpool

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"interviewd/internal/pgx"
)

// Config is a pool's configuration.
type Config struct {
	ConnConfig *pgx.ConnConfig
	// MaxConns bounds the connections open at once.
	MaxConns int32
	// MaxConnLifetime is how long a connection is used before it is closed.
	MaxConnLifetime time.Duration
	// MaxConnIdleTime is how long an idle connection is kept.
	MaxConnIdleTime time.Duration
}

// ParseConfig parses a connection string as pgx.ParseConfig does, with pgxpool's
// pool_max_conns (default the greater of 4 and the CPUs), pool_max_conn_lifetime
// (default 1h) and pool_max_conn_idle_time (default 30m). The other pool_ settings
// are refused.
func ParseConfig(connString string) (*Config, error) {
	cc, err := pgx.ParseConfig(connString)
	if err != nil {
		return nil, err
	}
	c := &Config{ConnConfig: cc, MaxConns: int32(max(4, runtime.NumCPU())), MaxConnLifetime: time.Hour, MaxConnIdleTime: 30 * time.Minute}
	params := cc.RuntimeParams
	if s, ok := params["pool_max_conns"]; ok {
		delete(params, "pool_max_conns")
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil || n < 1 {
			return nil, errors.New("cannot parse pool_max_conns: want an integer of 1 or more")
		}
		c.MaxConns = int32(n)
	}
	for key, dst := range map[string]*time.Duration{"pool_max_conn_lifetime": &c.MaxConnLifetime, "pool_max_conn_idle_time": &c.MaxConnIdleTime} {
		if s, ok := params[key]; ok {
			delete(params, key)
			d, err := time.ParseDuration(s)
			if err != nil || d <= 0 {
				return nil, errors.New("cannot parse " + key + ": want a duration such as 30m")
			}
			*dst = d
		}
	}
	for _, key := range []string{"pool_min_conns", "pool_min_idle_conns", "pool_health_check_period", "pool_max_conn_lifetime_jitter", "pool_ping_timeout"} {
		if _, ok := params[key]; ok {
			return nil, errors.New(key + " is not supported")
		}
	}
	return c, nil
}

// Pool is a pool of connections, opened as they are needed. It is safe for
// concurrent use.
type Pool struct {
	cfg    *Config
	slots  chan struct{} // one per connection that may be open
	closed chan struct{} // closed by Close
	mu     sync.Mutex
	idle   []idleConn // most recently used last (by value: a release allocates nothing)
	done   bool
}

type idleConn struct {
	c       *pgx.Conn
	created time.Time
	since   time.Time
}

// NewWithConfig makes a pool; it connects on first use.
func NewWithConfig(ctx context.Context, cfg *Config) (*Pool, error) {
	if cfg.MaxConns < 1 {
		return nil, errors.New("pgxpool: MaxConns must be at least 1")
	}
	return &Pool{cfg: cfg, slots: make(chan struct{}, cfg.MaxConns), closed: make(chan struct{})}, nil
}

// Config returns the pool's configuration.
func (p *Pool) Config() *Config { return p.cfg }

// Conn is a connection acquired from the pool; Release gives it back.
type Conn struct {
	*pgx.Conn
	p       *Pool
	created time.Time
}

var errClosed = errors.New("closed pool")

// pingAfter is how long a connection may idle before it is pinged when acquired: a
// server restart or a dropped connection is found before a statement fails on it.
const pingAfter = time.Second

// Acquire returns a connection: an idle one (pinged when it idled for a while), else
// a new one once fewer than MaxConns are open.
func (p *Pool) Acquire(ctx context.Context) (*Conn, error) {
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-p.closed:
		return nil, errClosed
	}
	for {
		p.mu.Lock()
		if p.done {
			p.mu.Unlock()
			<-p.slots
			return nil, errClosed
		}
		n := len(p.idle)
		if n == 0 {
			p.mu.Unlock()
			break
		}
		ic := p.idle[n-1]
		p.idle[n-1] = idleConn{}
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		now := time.Now()
		if now.Sub(ic.created) > p.cfg.MaxConnLifetime || now.Sub(ic.since) > p.cfg.MaxConnIdleTime || ic.c.PgConn().IsClosed() {
			_ = ic.c.Close(context.WithoutCancel(ctx))
			continue
		}
		if now.Sub(ic.since) > pingAfter {
			if err := ic.c.PgConn().Ping(ctx); err != nil {
				_ = ic.c.Close(context.WithoutCancel(ctx))
				if ctx.Err() != nil {
					<-p.slots
					return nil, ctx.Err()
				}
				continue
			}
		}
		return &Conn{Conn: ic.c, p: p, created: ic.created}, nil
	}
	c, err := pgx.ConnectConfig(ctx, p.cfg.ConnConfig)
	if err != nil {
		<-p.slots
		return nil, err
	}
	return &Conn{Conn: c, p: p, created: time.Now()}, nil
}

// Release gives the connection back. One that is closed, busy or left inside a
// transaction is closed instead: it cannot serve the next caller as it is.
func (c *Conn) Release() {
	p := c.p
	if c.p == nil {
		return
	}
	c.p = nil
	pc := c.PgConn()
	p.mu.Lock()
	keep := !p.done && !pc.IsClosed() && !pc.IsBusy() && pc.TxStatus() == 'I'
	if keep {
		p.idle = append(p.idle, idleConn{c: c.Conn, created: c.created, since: time.Now()})
	}
	p.mu.Unlock()
	if !keep {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = c.Conn.Close(ctx)
		cancel()
	}
	<-p.slots
}

// Ping checks that a connection can be had and answers.
func (p *Pool) Ping(ctx context.Context) error {
	c, err := p.Acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	return c.PgConn().Ping(ctx)
}

// Close refuses further Acquires, closes the idle connections and waits, as pgxpool's
// does, until every acquired one is released (and closed).
func (p *Pool) Close() {
	p.mu.Lock()
	if p.done {
		p.mu.Unlock()
		return
	}
	p.done = true
	close(p.closed)
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, ic := range idle {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = ic.c.Close(ctx)
		cancel()
	}
	// Holding every slot means no connection is out.
	for range cap(p.slots) {
		p.slots <- struct{}{}
	}
}

// Exec runs sql on a connection of the pool.
func (p *Pool) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	c, err := p.Acquire(ctx)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	defer c.Release()
	return c.Conn.Exec(ctx, sql, args...)
}

// QueryRow runs sql for at most one row on a connection of the pool, held until
// Scan.
func (p *Pool) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	c, err := p.Acquire(ctx)
	if err != nil {
		return errRow{err}
	}
	return &poolRow{r: c.Conn.QueryRow(ctx, sql, args...), c: c}
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

type poolRow struct {
	r pgx.Row
	c *Conn
}

func (r *poolRow) Scan(dest ...any) error {
	defer r.c.Release()
	return r.r.Scan(dest...)
}
