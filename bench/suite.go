package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"interviewd/kv"
)

// runSuite prepares the target, runs each chosen scenario (and, in-process, its
// ceiling) and returns the figures. Progress goes to progress. It returns an error if
// the target cannot be prepared, a scenario's setup or smoke request fails, or ctx
// ends first.
func runSuite(ctx context.Context, o options, progress io.Writer) (rep report, err error) {
	var t *target
	if o.URL == "" {
		// Start-up first, before seeding and load warm the machine.
		if o.ExecRuns > 0 {
			f, err := measureExec(ctx, execOptions{Runs: o.ExecRuns, Idle: o.Idle, Studies: o.ExecStudies, Binary: o.ExecBinary}, progress)
			if err != nil {
				return report{}, fmt.Errorf("exec start-up: %w", err)
			}
			rep.Exec = &f
		}
		if rep.Startup, err = measureStartup(ctx); err != nil {
			return report{}, err
		}
		t, err = openLocal(ctx, o.Studies, progress, o.Limits, kv.Options{SoloCommits: o.SoloCommits})
	} else {
		t, err = openRemote(ctx, o.URL, o.Key, o.Studies)
		if err == nil {
			t.appSession, t.appInterview = o.AppSession, o.AppInterview
			if o.AgentKey != "" {
				t.agentKey = o.AgentKey
			}
		}
	}
	if err != nil {
		return report{}, err
	}
	defer func() { err = errors.Join(err, t.close()) }()
	for _, name := range o.Scenarios {
		sc, ok := findScenario(name)
		if !ok {
			return report{}, fmt.Errorf("unknown scenario %q", name)
		}
		r, err := runScenario(ctx, sc, t, o, progress)
		if errors.Is(err, errSkipped) {
			fmt.Fprintf(progress, "%s: skipped (against --url it needs --app-session)\n", name)
			continue
		}
		if err != nil {
			return report{}, err
		}
		rep.Results = append(rep.Results, r)
	}
	return rep, nil
}

// runScenario runs sc against t and, for an in-process target, the same load against
// a ceiling replaying t's answer. It returns an error if setup or the smoke request
// fails, the ceiling cannot start, or ctx ends during a run.
func runScenario(ctx context.Context, sc scenario, t *target, o options, progress io.Writer) (result, error) {
	w, err := sc.setup(ctx, t)
	if err != nil {
		return result{}, err
	}
	a, err := capture(t, w.newWorker(0), w.sample)
	if err != nil {
		return result{}, fmt.Errorf("%s: %w", sc.name, err)
	}
	conns := o.Conns
	if sc.conns != nil {
		conns = sc.conns(o)
	}
	fmt.Fprintf(progress, "%s: %d connections for %s against %s (%d-byte answers)\n", sc.name, conns, o.Duration, t.baseURL, len(a.body))
	r := result{Scenario: sc.name, Conns: conns, Duration: o.Duration}
	var until func() bool
	if o.UntilEnough {
		until = w.enough
	}
	var before kv.CommitStats
	if t.db != nil {
		before = t.db.CommitStats()
	}
	l := drive(ctx, t.addr, t.tls, conns, o.Duration, until, w.newWorker)
	r.stats = summarise(l)
	if t.db != nil {
		r.Commits = commitFiguresOf(before, t.db.CommitStats(), l.elapsed)
	}
	if err := ctx.Err(); err != nil {
		return result{}, err
	}
	if w.verify != nil {
		if r.Checks, err = w.verify(ctx); err != nil {
			return result{}, fmt.Errorf("%s: verify: %w", sc.name, err)
		}
	}
	if !t.local {
		return r, nil
	}
	addr, stop, err := startCeiling(a)
	if err != nil {
		return result{}, fmt.Errorf("%s ceiling: %w", sc.name, err)
	}
	fmt.Fprintf(progress, "%s: the same load against its ceiling at %s\n", sc.name, addr)
	c := summarise(drive(ctx, addr, false, conns, o.Duration, nil, w.newWorker))
	if err := errors.Join(stop(), ctx.Err()); err != nil {
		return result{}, fmt.Errorf("%s ceiling: %w", sc.name, err)
	}
	r.Ceiling = &c
	return r, nil
}
