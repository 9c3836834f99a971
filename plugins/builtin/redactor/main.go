// Command redactor is the built-in redaction plugin: a WASI command (GOOS=wasip1) that
// replaces email addresses, phone numbers, payment card numbers, IP addresses and
// custom patterns in the cells of each record with labels such as [EMAIL]. See package
// interviewd/plugins for the ABI; the logic lives in plugins/internal/redact.
package main

import (
	"os"

	"interviewd/plugins/internal/redact"
)

const describe = `{"kind":"redactor","name":"redactor","abi_version":1}` + "\n"

func main() {
	if len(os.Args) == 2 && os.Args[1] == "describe" {
		if _, err := os.Stdout.WriteString(describe); err != nil {
			os.Exit(1)
		}
		return
	}
	if err := redact.Run(os.Stdin, os.Stdout); err != nil {
		_, _ = os.Stderr.WriteString("redactor: " + err.Error() + "\n")
		os.Exit(1)
	}
}
