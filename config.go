package main

import (
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
}

func newFlagSet(name string, env func(string) (string, bool)) *flagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return &flagSet{FlagSet: fs, env: env}
}

func envName(flagName string) string {
	return "INTERVIEWD_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

func (f *flagSet) str(name, def, help string) *string {
	if v, ok := f.env(envName(name)); ok && v != "" {
		def = v
	}
	return f.String(name, def, help+" (env "+envName(name)+")")
}

func (f *flagSet) integer(name string, def int, help string) *int {
	p := f.Int(name, def, help+" (env "+envName(name)+")")
	if v, ok := f.env(envName(name)); ok && v != "" {
		if err := f.Set(name, v); err != nil {
			f.badEnv = append(f.badEnv, fmt.Sprintf("%s=%q is not a number", envName(name), v))
		}
	}
	return p
}

// parse parses args and reports env and flag problems as one clear error.
func (f *flagSet) parse(args []string) error {
	if len(f.badEnv) > 0 {
		return fmt.Errorf("%s", strings.Join(f.badEnv, "; "))
	}
	if err := f.Parse(args); err != nil {
		return fmt.Errorf("%s: %w", f.Name(), err)
	}
	if f.NArg() > 0 {
		return fmt.Errorf("%s: unexpected argument %q", f.Name(), f.Arg(0))
	}
	return nil
}
