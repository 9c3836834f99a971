// Command analysis-html is the built-in HTML report export formatter: a WASI command (GOOS=wasip1)
// that writes a study's analysis as one standalone, printable HTML page. See package interviewd/plugins for the ABI and
// plugins/internal/analysisdoc for its records; the logic lives in
// plugins/internal/htmlreport.
package main

import (
	"os"

	"interviewd/plugins/internal/htmlreport"
)

const describe = `{"kind":"formatter","name":"analysis-html","media_type":"` + htmlreport.MediaType + `","abi_version":1}` + "\n"

func main() {
	if len(os.Args) == 2 && os.Args[1] == "describe" {
		if _, err := os.Stdout.WriteString(describe); err != nil {
			os.Exit(1)
		}
		return
	}
	if err := htmlreport.Run(os.Stdin, os.Stdout); err != nil {
		_, _ = os.Stderr.WriteString("analysis-html: " + err.Error() + "\n")
		os.Exit(1)
	}
}
