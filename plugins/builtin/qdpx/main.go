// Command qdpx is the built-in REFI-QDA project export formatter: a WASI command (GOOS=wasip1)
// that writes a study's analysis and its redacted transcripts as a REFI-QDA project (.qdpx). See package interviewd/plugins for the ABI and
// plugins/internal/analysisdoc for its records; the logic lives in
// plugins/internal/qdpx.
package main

import (
	"os"

	"interviewd/plugins/internal/qdpx"
)

const describe = `{"kind":"formatter","name":"qdpx","media_type":"` + qdpx.MediaType + `","abi_version":1}` + "\n"

func main() {
	if len(os.Args) == 2 && os.Args[1] == "describe" {
		if _, err := os.Stdout.WriteString(describe); err != nil {
			os.Exit(1)
		}
		return
	}
	if err := qdpx.Run(os.Stdin, os.Stdout); err != nil {
		_, _ = os.Stderr.WriteString("qdpx: " + err.Error() + "\n")
		os.Exit(1)
	}
}
