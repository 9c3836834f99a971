// Command interviewd runs AI-moderated research interviews: one binary, one data folder.
//
//	interviewd [serve]          serve the API, the web app and participant pages
//	interviewd setup            create an organisation and its owner
//	interviewd keys create|list|revoke
//	interviewd credits add
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"interviewd/kv"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "interviewd:", oneLine(err))
		os.Exit(1)
	}
}

// run is the whole program: tests boot it end to end.
func run(ctx context.Context, args []string) error {
	return runWith(ctx, args, os.Stdout, os.Stderr, os.LookupEnv)
}

// runWith is run with its outputs and environment injected.
func runWith(ctx context.Context, args []string, stdout, stderr io.Writer, env func(string) (string, bool)) error {
	cmd := "serve"
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return serve(ctx, args, stdout, stderr, env)
	case "setup":
		return setupCommand(ctx, args, stdout, env)
	case "keys":
		return keysCommand(ctx, args, stdout, env)
	case "credits":
		return creditsCommand(ctx, args, stdout, env)
	case "org":
		return orgCommand(ctx, args, stdout, env)
	case "plugins":
		return pluginsCommand(ctx, args, stdout, env)
	case "backup":
		return runOffline(ctx, "backup", backupDefine, args, stdout, env)
	case "restore":
		return restoreCommand(ctx, args, stdout, env)
	case "interviews":
		if len(args) == 0 || args[0] != "erase" {
			return fmt.Errorf("interviews: want erase")
		}
		return runOffline(ctx, "interviews erase", interviewsEraseDefine, args[1:], stdout, env)
	case "help", "-h", "--help":
		_, err := io.WriteString(stdout, usage)
		return err
	}
	return fmt.Errorf("unknown command %q (try: interviewd help)", cmd)
}

const usage = `interviewd: AI-moderated research interviews

  interviewd [serve] [--addr :8080] [--data ./data] [--base-url URL] [--log-level info] [--log-format json|console]
  interviewd setup --org NAME --email EMAIL [--credits N]
  interviewd keys create --org ORG_ID --name NAME --env test|live --scopes a,b,c [--expires-days 30|90|180|365]
  interviewd keys list --org ORG_ID
  interviewd keys revoke --key KEY_ID
  interviewd credits add --org ORG_ID --amount N
  interviewd org redaction --org ORG_ID [--email on|off] [--phone on|off] [--card on|off] [--ip on|off] [--pattern NAME=REGEX]... [--clear-patterns]
  interviewd plugins add --org ORG_ID --file X.wasm
  interviewd plugins list --org ORG_ID
  interviewd plugins remove --org ORG_ID --kind redactor|formatter --name NAME
  interviewd org retention --org ORG_ID --days N|off
  interviewd interviews erase --id INTERVIEW_ID
  interviewd backup --out FILE
  interviewd restore --from FILE

Every flag also reads INTERVIEWD_<FLAG> (for example INTERVIEWD_ADDR).
`

// oneLine flattens an error for the terminal.
func oneLine(err error) string {
	var ke *kv.Error
	if errors.As(err, &ke) {
		return ke.Error()
	}
	return err.Error()
}
