package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
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
}

func newFlagSet(name string, env func(string) (string, bool)) *flagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return &flagSet{FlagSet: fs, env: env, used: map[string]string{}}
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

func (f *flagSet) str(name, def, help string) *string {
	if v, ok := f.lookup(name); ok {
		def = v
	}
	return f.String(name, def, help+" (env "+envName(name)+")")
}

func (f *flagSet) integer(name string, def int, help string) *int {
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
		return fmt.Errorf("%s: %s", f.Name(), flagErrorText(err))
	}
	if f.NArg() > 0 {
		return fmt.Errorf("%s: unexpected argument %q", f.Name(), f.Arg(0))
	}
	return nil
}

// flagErrorText rewrites the flag package's messages, which name flags with one dash
// ("-port") and mention Go's parser, into the double-dash form the usage shows.
func flagErrorText(err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		return "unknown flag --" + name
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

// printUsage writes "usage: …", the summary and the flags with their defaults.
func (f *flagSet) printUsage(w io.Writer, synopsis, summary string) {
	fmt.Fprintf(w, "%s\n\n%s\n", strings.TrimSpace("usage: interviewd "+f.Name()+" "+synopsis), summary)
	n := 0
	f.VisitAll(func(*flag.Flag) { n++ })
	if n == 0 {
		return // version: no "flags:" heading over nothing
	}
	fmt.Fprintf(w, "\nflags:\n")
	f.VisitAll(func(fl *flag.Flag) {
		name, help := flag.UnquoteUsage(fl)
		line := "  --" + fl.Name
		if name != "" {
			line += " " + name
		}
		fmt.Fprintf(w, "%s\n      %s", line, help)
		if fl.DefValue != "" && fl.DefValue != "0" && fl.DefValue != "false" {
			fmt.Fprintf(w, " (default %s)", fl.DefValue)
		}
		fmt.Fprintln(w)
	})
}
