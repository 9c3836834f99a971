package main

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// load is what one timed run measured.
type load struct {
	requests  int
	errors    int             // transport errors and non-2xx answers
	elapsed   time.Duration   // from the first worker's start to the last one's end
	latencies []time.Duration // every request's, sorted
}

// workerLoad is one worker's record. Each worker writes only its own, so the hot path
// takes no lock; the slices are merged once every worker has stopped.
type workerLoad struct {
	latencies []time.Duration
	errors    int
}

// expectedRate sizes the latency slices up front (requests per second over all
// workers) so appending on the hot path almost never reallocates.
const expectedRate = 100_000

// untilEnoughWait bounds how long past its duration a run waits for its workload to
// have done enough: generous, as it only ever matters on a badly loaded machine.
const untilEnoughWait = 2 * time.Minute

// drive runs conns workers against addr for d (or until ctx ends) and, when until is
// set, on past d until until reports true or untilEnoughWait more has passed. Each
// worker owns one connection and keeps exactly one request in flight: it sends the
// next request when the previous answer has been read.
func drive(ctx context.Context, addr string, tls bool, conns int, d time.Duration, until func() bool, newWorker func(int) requestFunc) load {
	return driveOver(ctx, []string{addr}, tls, conns, d, until, newWorker)
}

// driveOver is drive with the workers spread over addrs in turn (several nodes behind
// what a load balancer would do).
func driveOver(ctx context.Context, addrs []string, tls bool, conns int, d time.Duration, until func() bool, newWorker func(int) requestFunc) load {
	var stop atomic.Bool
	defer context.AfterFunc(ctx, func() { stop.Store(true) })()
	per := min(int(d.Seconds()*expectedRate)/conns+1024, 1<<20)
	records := make([]workerLoad, conns)
	var wg sync.WaitGroup
	start := time.Now()
	end := start.Add(d)
	for w := range conns {
		next := newWorker(w)
		hc := newClient(addrs[w%len(addrs)], tls)
		records[w].latencies = make([]time.Duration, 0, per)
		wg.Go(func() {
			defer hc.CloseIdleConnections()
			records[w] = work(hc, next, end, until, &stop, records[w].latencies)
		})
	}
	wg.Wait()
	elapsed := time.Since(start)

	var l load
	l.elapsed = elapsed
	n := 0
	for _, r := range records {
		n += len(r.latencies)
		l.errors += r.errors
	}
	l.latencies = make([]time.Duration, 0, n)
	for _, r := range records {
		l.latencies = append(l.latencies, r.latencies...)
	}
	slices.Sort(l.latencies)
	l.requests = n
	return l
}

// work sends requests on hc until end (and, when set, until reports true, within
// untilEnoughWait past end) or stop, appending each one's latency to lat.
func work(hc *fasthttp.HostClient, next requestFunc, end time.Time, until func() bool, stop *atomic.Bool, lat []time.Duration) workerLoad {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	r := workerLoad{latencies: lat}
	var last *fasthttp.Response
	for !stop.Load() {
		next(req, last)
		t0 := time.Now()
		err := hc.Do(req, resp)
		t1 := time.Now()
		r.latencies = append(r.latencies, t1.Sub(t0))
		last = resp
		if err != nil {
			last = nil
		}
		if code := resp.StatusCode(); err != nil || code < 200 || code > 299 {
			r.errors++
		}
		if !t1.Before(end) && (until == nil || until() || t1.After(end.Add(untilEnoughWait))) {
			break
		}
	}
	if last != nil {
		next(req, last) // hand over the last answer; this request is never sent
	}
	return r
}
