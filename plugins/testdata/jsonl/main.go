// Command jsonl is an example export formatter: it writes each record as one line of
// JSON (JSON Lines). It is what an organisation's own formatter looks like; see
// README.md in this folder.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
)

// descriptor is what the host reads when it runs the plugin with "describe".
const descriptor = `{"kind":"formatter","name":"jsonl","media_type":"application/x-ndjson","abi_version":1}`

func main() {
	if len(os.Args) == 2 && os.Args[1] == "describe" {
		fmt.Println(descriptor)
		return
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "jsonl:", err)
		os.Exit(1)
	}
}

func run() error {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 16<<20) // the longest record line accepted
	out := bufio.NewWriter(os.Stdout)

	// The first line is {"config": {...}}; this formatter has no settings.
	if !in.Scan() {
		return fmt.Errorf("no config line")
	}
	var first struct {
		Config json.RawMessage `json:"config"`
	}
	if err := json.Unmarshal(in.Bytes(), &first); err != nil || first.Config == nil {
		return fmt.Errorf("the first line must be {\"config\": {...}}")
	}

	// Then one record per line: write each back compactly.
	var line bytes.Buffer
	for n := 1; in.Scan(); n++ {
		line.Reset()
		if err := json.Compact(&line, in.Bytes()); err != nil {
			return fmt.Errorf("record %d: %w", n, err)
		}
		line.WriteByte('\n')
		if _, err := out.Write(line.Bytes()); err != nil {
			return err
		}
	}
	if err := in.Err(); err != nil {
		return err
	}
	return out.Flush()
}
