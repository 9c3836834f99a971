//go:build linux || freebsd || netbsd || openbsd || dragonfly || solaris

package main

import (
	"syscall"
	"time"
)

// pollPause waits about d between two probes of a starting server. time.Sleep cannot:
// a Go timer shorter than a millisecond sleeps a whole one on Linux when nothing else
// is due (the netpoller waits in milliseconds), which made exec → first 200 a multiple
// of ~1.1 ms and its ratio to the bare binary jump by tenths between runs. nanosleep
// blocks this thread on a high-resolution timer instead.
func pollPause(d time.Duration) {
	ts := syscall.NsecToTimespec(d.Nanoseconds())
	for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
	}
}
