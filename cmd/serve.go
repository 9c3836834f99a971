package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"interviewd/jobs"
	"interviewd/kv"
	"interviewd/logbatch"
	"interviewd/mail"
	"interviewd/moderator"
	"interviewd/plugins"
	"interviewd/server"
	"interviewd/sms"
)

// shutdownGrace bounds how long in-flight requests may finish after a stop signal.
const shutdownGrace = 10 * time.Second

func serveCommand(ctx context.Context, args []string, sio stdio) error {
	fs := newFlagSet("serve", sio.env)
	addr := fs.str("addr", "HOST:PORT", ":8080", "listen address")
	data := fs.str("data", "DIR", "./data", "data folder")
	storeCheck := addStoreFlag(fs)
	jobTimeoutFlag := fs.str("job-timeout", "DURATION", "2m", "how long an authoring or export job may run before it fails (a large export on a slow machine may need more)")
	leaseFlag := fs.str("job-lease", "DURATION", "30s", "how long a node's claim on a background job lasts without renewal: with --store, another node resumes a dead node's jobs this long after its last renewal")
	baseURL := fs.str("base-url", "URL", "", "public base URL every returned link derives from (default: follows --addr, e.g. http://localhost:8080)")
	level := fs.str("log-level", "LEVEL", "info", "log level: debug, info, warn or error")
	format := fs.str("log-format", "json|console", "json", "log format: json lines, or console for people")
	limitsFlag := fs.str("rate-limits", "LIMITS", "", rateLimitsHelp())
	modelURL := fs.str("model-url", "URL", "", "OpenAI-compatible endpoint (e.g. http://host/v1); empty uses the built-in engine")
	modelKey := fs.str("model-key", "KEY", "", "API key for --model-url")
	modelName := fs.str("model", "NAME", "", "model name for --model-url")
	smtpURL := fs.str("smtp-url", "URL", "", "mail server for sign-in codes and invitations: smtp://user:pass@host:587 (STARTTLS when offered) or smtps://...:465; empty logs them and keeps them in `interviewd mail outbox`")
	smsURL := fs.str("sms-url", "URL", "", "SMS provider for two-step codes by text message, a Twilio Messages endpoint: https://SID:TOKEN@api.twilio.com/2010-04-01/Accounts/SID/Messages.json?From=%2B15005550006 (or ?MessagingServiceSid=MG...); empty: text messages are not offered")
	mailFrom := fs.str("mail-from", "EMAIL", "", "sender address of that mail (default interviewd@<host of --base-url>)")
	blobsSpec := fs.str("blobs", "DIR|s3://BUCKET", "", blobsFlagHelp)
	presign := fs.boolean("blobs-presign", false, blobsPresignHelp)
	clientMetadata := fs.str("oauth-client-metadata", "on|off", "on", "accept OAuth clients whose client_id is an https URL of a client metadata document (fetched with SSRF guards)")
	proxiesFlag := fs.str("trusted-proxies", "CIDR,...", "", "comma-separated CIDRs or addresses whose X-Forwarded-For/Forwarded/X-Forwarded-Proto are believed")
	corsFlag := fs.str("cors-origins", "ORIGIN,...", "", "comma-separated origins of browser-based MCP clients allowed to call /v1/mcp across origins, such as http://localhost:6274; empty: none (discovery and the OAuth endpoints allow any origin)")
	ops := addOpsFlags(fs)
	if err := fs.parse(args); errors.Is(err, errHelp) {
		fs.printUsage(sio.stdout, "[flags]", "Serve the API, the MCP server and the participant pages (the default command).")
		return nil
	} else if err != nil {
		return err
	}
	// Every check runs before the data folder is touched.
	if err := ops.check(); err != nil {
		return err
	}
	store, err := storeCheck()
	if err != nil {
		return err
	}
	if store != "" && *ops.backupDir != "" {
		return errors.New("--backup-dir copies the bbolt file; with --store, back the database up with PostgreSQL's own tools (pg_dump, pg_basebackup)")
	}
	lease, err := time.ParseDuration(*leaseFlag)
	if err != nil || lease < time.Second {
		return fmt.Errorf("--job-lease %q: want a duration of at least 1s, such as 30s", *leaseFlag)
	}
	jobTimeout, err := time.ParseDuration(*jobTimeoutFlag)
	if err != nil || jobTimeout < 10*time.Second || jobTimeout > 24*time.Hour {
		return fmt.Errorf("--job-timeout %q: want a duration from 10s to 24h, such as 2m", *jobTimeoutFlag)
	}
	limits, err := server.ParseRateLimits(*limitsFlag)
	if err != nil {
		return fmt.Errorf("--rate-limits: %w", err)
	}
	proxies, err := server.ParseTrustedProxies(*proxiesFlag)
	if err != nil {
		return fmt.Errorf("--trusted-proxies: %w", err)
	}
	corsOrigins, err := server.ParseCORSOrigins(*corsFlag)
	if err != nil {
		return fmt.Errorf("--cors-origins: %w", err)
	}
	if *clientMetadata != "on" && *clientMetadata != "off" {
		return fmt.Errorf("--oauth-client-metadata %q: want on or off", *clientMetadata)
	}
	if *baseURL != "" {
		if u, err := url.Parse(*baseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("--base-url %q: want an absolute http or https URL such as https://research.example.com", *baseURL)
		}
	}
	if *smtpURL != "" {
		if _, _, _, _, _, err := mail.ParseURL(*smtpURL); err != nil {
			return fmt.Errorf("--smtp-url: %w", err)
		}
	}
	texts, err := sms.New(*smsURL)
	if err != nil {
		return fmt.Errorf("--sms-url: %w", err)
	}
	engine, err := newModerator(*modelURL, *modelKey, *modelName)
	if err != nil {
		return err
	}
	analyser := jobs.NewAnalyser(engine, *modelName)
	// The access log's routine lines are batched (one write per few milliseconds, not
	// per request); every other line is written at once, after them.
	logOut := logbatch.New(sio.stderr, logbatch.DefaultDelay)
	defer logOut.Close()
	colour := isTerminal(sio.stderr)
	log, err := newLogger(logOut, colour, *level, *format)
	if err != nil {
		return err
	}
	accessLog, _ := newLogger(logOut.Batched(), colour, *level, *format)
	if _, _, err := net.SplitHostPort(*addr); err != nil {
		return fmt.Errorf("--addr %q: want host:port or :port", *addr)
	}
	absData, err := filepath.Abs(*data)
	if err != nil {
		return fmt.Errorf("--data %q: %w", *data, err)
	}
	if err := checkBlobs(*blobsSpec, *presign, sio.env); err != nil {
		return err
	}
	engineName := "builtin"
	if *modelURL != "" {
		engineName = "openai-compatible"
	}

	// The data folder is opened first: its error (locked by another server, a newer
	// file) is the one to report even when the port is taken too.
	blobStore, err := openBlobs(ctx, *blobsSpec, *data, sio.env)
	if err != nil {
		return err
	}
	db, err := kv.Open(*data, kv.Options{LockTimeout: 500 * time.Millisecond, OnCommit: ops.onCommit, Store: store, Blobs: blobStore, Log: log})
	if err != nil {
		return err
	}
	defer db.Close()
	// Plugins compile on first use (from DATA/cache when it holds them). The host is
	// closed before the store: a plugin still running is stopped first, and Close
	// cancels a compile in flight rather than wait.
	host, err := plugins.NewHost(ctx, plugins.Config{CacheDir: filepath.Join(*data, "cache")})
	if err != nil {
		return fmt.Errorf("plugin host: %w", err)
	}
	defer host.Close(context.Background())
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", *addr, err)
	}
	if err := blobStore.Ping(ctx); err != nil {
		// Not fatal: the bucket may come back; until it does /readyz says
		// storage_unavailable and requests that need it answer 503.
		log.Warn().Err(err).Str("blobs", blobStore.String()).Msg("blob store unreachable at start")
	}
	runner := jobs.NewRunner(jobs.Config{DB: db, Moderator: engine, Analyser: analyser, Log: log, Plugins: host, Metrics: ops.metrics, Lease: lease, Timeout: jobTimeout})
	// Jobs left unfinished by the last run are resumed (or failed) before anything is
	// served.
	if err := runner.Start(ctx); err != nil {
		_ = ln.Close()
		_ = runner.Close(context.Background())
		return err
	}
	base := *baseURL
	if base == "" {
		base = ops.baseURL(baseURLFor(*addr, ln.Addr()))
	}
	sender, err := mail.New(mail.Config{URL: *smtpURL, From: *mailFrom, BaseURL: base}, db, log)
	if err != nil {
		_ = ln.Close()
		_ = runner.Close(context.Background())
		return fmt.Errorf("--mail-from / --smtp-url: %w", err)
	}
	srv := server.New(ops.serverConfig(server.Config{Mail: sender, SMS: texts, DB: db, Jobs: runner, Log: log, BaseURL: base, AccessLog: true, AccessLogger: &accessLog, RateLimits: &limits, TrustedProxies: proxies,
		LoopbackListener: loopbackListener(ln.Addr()), BlobsPresign: *presign, NoClientMetadata: *clientMetadata == "off",
		DerivedBaseURL: *baseURL == "", CORSOrigins: corsOrigins}))
	go srv.Maintain(ctx)
	go runner.Maintain(ctx)
	defer ops.close()
	tlsLn, err := ops.listen(ctx, ln, db, srv, log)
	if err != nil {
		_ = ln.Close()
		_ = runner.Close(context.Background())
		return err
	}
	ln = tlsLn
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	adm, err := listenAdmin(ctx, db, log)
	socket := ""
	if err != nil {
		log.Warn().Err(err).Msg("admin commands cannot reach this server; stop it to run them")
	} else {
		socket = filepath.Join(absData, socketName)
	}
	v := readVersion()
	ev := log.Info().Str("addr", ln.Addr().String()).Str("version", v.Version).Str("revision", v.Revision).Str("go", v.Go).
		Str("data", absData).Str("base_url", base).Str("engine", engineName)
	if store != "" {
		ev = ev.Str("store", kv.RedactStore(store))
	}
	if *modelURL != "" {
		ev = ev.Str("model_url", redactedURL(*modelURL)).Str("model", *modelName)
	}
	if *smtpURL != "" {
		ev = ev.Str("mail", redactedURL(*smtpURL))
	} else {
		ev = ev.Str("mail", "outbox (no --smtp-url: codes are logged and kept for `interviewd mail outbox`)")
	}
	if texts != nil {
		ev = ev.Str("sms", redactedURL(*smsURL))
	} else {
		ev = ev.Str("sms", "off (no --sms-url: two-step codes are not offered by text message)")
	}
	if len(corsOrigins) > 0 {
		ev = ev.Strs("cors_origins", corsOrigins)
	}
	ev.Str("blobs", blobStore.String()).Bool("blobs_presign", *presign).Str("admin_socket", socket).Str("app", base+"/app").
		Str("mcp_url", base+"/v1/mcp").Str("mcp_clients", mcpURLNote(base, *baseURL == "")).Msg("listening")
	log.Info().Str("app", base+"/app").Msgf("open %s/app in a browser for the web app; the API is under %s/v1/api; %s", base, base, mcpURLNote(base, *baseURL == ""))
	self := "interviewd"
	if exe, err := os.Executable(); err == nil && startedByGoRun(exe) {
		// The binary `go run` built is in a temporary folder: there is no interviewd to
		// run the admin commands with until the newcomer builds one.
		self = "./interviewd"
		log.Info().Msg("started with `go run`: the admin commands (`interviewd setup`, `orgs list`, `keys create`, ...) need the binary built first: in another shell, in this folder, run `go build`, then `./interviewd setup ...` (it reaches this server through its admin socket)")
	}
	if empty, err := db.Empty(ctx); err == nil && empty {
		log.Info().Msgf("no organisation yet: create one with `%s setup --data %s --org NAME --email EMAIL` (EMAIL is its owner, who signs in at %s/app with a code sent there, or shown in this log when no --smtp-url is set), then a key with `%s keys create` or in the app (both work while the server runs)", self, *data, base, self)
	}
	select {
	case err := <-served:
		if adm != nil {
			adm.Close()
		}
		_ = runner.Close(context.Background())
		return err
	case <-ctx.Done():
	}
	stopping := time.Now()
	log.Info().Msg("shutting down: finishing in-flight requests")
	if adm != nil {
		adm.Close()
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	<-served
	if err := runner.Close(sctx); err != nil {
		log.Warn().Err(err).Msg("jobs still running at shutdown were left for the next start")
	}
	log.Info().Float64("duration_ms", ms(time.Since(stopping))).Msg("stopped")
	return nil
}

