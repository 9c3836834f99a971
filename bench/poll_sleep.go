//go:build !(linux || freebsd || netbsd || openbsd || dragonfly || solaris)

package main

import "time"

// pollPause waits about d between two probes of a starting server.
func pollPause(d time.Duration) { time.Sleep(d) }
