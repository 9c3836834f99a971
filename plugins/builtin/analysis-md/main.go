// Command analysis-md is the built-in Markdown report export formatter: a WASI command (GOOS=wasip1)
// that writes a study's analysis as a Markdown report. See package interviewd/plugins for the ABI and
// plugins/internal/analysisdoc for its records; the logic lives in
// plugins/internal/mdreport.
package main

import (
	"os"

	"interviewd/plugins/internal/mdreport"
)

const describe = `{"kind":"formatter","name":"analysis-md","media_type":"` + mdreport.MediaType + `","abi_version":1}` + "\n"

func main() {
	if len(os.Args) == 2 && os.Args[1] == "describe" {
		if _, err := os.Stdout.WriteString(describe); err != nil {
			os.Exit(1)
		}
		return
	}
	if err := mdreport.Run(os.Stdin, os.Stdout); err != nil {
		_, _ = os.Stderr.WriteString("analysis-md: " + err.Error() + "\n")
		os.Exit(1)
	}
}
