// Package pgtest runs a real PostgreSQL server for tests: Debian's binaries
// (/usr/lib/postgresql/N/bin, or the folder INTERVIEWD_PG_BIN names), a cluster made
// with initdb in a temp folder, listening on a unix socket only. Tests that need it are
// skipped with a one-line message where PostgreSQL is not installed, and fail instead
// when INTERVIEWD_REQUIRE_POSTGRES=1 (as in CI).
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Required reports whether the environment demands PostgreSQL tests run.
func Required() bool { return os.Getenv("INTERVIEWD_REQUIRE_POSTGRES") == "1" }

// Server is one running PostgreSQL server.
type Server struct {
	dir     string // the temp folder: data/, the socket, the log
	cmd     *exec.Cmd
	exited  chan struct{}
	n       atomic.Int64
	logPath string
}

// ErrAbsent reports that PostgreSQL's binaries are not installed.
var ErrAbsent = errors.New("PostgreSQL binaries not found (install Debian's postgresql package, or set INTERVIEWD_PG_BIN)")

// binDir returns the folder holding initdb and postgres.
func binDir() (string, error) {
	if d := os.Getenv("INTERVIEWD_PG_BIN"); d != "" {
		return d, nil
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(found) == 0 {
		if p, err := exec.LookPath("initdb"); err == nil {
			return filepath.Dir(p), nil
		}
		return "", ErrAbsent
	}
	// The newest major version.
	sort.Slice(found, func(i, j int) bool { return major(found[i]) > major(found[j]) })
	return filepath.Dir(found[0]), nil
}

func major(initdb string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return n
}

// Start initialises a cluster in a fresh temp folder and starts its server. PostgreSQL
// refuses to run as root, so under root the server runs as the postgres user the
// Debian package creates. The server gets SIGQUIT if the test process dies first.
func Start() (*Server, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "interviewd-pg-")
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir, exited: make(chan struct{}), logPath: filepath.Join(dir, "postgres.log")}
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("running as root and there is no postgres user to run PostgreSQL as: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres",
		"--auth=trust", "--encoding=UTF8", "--no-locale", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	initdb.Dir = dir // the postgres user may not reach the test's working folder
	if out, err := initdb.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v: %s", err, out)
	}
	logf, err := os.Create(s.logPath)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	defer logf.Close()
	// Durability settings off: the tests kill interviewd processes, never this server.
	s.cmd = exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-k", dir,
		"-c", "listen_addresses=", "-c", "fsync=off", "-c", "synchronous_commit=off",
		"-c", "full_page_writes=off", "-c", "max_connections=400", "-c", "shared_buffers=64MB")
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	s.cmd.Dir = dir
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGQUIT}
	if err := s.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	go func() { _ = s.cmd.Wait(); close(s.exited) }()
	if err := s.ready(); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// ready waits until the server accepts connections (or has exited).
func (s *Server) ready() error {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		c, err := pgx.Connect(ctx, s.URL("postgres"))
		cancel()
		if err == nil {
			return c.Close(context.Background())
		}
		select {
		case <-s.exited:
			return fmt.Errorf("postgres exited: %s", s.Log())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres not ready after 2 minutes: %v: %s", err, s.Log())
		}
	}
}

// Log returns the end of the server's log.
func (s *Server) Log() string {
	b, _ := os.ReadFile(s.logPath)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// URL returns the postgres:// URL of database name on this server.
func (s *Server) URL(name string) string {
	return "postgres://postgres@localhost/" + name + "?host=" + url.QueryEscape(s.dir) + "&sslmode=disable"
}

// NewDatabase creates an empty database and returns its URL.
func (s *Server) NewDatabase(ctx context.Context) (string, error) {
	name := "t" + strconv.FormatInt(s.n.Add(1), 10)
	c, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		return "", err
	}
	defer c.Close(context.Background())
	if _, err := c.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", err
	}
	return s.URL(name), nil
}

// DropDatabase drops the database at u, ending its connections.
func (s *Server) DropDatabase(ctx context.Context, u string) error {
	name := strings.TrimPrefix(u[:strings.Index(u, "?")], "postgres://postgres@localhost/")
	c, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	_, err = c.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	return err
}

// Stop shuts the server down (fast shutdown: sessions are ended) and removes its folder.
func (s *Server) Stop() {
	_ = s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-s.exited:
	case <-time.After(time.Minute):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
	os.RemoveAll(s.dir)
}

// skipNotice says once per test process that PostgreSQL tests were skipped.
var skipNotice sync.Once

var shared struct {
	sync.Mutex
	s   *Server
	err error
}

// Shared returns the test process's server, starting it on first use.
func Shared() (*Server, error) {
	shared.Lock()
	defer shared.Unlock()
	if shared.s == nil && shared.err == nil {
		shared.s, shared.err = Start()
	}
	return shared.s, shared.err
}

// Available reports whether a server can run, starting the shared one to find out. When
// it cannot and PostgreSQL is not required, it prints one line saying what is skipped.
func Available(what string) bool {
	_, err := Shared()
	if err != nil && !Required() {
		Notice(fmt.Sprintf("%s skipped: %v\n", what, err))
	}
	return err == nil || Required()
}

// Notice writes line where the person running the tests sees it. Without -v, go test
// keeps a passing package's output to itself, so the line goes to the go command's own
// standard error (Linux: /proc/PPID/fd/2) when that is a terminal or a pipe, falling
// back to the test's.
func Notice(line string) {
	parent := fmt.Sprintf("/proc/%d/fd/2", os.Getppid())
	if st, err := os.Stat(parent); err == nil && !st.Mode().IsRegular() && !testing.Verbose() {
		if f, err := os.OpenFile(parent, os.O_WRONLY|os.O_APPEND, 0); err == nil {
			_, err = f.WriteString(line)
			if cerr := f.Close(); err == nil && cerr == nil {
				return
			}
		}
	}
	fmt.Fprint(os.Stderr, line)
}

// URL returns a fresh database on the shared server, dropped when tb ends. It skips tb
// when PostgreSQL is absent, or fails it when PostgreSQL is required.
func URL(tb testing.TB) string {
	tb.Helper()
	s, err := Shared()
	if err != nil {
		if Required() {
			tb.Fatalf("PostgreSQL required (INTERVIEWD_REQUIRE_POSTGRES=1): %v", err)
		}
		skipNotice.Do(func() { Notice(fmt.Sprintf("%s: PostgreSQL tests skipped: %v\n", filepath.Base(os.Args[0]), err)) })
		tb.Skipf("PostgreSQL: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	u, err := s.NewDatabase(ctx)
	if err != nil {
		tb.Fatalf("create database: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = s.DropDatabase(ctx, u)
	})
	return u
}

// StopShared stops the shared server if one was started; call it from TestMain after
// the tests have run.
func StopShared() {
	shared.Lock()
	defer shared.Unlock()
	if shared.s != nil {
		shared.s.Stop()
		shared.s = nil
	}
}