// rateLimitsHelp documents --rate-limits with the contract's limits as they are.
func rateLimitsHelp() string {
	d := server.DefaultRateLimits()
	return fmt.Sprintf("requests admitted in any rolling minute: empty or default for the contract's limits "+
		"(read=%d,write=%d,org_read=%d,org_write=%d,ip=%d,failed_auth=%d, and registrations=%d OAuth client "+
		"registrations an hour), off to admit everything, or NAME=N overrides of some of them such as read=240,org_read=1200",
		d.Read, d.Write, d.OrgRead, d.OrgWrite, d.IP, d.FailedAuth, d.Registrations)
}

// startedByGoRun reports whether exe, the running binary, is one `go run` built: run
// from its temporary work folder ($GOTMPDIR/go-build*/b001/exe/NAME) the first time, and
// from the build cache ($GOCACHE/XX/HASH-d/NAME) when the same build runs again.
func startedByGoRun(exe string) bool {
	dir := filepath.ToSlash(filepath.Dir(exe))
	if path.Base(dir) == "exe" && strings.Contains(dir, "/go-build") {
		return true
	}
	return goCacheEntry.MatchString(dir)
}

// goCacheEntry is a build cache folder holding an executable go run cached: two hex
// digits, then the SHA-256 of the build and "-d".
var goCacheEntry = regexp.MustCompile(`/[0-9a-f]{2}/[0-9a-f]{64}-d$`)

