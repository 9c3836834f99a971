package cmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	json "github.com/goccy/go-json"
	"github.com/rs/zerolog"

	"interviewd/blobs"
	"interviewd/kv"
)

// The admin socket. bbolt lets one process hold the file, so while a server runs it
// listens on DATA/admin.sock (mode 0600: only the owner of the data, and root, can
// connect) and runs admin commands against its own open DB. The client sends its
// arguments (file paths made absolute) and the INTERVIEWD_* variables its flags read;
// the server parses them with the very same table row and streams back what the
// command prints, then its error, if any. So a command behaves the same either way.
//
// Wire: one JSON request line, then JSON frame lines: {"out":"…"} for each write and a
// last {"done":true,"error":"…"}.

// errAdminStopping answers a command that arrives while the server stops.
var errAdminStopping = errors.New("the server is stopping; run the command again once it has stopped")

// socketName is the admin socket inside the data folder.
const socketName = "admin.sock"

// adminLockTimeout is how long a direct open waits for the file lock; a running server
// holds it for good, so waiting longer only delays the fall-back to its socket.
const adminLockTimeout = 300 * time.Millisecond

// adminDialWindow is how long the client keeps trying a server that holds the data
// folder but is not yet (or no longer) answering on its socket: one starting up or
// shutting down.
const adminDialWindow = 5 * time.Second

// maxSocketPath is the longest unix socket path Linux and macOS accept (sun_path less
// its terminating NUL, on macOS).
const maxSocketPath = 103

type adminRequest struct {
	Args []string          `json:"args"`
	Env  map[string]string `json:"env"`
}

type adminFrame struct {
	Out   string `json:"out,omitempty"`
	Done  bool   `json:"done,omitempty"`
	Error string `json:"error,omitempty"`
}

// dispatchAdmin runs an admin command through the running server's socket when one
// answers, and against the data folder directly otherwise.
func dispatchAdmin(ctx context.Context, cmd *command, data string, openBlobs func() (blobs.Store, error), args []string, env map[string]string, run adminRun, out io.Writer) error {
	sock := filepath.Join(data, socketName)
	deadline := time.Now().Add(adminDialWindow)
	for {
		if conn, err := net.DialTimeout("unix", sock, time.Second); err == nil {
			return remoteAdmin(conn, cmd, args, env, out)
		}
		if !cmd.creates {
			if _, err := os.Stat(filepath.Join(data, kv.FileName)); errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("%s: no interviewd data in %s (create it with interviewd setup --data %s)", cmd.name, data, data)
			}
		}
		store, err := openBlobs()
		if err != nil {
			return err
		}
		db, err := kv.Open(data, kv.Options{LockTimeout: adminLockTimeout, Blobs: store})
		if err == nil {
			defer db.Close()
			// Holding the lock proves no server runs here: a socket left over is stale.
			_ = removeStaleSocket(sock)
			return run(ctx, db, out)
		}
		if kv.ErrorCode(err) != kv.ELOCKED {
			return err
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("data folder %s is held by another interviewd process that does not answer on %s", data, sock)
		}
	}
}

// remoteAdmin sends the command to the server and relays what it prints.
func remoteAdmin(conn net.Conn, cmd *command, args []string, env map[string]string, out io.Writer) error {
	defer conn.Close()
	req := adminRequest{Args: append(strings.Fields(cmd.name), absPaths(args, cmd.paths)...), Env: env}
	enc := json.NewEncoder(conn)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(req); err != nil {
		return fmt.Errorf("%s: send to the running server: %w", cmd.name, err)
	}
	dec := json.NewDecoder(bufio.NewReader(conn))
	for {
		var f adminFrame
		if err := dec.Decode(&f); err != nil {
			return fmt.Errorf("%s: the running server closed the admin connection before the command finished: %w", cmd.name, err)
		}
		if f.Out != "" {
			if _, err := io.WriteString(out, f.Out); err != nil {
				return err
			}
		}
		if f.Done {
			if f.Error != "" {
				return errors.New(f.Error)
			}
			return nil
		}
	}
}

