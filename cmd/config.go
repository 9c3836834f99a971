package cmd

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/agnivade/levenshtein"
)

// flagSet returns a FlagSet whose flags default to their INTERVIEWD_* environment
// variables: INTERVIEWD_ + the flag name upper-cased with dashes as underscores.
type flagSet struct {
	*flag.FlagSet
	env    func(string) (string, bool)
	badEnv []string
	// used is every INTERVIEWD_* variable a flag took its value from: what an admin
	// command sends through the socket so the server resolves the flags the same way.
	used map[string]string
	// args names each flag's argument in the usage ("--addr HOST:PORT"). Flags declared
	// without one take the name the command's synopsis gives them (see printUsage).
	args map[string]string
}

func newFlagSet(name string, env func(string) (string, bool)) *flagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return &flagSet{FlagSet: fs, env: env, used: map[string]string{}, args: map[string]string{}}
}

func envName(flagName string) string {
	return "INTERVIEWD_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

func (f *flagSet) lookup(name string) (string, bool) {
	v, ok := f.env(envName(name))
	if ok && v != "" {
		f.used[envName(name)] = v
		return v, true
	}
	return "", false
}

// str declares a string flag whose argument the usage calls arg (URL, DIR, ...).
func (f *flagSet) str(name, arg, def, help string) *string {
	if v, ok := f.lookup(name); ok {
		def = v
	}
	f.args[name] = arg
	return f.String(name, def, help+" (env "+envName(name)+")")
}

// integer declares an int flag whose argument the usage calls arg.
func (f *flagSet) integer(name, arg string, def int, help string) *int {
	f.args[name] = arg
	p := f.Int(name, def, help+" (env "+envName(name)+")")
	if v, ok := f.lookup(name); ok {
		if err := f.Set(name, v); err != nil {
			f.badEnv = append(f.badEnv, fmt.Sprintf("%s=%q is not a number", envName(name), v))
		}
	}
	return p
}

func (f *flagSet) boolean(name string, def bool, help string) *bool {
	p := f.Bool(name, def, help+" (env "+envName(name)+")")
	if v, ok := f.lookup(name); ok {
		if err := f.Set(name, v); err != nil {
			f.badEnv = append(f.badEnv, fmt.Sprintf("%s=%q is not true or false", envName(name), v))
		}
	}
	return p
}

// errHelp is returned by parse for -h, -help or --help: usage goes to stdout, exit 0.
var errHelp = flag.ErrHelp

// parse parses args and reports env and flag problems as one clear error, in the
// user's words: "--amount: "x" is not a number" rather than flag's parse error text.
func (f *flagSet) parse(args []string) error {
	err := f.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		return errHelp
	}
	if len(f.badEnv) > 0 {
		return fmt.Errorf("%s", strings.Join(f.badEnv, "; "))
	}
	if err != nil {
		return fmt.Errorf("%s: %s", f.Name(), f.errorText(err))
	}
	if f.NArg() > 0 {
		return fmt.Errorf("%s: unexpected argument %q", f.Name(), f.Arg(0))
	}
	return nil
}

// errorText rewrites the flag package's messages, which name flags with one dash
// ("-port") and mention Go's parser, into the double-dash form the usage shows, and
// suggests the flag meant when one is misspelt.
func (f *flagSet) errorText(err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		name = strings.TrimPrefix(name, "-")
		if near := f.nearest(name); near != "" {
			return fmt.Sprintf("unknown flag --%s; did you mean --%s?", name, near)
		}
		return fmt.Sprintf("unknown flag --%s (try: interviewd %s --help)", name, f.Name())
	}
	if rest, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return "--" + rest + " needs a value"
	}
	if strings.HasPrefix(msg, "invalid value ") {
		// invalid value "x" for flag -amount: parse error
		v, rest, _ := strings.Cut(strings.TrimPrefix(msg, "invalid value "), " for flag -")
		name, why, _ := strings.Cut(rest, ": ")
		if strings.HasSuffix(why, "parse error") || strings.HasSuffix(why, "invalid syntax") {
			why = "not a number"
		}
		return fmt.Sprintf("--%s %s: %s", name, v, why)
	}
	return msg
}

// nearest returns the declared flag closest to the misspelt name, or "" when none is
// close: at most two edits away (one for names of up to three letters), or the name
// of a single flag it begins.
func (f *flagSet) nearest(name string) string {
	best, bestDist := "", 0
	var prefixed []string
	f.VisitAll(func(fl *flag.Flag) {
		if strings.HasPrefix(fl.Name, name) {
			prefixed = append(prefixed, fl.Name)
		}
		d := levenshtein.ComputeDistance(name, fl.Name)
		if best == "" || d < bestDist {
			best, bestDist = fl.Name, d
		}
	})
	limit := 2
	if len(name) <= 3 {
		limit = 1
	}
	switch {
	case best != "" && bestDist <= limit:
		return best
	case len(prefixed) == 1:
		return prefixed[0]
	}
	return ""
}

// synopsisArg finds "--name ARG" in a synopsis and returns ARG ("" when the synopsis
// does not show the flag with an argument).
var synopsisArg = regexp.MustCompile(`--([a-z0-9-]+) ([^\s\[\]()]+)`)

// argName is what the usage calls fl's argument: the name it was declared with, else
// the one the synopsis shows, else VALUE; a boolean flag takes none.
func (f *flagSet) argName(fl *flag.Flag, synopsis string) string {
	if b, ok := fl.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		return ""
	}
	if arg := f.args[fl.Name]; arg != "" {
		return arg
	}
	for _, m := range synopsisArg.FindAllStringSubmatch(synopsis, -1) {
		if m[1] == fl.Name && !strings.HasPrefix(m[2], "-") {
			return m[2]
		}
	}
	return "VALUE"
}

// printUsage writes "usage: …", the summary and the flags, each with its argument's
// name, its help and its default.
func (f *flagSet) printUsage(w io.Writer, synopsis, summary string) {
	fmt.Fprintf(w, "%s\n\n%s\n", strings.TrimSpace("usage: interviewd "+f.Name()+" "+synopsis), summary)
	n := 0
	f.VisitAll(func(*flag.Flag) { n++ })
	if n == 0 {
		return // version: no "flags:" heading over nothing
	}
	fmt.Fprintf(w, "\nflags:\n")
	f.VisitAll(func(fl *flag.Flag) {
		line := "  --" + fl.Name
		if arg := f.argName(fl, synopsis); arg != "" {
			line += " " + arg
		}
		fmt.Fprintf(w, "%s\n      %s", line, fl.Usage)
		if fl.DefValue != "" && fl.DefValue != "0" && fl.DefValue != "false" {
			fmt.Fprintf(w, " (default %s)", fl.DefValue)
		}
		fmt.Fprintln(w)
	})
}