// redactedURL is raw with any password in it masked, for the log: an endpoint may carry
// its credential as user:password@host.
func redactedURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// mcpURLNote says which URL MCP clients must be given. They check that the server's
// OAuth discovery names the very URL they were given, so with --base-url that is the
// only one; without it, discovery follows any loopback name for the listening port.
func mcpURLNote(base string, derived bool) string {
	if derived {
		return "MCP clients connect to " + base + "/v1/mcp (on this machine another loopback name for the same port, such as 127.0.0.1 or [::1], works too; for any other address set --base-url)"
	}
	return "MCP clients must use exactly " + base + "/v1/mcp (the --base-url): OAuth discovery names no other address"
}

// baseURLFor is the base URL when --base-url is not given: the listen address as a
// browser on this machine reaches it. A host in --addr is kept; none, 0.0.0.0 or ::
// become localhost; the port is the one actually bound (so :0 works too).
func baseURLFor(addr string, bound net.Addr) string {
	host, _, _ := net.SplitHostPort(addr)
	_, port, err := net.SplitHostPort(bound.String())
	if err != nil {
		_, port, _ = net.SplitHostPort(addr)
	}
	switch host {
	case "", "0.0.0.0", "::", "[::]":
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(strings.Trim(host, "[]"), port)
}

var globalLogging sync.Once

// setGlobalLogging sets zerolog's process-wide settings once, before any logger or
// goroutine uses them (tests boot Run many times in one process).
func setGlobalLogging() {
	globalLogging.Do(func() {
		zerolog.TimeFieldFormat = time.RFC3339Nano
	})
}

// newLogger returns the logger writing to w at level in format; console output is
// coloured only when colour is set (the output is a terminal).
func newLogger(w io.Writer, colour bool, level, format string) (zerolog.Logger, error) {
	lvl, err := zerolog.ParseLevel(level)
	if err != nil || level == "" {
		return zerolog.Logger{}, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	switch format {
	case "json":
	case "console":
		w = zerolog.ConsoleWriter{Out: w, NoColor: !colour, TimeFormat: time.RFC3339}
	default:
		return zerolog.Logger{}, fmt.Errorf("--log-format %q: want json or console", format)
	}
	return zerolog.New(w).Level(lvl).With().Timestamp().Logger(), nil
}

// isTerminal reports whether w is a terminal: only then does console output get colours.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// newModerator picks the engine: an OpenAI-compatible endpoint when a URL is set,
// otherwise the built-in offline engine.
func newModerator(url, key, model string) (moderator.Engine, error) {
	if url == "" {
		return moderator.NewBuiltin(), nil
	}
	m, err := moderator.NewOpenAI(moderator.OpenAIConfig{URL: url, Key: key, Model: model})
	if err != nil {
		return nil, fmt.Errorf("--model-url: %w", err)
	}
	return m, nil
}
