// Command csv is the built-in CSV export formatter: a WASI command (GOOS=wasip1) that
// turns rows of cells, the first being the header, into RFC 4180 CSV with spreadsheet
// formula triggers neutralised. See package interviewd/plugins for the ABI; the logic
// lives in plugins/internal/csvformat.
package main

import (
	"os"

	"interviewd/plugins/internal/csvformat"
)

const describe = `{"kind":"formatter","name":"csv","media_type":"` + csvformat.MediaType + `","abi_version":1}` + "\n"

func main() {
	if len(os.Args) == 2 && os.Args[1] == "describe" {
		if _, err := os.Stdout.WriteString(describe); err != nil {
			os.Exit(1)
		}
		return
	}
	if err := csvformat.Run(os.Stdin, os.Stdout); err != nil {
		_, _ = os.Stderr.WriteString("csv: " + err.Error() + "\n")
		os.Exit(1)
	}
}
