// Command sandbox is a test plugin that misbehaves on request: the "mode" in its
// configuration picks what it does, so one module exercises every limit of the host.
// It describes itself as a redactor named "sandbox".
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// sink keeps allocations and results reachable so the compiler cannot drop them.
var sink []any

func main() {
	if len(os.Args) == 2 && os.Args[1] == "describe" {
		fmt.Println(`{"kind":"redactor","name":"sandbox","abi_version":1}`)
		return
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 1<<20)
	var first struct {
		Config struct {
			Mode string `json:"mode"`
		} `json:"config"`
	}
	if !in.Scan() || json.Unmarshal(in.Bytes(), &first) != nil {
		fail(1, "no config line")
	}
	var records [][]byte
	for in.Scan() {
		records = append(records, append([]byte(nil), in.Bytes()...))
	}
	switch mode := first.Config.Mode; mode {
	case "echo":
		for _, r := range records {
			os.Stdout.Write(append(r, '\n'))
		}
	case "loop":
		n := 0
		for {
			n++
		}
	case "recurse":
		// A loop-free call tree of 2^90 calls.
		sink = append(sink, fib(90))
	case "deep":
		sink = append(sink, depth(0))
	case "hog":
		for {
			sink = append(sink, make([]byte, 1<<20))
		}
	case "open":
		var errs []error
		for _, path := range []string{"/etc/passwd", "/", ".", "/proc/self/environ"} {
			f, err := os.Open(path)
			if err == nil {
				fmt.Printf("{\"leak\":%q}\n", path)
				f.Close()
				return
			}
			errs = append(errs, err)
		}
		fail(3, fmt.Sprint("no file could be opened: ", errs))
	case "probe":
		out, _ := json.Marshal(map[string]any{
			"env": os.Environ(), "args": os.Args, "unix": time.Now().Unix(),
		})
		fmt.Printf("%s\n", out)
	case "exit":
		fail(7, "asked to fail")
	case "panic":
		panic("asked to panic")
	case "badjson":
		for range records {
			fmt.Println("this is not json")
		}
	case "short":
		for _, r := range records[1:] {
			os.Stdout.Write(append(r, '\n'))
		}
	case "flood":
		line := make([]byte, 64<<10)
		for {
			if _, err := os.Stdout.Write(line); err != nil {
				fail(4, "stdout refused a write: "+err.Error())
			}
		}
	default:
		fail(1, "unknown mode "+mode)
	}
}

func fail(code int, msg string) {
	fmt.Fprintln(os.Stderr, "sandbox:", msg)
	os.Exit(code)
}

func fib(n int) int {
	if n < 2 {
		return n
	}
	return fib(n-1) + fib(n-2)
}

// depth recurses without end; the frame array makes each level use real stack.
func depth(n int) int {
	var frame [64]int
	frame[n%64] = n
	return depth(n+1) + frame[(n+1)%64]
}