// absPaths returns args with the values of the named flags made absolute, in every
// form the flag package accepts (-f x, --f x, -f=x, --f=x), up to a "--".
func absPaths(args []string, names []string) []string {
	out := append([]string(nil), args...)
	for i := 0; i < len(out); i++ {
		a := out[i]
		if a == "--" {
			break
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || !slices.Contains(names, name) {
			continue
		}
		if hasVal {
			out[i] = a[:len(a)-len(val)] + absPath(val)
		} else if i+1 < len(out) {
			i++
			out[i] = absPath(out[i])
		}
	}
	return out
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// removeStaleSocket removes a socket no process serves; it reports whether there was one.
// Call it only while holding the data folder's lock.
func removeStaleSocket(sock string) bool {
	st, err := os.Lstat(sock)
	if err != nil || st.Mode()&os.ModeSocket == 0 {
		return false
	}
	return os.Remove(sock) == nil
}

// adminRequestTimeout bounds how long a connection may take to send its request.
const adminRequestTimeout = 10 * time.Second

// adminServer is the running server's side of the socket.
type adminServer struct {
	db   *kv.DB
	log  zerolog.Logger
	ln   *net.UnixListener
	path string
	ctx  context.Context
	wg   sync.WaitGroup
	// requestTimeout is adminRequestTimeout; a test lengthens it to show that Close
	// never waits for it.
	requestTimeout time.Duration

	// Connections still sending their request. Close cuts them off, so a client that
	// connects and says nothing cannot hold up the server's stop; commands already
	// running finish.
	mu      sync.Mutex
	reading map[net.Conn]struct{}
	closing bool
}

// listenAdmin removes a stale socket (the caller holds the data folder's lock, so no
// other server can be using it) and listens on DATA/admin.sock. The socket is bound
// under a temporary name, given mode 0600 and then renamed into place, so it is never
// reachable with looser permissions.
func listenAdmin(ctx context.Context, db *kv.DB, log zerolog.Logger) (*adminServer, error) {
	return listenAdminTimeout(ctx, db, log, adminRequestTimeout)
}

// listenAdminTimeout is listenAdmin with the time a connection has to send its request.
func listenAdminTimeout(ctx context.Context, db *kv.DB, log zerolog.Logger, requestTimeout time.Duration) (*adminServer, error) {
	path := filepath.Join(db.Dir(), socketName)
	if removeStaleSocket(path) {
		log.Info().Str("socket", path).Msg("removed a stale admin socket left by a previous run")
	}
	// Bind inside a fresh owner-only folder: between bind and chmod the socket has the
	// umask's mode, and nobody else can reach it there.
	dir, err := os.MkdirTemp(db.Dir(), ".admin-")
	if err != nil {
		return nil, fmt.Errorf("admin socket %s: %w", path, err)
	}
	defer os.Remove(dir)
	tmp := filepath.Join(dir, "s")
	if len(path) > maxSocketPath || len(tmp) > maxSocketPath {
		return nil, fmt.Errorf("admin socket %s: the path is longer than a unix socket allows (%d bytes); use a shorter --data path", path, maxSocketPath)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: tmp, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("admin socket %s: %w", path, err)
	}
	ln.SetUnlinkOnClose(false) // it is renamed; Close removes the final path itself
	if err := os.Chmod(tmp, 0o600); err != nil {
		ln.Close()
		_ = os.Remove(tmp)
		return nil, fmt.Errorf("admin socket %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		ln.Close()
		_ = os.Remove(tmp)
		return nil, fmt.Errorf("admin socket %s: %w", path, err)
	}
	a := &adminServer{db: db, log: log, ln: ln, path: path, ctx: ctx, requestTimeout: requestTimeout, reading: map[net.Conn]struct{}{}}
	a.wg.Add(1)
	go a.serve()
	return a, nil
}

func (a *adminServer) serve() {
	defer a.wg.Done()
	for {
		conn, err := a.ln.Accept()
		if err != nil {
			return // closed
		}
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			a.handle(conn)
		}()
	}
}

// Close stops accepting commands, cuts off connections that have not sent their request
// yet, waits for the commands running, and removes the socket.
func (a *adminServer) Close() {
	_ = a.ln.Close()
	a.mu.Lock()
	a.closing = true
	for conn := range a.reading {
		_ = conn.SetReadDeadline(time.Now())
	}
	a.mu.Unlock()
	a.wg.Wait()
	_ = os.Remove(a.path)
}

// startReading registers conn as awaiting its request; false once the server is closing.
func (a *adminServer) startReading(conn net.Conn) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closing {
		return false
	}
	a.reading[conn] = struct{}{}
	return true
}

func (a *adminServer) doneReading(conn net.Conn) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.reading, conn)
}

