package cmd

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/agnivade/levenshtein"

	"interviewd/kv"
)

// command is one row of the command table: everything `interviewd help` lists.
//
// Adding an admin command is one row with define set: it gets --data, --help and its
// usage, and runs both ways without more code: against the data folder opened directly
// when no server holds it, and inside the running server through DATA/admin.sock when one
// does (see admin_socket.go). define declares the flags and returns a check that runs
// once they are parsed; check validates and converts every flag, so bad arguments fail
// before anything touches disk, and returns the function that does the work against a
// *kv.DB and prints to out. Name any flag that takes a local file path in paths: the
// client makes it absolute before the server sees it.
type command struct {
	name     string // "keys create"
	synopsis string // the flags, for usage lines
	summary  string
	// Admin commands.
	define  func(fs *flagSet) func() (adminRun, error)
	paths   []string // flags naming local files
	creates bool     // may create the data folder (setup); others need an existing one
	// Other commands (serve, version) run on their own.
	main func(ctx context.Context, args []string, io stdio) error
}

// adminRun is an admin command's work, run against whichever DB holds the data.
type adminRun func(ctx context.Context, db *kv.DB, out io.Writer) error

// stdio is what a command reads and writes besides its arguments.
type stdio struct {
	stdout, stderr io.Writer
	env            func(string) (string, bool)
}

// commands is the table. It is a function so rows may refer to it (help lists it).
func commands() []*command {
	return []*command{
		{name: "serve", synopsis: "[--addr :8080] [--data ./data] [--base-url URL] [--log-level info] [--log-format json|console] ...",
			summary: "Serve the API, the MCP server and the participant pages (the default command).", main: serveCommand},
		{name: "version", synopsis: "", summary: "Print the version, VCS revision and Go version.", main: versionCommand},
		setupRow(),
		keysCreateRow(), keysListRow(), keysRevokeRow(),
		creditsAddRow(), creditsShowRow(),
		orgsListRow(),
		orgRedactionRow(), orgRetentionRow(),
		pluginsAddRow(), pluginsListRow(), pluginsRemoveRow(),
		interviewsEraseRow(),
		backupRow(), backupVerifyRow(), restoreRow(), migrateRow(),
		mailOutboxRow(),
	}
}

// isHelp reports whether arg asks for help.
func isHelp(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help" || arg == "help"
}

// Run is the program with its outputs and environment injected: the tests, and the
// whole-binary suites, boot it end to end in their own process. ctx's end stops serve.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, env func(string) (string, bool)) error {
	setGlobalLogging()
	sio := stdio{stdout: stdout, stderr: stderr, env: env}
	table := commands()
	if len(args) == 0 || (strings.HasPrefix(args[0], "-") && !isHelp(args[0]) && args[0] != "--version") {
		return serveCommand(ctx, args, sio)
	}
	switch {
	case isHelp(args[0]):
		if len(args) > 1 { // help keys create
			return Run(ctx, append(args[1:], "--help"), stdout, stderr, env)
		}
		return printUsage(stdout, table)
	case args[0] == "--version":
		return versionCommand(ctx, nil, sio)
	}
	cmd, rest := findCommand(table, args)
	if cmd == nil {
		return groupOrUnknown(table, args, stdout)
	}
	if cmd.main != nil {
		return cmd.main(ctx, rest, sio)
	}
	return runAdmin(ctx, cmd, rest, sio)
}

// findCommand matches "group sub" before "name" and returns the remaining arguments.
func findCommand(table []*command, args []string) (*command, []string) {
	if len(args) > 1 {
		for _, c := range table {
			if c.name == args[0]+" "+args[1] {
				return c, args[2:]
			}
		}
	}
	for _, c := range table {
		if c.name == args[0] {
			return c, args[1:]
		}
	}
	return nil, nil
}

// groupOrUnknown handles "keys", "keys --help" and "keys frob": a group's usage on
// request, otherwise an error naming its subcommands.
func groupOrUnknown(table []*command, args []string, stdout io.Writer) error {
	var subs []*command
	for _, c := range table {
		if strings.HasPrefix(c.name, args[0]+" ") {
			subs = append(subs, c)
		}
	}
	if len(subs) == 0 {
		if near := nearestCommand(table, args[0]); near != "" {
			return fmt.Errorf("unknown command %q; did you mean %s?", args[0], near)
		}
		return fmt.Errorf("unknown command %q (try: interviewd help)", args[0])
	}
	if len(args) > 1 && isHelp(args[1]) {
		return printUsage(stdout, subs)
	}
	names := make([]string, len(subs))
	for i, c := range subs {
		names[i] = strings.TrimPrefix(c.name, args[0]+" ")
	}
	want := strings.Join(names[:len(names)-1], ", ")
	if want != "" {
		want += " or "
	}
	want += names[len(names)-1]
	if len(args) == 1 {
		return fmt.Errorf("%s: want %s (try: interviewd %s --help)", args[0], want, args[0])
	}
	return fmt.Errorf("%s: unknown subcommand %q (want %s)", args[0], args[1], want)
}

// nearestCommand returns the command or group name at most two edits from word (one
// for words of up to three letters), or "".
func nearestCommand(table []*command, word string) string {
	limit := 2
	if len(word) <= 3 {
		limit = 1
	}
	best, bestDist := "", limit+1
	for _, c := range table {
		first, _, _ := strings.Cut(c.name, " ")
		if d := levenshtein.ComputeDistance(word, first); d < bestDist {
			best, bestDist = first, d
		}
	}
	return best
}

func printUsage(w io.Writer, table []*command) error {
	var b strings.Builder
	b.WriteString("interviewd: AI-moderated research interviews\n\nusage:\n")
	width := 0
	for _, c := range table {
		width = max(width, len(c.name))
	}
	for _, c := range table {
		summary, _, _ := strings.Cut(c.summary, "\n")
		fmt.Fprintf(&b, "  interviewd %-*s  %s\n", width, c.name, summary)
	}
	b.WriteString("\n`interviewd COMMAND --help` shows a command's flags. Every flag of serve (and --data)\n" +
		"also reads INTERVIEWD_<FLAG> (for example INTERVIEWD_ADDR). While a server runs, admin\n" +
		"commands go to it through DATA/admin.sock; otherwise they open the data folder directly.\n")
	_, err := io.WriteString(w, b.String())
	return err
}
