package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// The database's own CPU. The nodes' CPU per request is the figure that compares the
// engines (it is what each node costs); with PostgreSQL on the same machine (as the
// README's figures are taken) the bench also reports the database server's CPU per
// request, so the whole cost of a request on a shared store is visible.

// databasePID returns the PID of the PostgreSQL server (postmaster) behind store when
// it runs on this machine and its processes are visible here, or 0.
func databasePID(ctx context.Context, store string) int {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cfg, err := pgx.ParseConfig(store)
	if err != nil {
		return 0
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return 0
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var backend int64
	if err := conn.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&backend); err != nil {
		return 0
	}
	st, err := readStat(int(backend))
	if err != nil {
		return 0 // another machine, or another PID namespace
	}
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", st.ppid))
	if err != nil || !strings.HasPrefix(string(comm), "postgres") {
		return 0
	}
	return st.ppid
}

// databaseCPU returns the CPU time (user and system) the PostgreSQL server with
// postmaster pm has used so far: its own, its living children's (the backends serving
// the nodes, the background workers) and that of the children it has reaped.
func databaseCPU(pm int) (time.Duration, error) {
	st, err := readStat(pm)
	if err != nil {
		return 0, err
	}
	total := st.utime + st.stime + st.cutime + st.cstime
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == pm {
			continue
		}
		c, err := readStat(pid)
		if err != nil || c.ppid != pm {
			continue // gone meanwhile, or not the server's
		}
		total += c.utime + c.stime
	}
	return time.Duration(total) * clockTick, nil
}

// procStat is what the bench reads of /proc/PID/stat (CPU in clock ticks).
type procStat struct {
	ppid                         int
	utime, stime, cutime, cstime int64
}

func readStat(pid int) (procStat, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, err
	}
	// The command name (field 2) may hold spaces: fields are counted after its ")".
	s := string(raw)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 15 {
		return procStat{}, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	var st procStat
	var errs [5]error
	st.ppid, errs[0] = strconv.Atoi(f[1])
	st.utime, errs[1] = strconv.ParseInt(f[11], 10, 64)
	st.stime, errs[2] = strconv.ParseInt(f[12], 10, 64)
	st.cutime, errs[3] = strconv.ParseInt(f[13], 10, 64)
	st.cstime, errs[4] = strconv.ParseInt(f[14], 10, 64)
	if err := errors.Join(errs[:]...); err != nil {
		return procStat{}, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return st, nil
}