func (a *adminServer) handle(conn net.Conn) {
	defer conn.Close()
	start := time.Now()
	enc := json.NewEncoder(conn)
	enc.SetEscapeHTML(false)
	if err := checkPeer(conn); err != nil {
		a.log.Warn().Err(err).Msg("admin connection refused")
		_ = enc.Encode(adminFrame{Done: true, Error: oneLine(err)})
		return
	}
	name, err := a.run(conn, frameWriter{enc})
	final := adminFrame{Done: true}
	ev := a.log.Info()
	if err != nil {
		final.Error = oneLine(err)
		ev = ev.Str("error", final.Error)
	}
	ev.Str("command", name).Float64("duration_ms", ms(time.Since(start))).Msg("admin command")
	_ = enc.Encode(final)
}

// run reads one request from conn and runs its command with the table row the client
// used, printing to out. It returns the command's name and error.
func (a *adminServer) run(conn net.Conn, out io.Writer) (string, error) {
	if !a.startReading(conn) {
		return "", errAdminStopping
	}
	_ = conn.SetReadDeadline(time.Now().Add(a.requestTimeout))
	var req adminRequest
	err := json.NewDecoder(io.LimitReader(conn, 1<<20)).Decode(&req)
	a.doneReading(conn)
	a.mu.Lock()
	stopping := a.closing
	a.mu.Unlock()
	if err != nil && stopping {
		return "", errAdminStopping
	}
	if err != nil {
		return "", fmt.Errorf("unreadable admin request: %w", err)
	}
	_ = conn.SetReadDeadline(time.Time{})
	var cmd *command
	var rest []string
	if len(req.Args) > 0 {
		cmd, rest = findCommand(commands(), req.Args)
	}
	if cmd == nil || cmd.define == nil {
		return "", fmt.Errorf("the running server has no admin command %q", strings.Join(req.Args, " "))
	}
	_, run, err := parseAdmin(cmd, rest, envOf(req.Env))
	if err != nil {
		return cmd.name, err
	}
	return cmd.name, run(a.ctx, a.db, out)
}

// envOf serves an admin command the client's INTERVIEWD_* variables, not the server's.
func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		if !strings.HasPrefix(k, "INTERVIEWD_") {
			return "", false
		}
		v, ok := m[k]
		return v, ok
	}
}

type frameWriter struct{ enc *json.Encoder }

func (w frameWriter) Write(p []byte) (int, error) {
	if err := w.enc.Encode(adminFrame{Out: string(p)}); err != nil {
		return 0, err
	}
	return len(p), nil
}

// ms is a duration in milliseconds with microsecond precision, for log fields named *_ms.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// peerAllowed reports whether a connection from user uid may run admin commands on a
// server running as user self: the same user, or root.
func peerAllowed(uid, self uint32) bool { return uid == self || uid == 0 }
