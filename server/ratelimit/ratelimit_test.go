package ratelimit

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

// admitN makes n requests at now and returns how many were admitted.
func admitN(tb testing.TB, r *Limiter, now time.Time, n int, cred, org string, write bool) int {
	tb.Helper()
	ok := 0
	for range n {
		if r.Admit(now, cred, org, write).OK {
			ok++
		}
	}
	return ok
}

func mustAdmit(tb testing.TB, d Decision) {
	tb.Helper()
	if !d.OK {
		tb.Fatalf("refused (%+v), want admitted", d)
	}
}

func mustRefuse(tb testing.TB, d Decision, retryAfter int) {
	tb.Helper()
	if d.OK {
		tb.Fatalf("admitted (%+v), want refused", d)
	}
	if d.RetryAfter != retryAfter {
		tb.Fatalf("RetryAfter = %d, want %d", d.RetryAfter, retryAfter)
	}
}

func TestRateLimiterCredentialRead(t *testing.T) {
	r := New(Defaults())
	// 120 reads spread over 11.9 seconds, the first at 0.
	for i := range 120 {
		mustAdmit(t, r.Admit(at(time.Duration(i)*100*time.Millisecond), "key", "org", false))
	}
	t.Run("Err121stWithinMinute", func(t *testing.T) {
		d := r.Admit(at(20*time.Second), "key", "org", false)
		mustRefuse(t, d, 40) // the first read leaves the window at 60 s
		if d.Limit != 120 || d.Remaining != 0 || d.Reset != 40 {
			t.Errorf("Limit/Remaining/Reset = %d/%d/%d, want 120/0/40", d.Limit, d.Remaining, d.Reset)
		}
	})
	t.Run("ErrJustBeforeSlotFrees", func(t *testing.T) {
		mustRefuse(t, r.Admit(at(60*time.Second-time.Millisecond), "key", "org", false), 1)
	})
	t.Run("OKExactlyOneWhenOneSlotFrees", func(t *testing.T) {
		mustAdmit(t, r.Admit(at(60*time.Second), "key", "org", false))
		// The next slot frees at 60.1 s: a fraction of a second rounds up to 1.
		mustRefuse(t, r.Admit(at(60*time.Second), "key", "org", false), 1)
	})
	t.Run("OKOtherCredentialUnaffected", func(t *testing.T) {
		mustAdmit(t, r.Admit(at(60*time.Second), "other", "org", false))
	})
}

func TestRateLimiterOrganisationReads(t *testing.T) {
	r := New(Defaults())
	total := 0
	perCred := make([]int, 6)
	for c := range 6 {
		perCred[c] = admitN(t, r, t0, 110, fmt.Sprintf("key%d", c), "org", false)
		total += perCred[c]
	}
	if total != 600 {
		t.Fatalf("admitted %d reads across 6 credentials (%v), want exactly 600", total, perCred)
	}
	if want := []int{110, 110, 110, 110, 110, 50}; fmt.Sprint(perCred) != fmt.Sprint(want) {
		t.Errorf("per credential = %v, want %v", perCred, want)
	}
	d := r.Admit(at(10*time.Second), "key7", "org", false)
	mustRefuse(t, d, 50)
	if d.Limit != 600 {
		t.Errorf("binding Limit = %d, want the organisation's 600", d.Limit)
	}
	mustAdmit(t, r.Admit(at(10*time.Second), "key7", "other-org", false))
}

func TestRateLimiterWritesApartFromReads(t *testing.T) {
	r := New(Defaults())
	if n := admitN(t, r, t0, 25, "key", "org", true); n != 20 {
		t.Fatalf("admitted %d writes, want 20", n)
	}
	mustRefuse(t, r.Admit(at(time.Second), "key", "org", true), 59)
	if n := admitN(t, r, at(time.Second), 120, "key", "org", false); n != 120 {
		t.Errorf("admitted %d reads after writes ran out, want 120", n)
	}
}

func TestRateLimiterRefusedConsumeNothing(t *testing.T) {
	t.Run("OKCredential", func(t *testing.T) {
		r := New(Defaults())
		for i := range 120 {
			mustAdmit(t, r.Admit(at(time.Duration(i)*100*time.Millisecond), "key", "org", false))
		}
		if n := admitN(t, r, at(30*time.Second), 500, "key", "org", false); n != 0 {
			t.Fatalf("admitted %d over the limit", n)
		}
		// At 60 s only the first read has left the window: exactly one slot.
		if n := admitN(t, r, at(60*time.Second), 5, "key", "org", false); n != 1 {
			t.Errorf("admitted %d when one slot freed, want 1", n)
		}
	})
	t.Run("OKOrganisationNotChargedForCredentialRefusals", func(t *testing.T) {
		r := New(Defaults())
		if n := admitN(t, r, t0, 100, "a", "org", true); n != 20 {
			t.Fatalf("credential a: %d writes, want 20", n)
		}
		if n := admitN(t, r, t0, 30, "b", "org", true) + admitN(t, r, t0, 30, "c", "org", true); n != 40 {
			t.Fatalf("credentials b and c: %d writes, want 40", n)
		}
		d := r.Admit(t0, "d", "org", true)
		mustRefuse(t, d, 60)
		if d.Limit != 60 {
			t.Errorf("binding Limit = %d, want the organisation's 60", d.Limit)
		}
	})
	t.Run("OKCredentialNotChargedForOrganisationRefusals", func(t *testing.T) {
		r := New(Limits{Write: 5, OrgWrite: 5})
		if n := admitN(t, r, t0, 5, "a", "org", true); n != 5 {
			t.Fatalf("credential a: %d writes, want 5", n)
		}
		if n := admitN(t, r, t0, 10, "b", "org", true); n != 0 {
			t.Fatalf("credential b admitted %d with the organisation full", n)
		}
		// Credential b's own window is untouched: in another organisation it has all 5.
		if n := admitN(t, r, t0, 10, "b", "org2", true); n != 5 {
			t.Errorf("credential b in org2: %d writes, want 5", n)
		}
	})
}

func TestRateLimiterRollingWindow(t *testing.T) {
	r := New(Defaults())
	if n := admitN(t, r, t0, 60, "key", "org", false); n != 60 {
		t.Fatalf("t=0: %d, want 60", n)
	}
	if n := admitN(t, r, at(30*time.Second), 60, "key", "org", false); n != 60 {
		t.Fatalf("t=30s: %d, want 60", n)
	}
	if n := admitN(t, r, at(59*time.Second), 1, "key", "org", false); n != 0 {
		t.Fatalf("t=59s: a fixed-minute counter would reset here; admitted %d", n)
	}
	if n := admitN(t, r, at(61*time.Second), 60, "key", "org", false); n != 60 {
		t.Fatalf("t=61s: %d, want 60", n)
	}
	// The 61st at 61 s: the reads of 30 s are still inside until 90 s.
	mustRefuse(t, r.Admit(at(61*time.Second), "key", "org", false), 29)
}

func TestRateLimiterOrganisationBindsBeforeCredential(t *testing.T) {
	r := New(Defaults())
	for c := range 3 {
		for i := range 20 {
			mustAdmit(t, r.Admit(at(time.Duration(c*20+i)*time.Second/2), fmt.Sprintf("k%d", c), "org", true))
		}
	}
	// 60 writes at 0, 0.5, ..., 29.5 s. A fourth credential has room of its own but the
	// organisation has none until the write of 0 s leaves at 60 s.
	d := r.Admit(at(40*time.Second), "k3", "org", true)
	mustRefuse(t, d, 20)
	if d.Limit != 60 || d.Remaining != 0 {
		t.Errorf("Limit/Remaining = %d/%d, want 60/0", d.Limit, d.Remaining)
	}
	mustAdmit(t, r.Admit(at(60*time.Second), "k3", "org", true))
	mustRefuse(t, r.Admit(at(60*time.Second), "k3", "org", true), 1)
}

func TestRateLimiterOff(t *testing.T) {
	r := New(Limits{Off: true})
	if n := admitN(t, r, t0, 10000, "key", "org", true); n != 10000 {
		t.Fatalf("admitted %d of 10000 with limits off", n)
	}
	for range 1000 {
		if !r.AdmitIP(t0, "192.0.2.1").OK {
			t.Fatal("admitIP refused with limits off")
		}
	}
	d := r.Admit(t0, "key", "org", false)
	if got := d.AppendPolicy(nil); len(got) != 0 {
		t.Errorf("RateLimit-Policy with limits off = %q, want nothing", got)
	}
	if got := d.AppendRateLimit(nil); len(got) != 0 {
		t.Errorf("RateLimit with limits off = %q, want nothing", got)
	}
}

func TestRateLimiterIP(t *testing.T) {
	r := New(Limits{IP: 3})
	for range 3 {
		mustAdmit(t, r.AdmitIP(t0, "192.0.2.1"))
	}
	d := r.AdmitIP(at(15*time.Second), "192.0.2.1")
	mustRefuse(t, d, 45)
	if got := string(d.AppendRateLimit(nil)); got != `"ip";r=0;t=45` {
		t.Errorf("RateLimit = %s", got)
	}
	mustAdmit(t, r.AdmitIP(at(15*time.Second), "192.0.2.2"))
	// A credential that happens to equal an address shares nothing with it.
	mustAdmit(t, r.Admit(at(15*time.Second), "192.0.2.1", "192.0.2.1", false))
	mustAdmit(t, r.AdmitIP(at(60*time.Second), "192.0.2.1"))
}

func TestRateLimiterDefaultsFillZeroFields(t *testing.T) {
	r := New(Limits{Write: 2})
	if n := admitN(t, r, t0, 5, "key", "org", true); n != 2 {
		t.Errorf("writes = %d, want the configured 2", n)
	}
	if n := admitN(t, r, t0, 200, "key", "org", false); n != 120 {
		t.Errorf("reads = %d, want the default 120", n)
	}
	if r.window != int64(time.Minute) {
		t.Errorf("window = %v, want the default minute", time.Duration(r.window))
	}
}

func TestRateLimiterHeaders(t *testing.T) {
	r := New(Defaults())
	admitN(t, r, t0, 2, "key", "org", false)
	admitN(t, r, at(5*time.Second), 2, "other", "org", false)
	tests := []struct {
		name       string
		decide     func() Decision
		wantPolicy string
		wantLimit  string
	}{
		{
			"OKRead",
			func() Decision { return r.Admit(at(11500*time.Millisecond), "key", "org", false) },
			`"read";q=120;w=60, "org_read";q=600;w=60`,
			// key: reads at 0, 0, 11.5 → 117 left, the first leaves at 60 s → 48.5 s → 49.
			`"read";r=117;t=49, "org_read";r=595;t=49`,
		},
		{
			"OKWrite",
			func() Decision { return r.Admit(at(20*time.Second), "key", "org", true) },
			`"write";q=20;w=60, "org_write";q=60;w=60`,
			`"write";r=19;t=60, "org_write";r=59;t=60`,
		},
		{
			"OKIP",
			func() Decision { return r.AdmitIP(t0, "2001:db8::1") },
			`"ip";q=60;w=60`,
			`"ip";r=59;t=60`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := tt.decide()
			if got := string(d.AppendPolicy(nil)); got != tt.wantPolicy {
				t.Errorf("RateLimit-Policy = %s, want %s", got, tt.wantPolicy)
			}
			if got := string(d.AppendRateLimit([]byte("x"))); got != "x"+tt.wantLimit {
				t.Errorf("RateLimit = %s, want %s appended to x", got, tt.wantLimit)
			}
		})
	}
	t.Run("OKBindingIsFewestLeft", func(t *testing.T) {
		r := New(Limits{Read: 10, OrgRead: 12})
		admitN(t, r, t0, 8, "a", "org", false)
		d := r.Admit(t0, "b", "org", false) // b has 9 left, the organisation 3
		if d.Limit != 12 || d.Remaining != 3 || d.Reset != 60 {
			t.Errorf("Limit/Remaining/Reset = %d/%d/%d, want 12/3/60", d.Limit, d.Remaining, d.Reset)
		}
	})
	t.Run("OKWindowSecondsRoundUp", func(t *testing.T) {
		r := New(Limits{Window: 1500 * time.Millisecond})
		if got := string(r.AdmitIP(t0, "a").AppendPolicy(nil)); got != `"ip";q=60;w=2` {
			t.Errorf("RateLimit-Policy = %s", got)
		}
	})
}

func TestRateLimiterSweep(t *testing.T) {
	r := New(Defaults())
	count := func() int {
		n := 0
		for i := range r.shards {
			r.shards[i].mu.Lock()
			n += len(r.shards[i].logs)
			r.shards[i].mu.Unlock()
		}
		return n
	}
	for i := range 50 {
		r.Admit(t0, fmt.Sprintf("old%d", i), "org-old", false)
	}
	r.Admit(at(30*time.Second), "recent", "org-new", true)
	r.AdmitIP(at(30*time.Second), "192.0.2.9")
	if n := count(); n != 54 {
		t.Fatalf("%d logs before sweep, want 54", n)
	}
	r.Sweep(at(59 * time.Second))
	if n := count(); n != 54 {
		t.Fatalf("%d logs after an early sweep, want all 54 kept", n)
	}
	r.Sweep(at(60 * time.Second))
	if n := count(); n != 3 {
		t.Fatalf("%d logs after sweeping at 60 s, want the 3 recent ones", n)
	}
	r.Sweep(at(90 * time.Second))
	if n := count(); n != 0 {
		t.Fatalf("%d logs after everything went idle, want 0", n)
	}
	// A swept key starts afresh with its whole allowance.
	if n := admitN(t, r, at(90*time.Second), 200, "old1", "org-old", false); n != 120 {
		t.Errorf("admitted %d after sweep, want 120", n)
	}
}

// TestRateLimiterMatchesModel drives random traffic through the limiter and a naive
// model that keeps every admission and counts those inside the window, and requires the
// same decisions, remaining counts and Retry-After values.
func TestRateLimiterMatchesModel(t *testing.T) {
	limits := Limits{Read: 7, Write: 3, OrgRead: 12, OrgWrite: 5, IP: 4, Window: 10 * time.Second}
	r := New(limits)
	rng := rand.New(rand.NewPCG(1, 2))
	admitted := map[string][]time.Time{} // "class/id" → admission times
	inWindow := func(k string, now time.Time) []time.Time {
		var in []time.Time
		for _, a := range admitted[k] {
			if now.Sub(a) < limits.Window {
				in = append(in, a)
			}
		}
		admitted[k] = in // time only moves on, so what left the window stays out
		return in
	}
	waitOf := func(k string, now time.Time, limit int) time.Duration {
		in := inWindow(k, now)
		if len(in) < limit {
			return 0
		}
		return in[len(in)-limit].Add(limits.Window).Sub(now)
	}
	now := t0
	for step := range 20000 {
		now = now.Add(time.Duration(rng.IntN(400)) * time.Millisecond)
		cred := fmt.Sprintf("k%d", rng.IntN(4))
		org := fmt.Sprintf("o%d", rng.IntN(2))
		write := rng.IntN(3) == 0
		ck, ok, cl, ol := "read/"+cred, "org_read/"+org, limits.Read, limits.OrgRead
		if write {
			ck, ok, cl, ol = "write/"+cred, "org_write/"+org, limits.Write, limits.OrgWrite
		}
		wait := max(waitOf(ck, now, cl), waitOf(ok, now, ol))
		d := r.Admit(now, cred, org, write)
		if d.OK != (wait == 0) {
			t.Fatalf("step %d: OK = %v, model wait %v", step, d.OK, wait)
		}
		if !d.OK {
			want := max(int((wait+time.Second-1)/time.Second), 1)
			if d.RetryAfter != want {
				t.Fatalf("step %d: RetryAfter = %d, model %d (wait %v)", step, d.RetryAfter, want, wait)
			}
			continue
		}
		admitted[ck] = append(admitted[ck], now)
		admitted[ok] = append(admitted[ok], now)
		wantRemaining := min(cl-len(inWindow(ck, now)), ol-len(inWindow(ok, now)))
		if d.Remaining != wantRemaining {
			t.Fatalf("step %d: Remaining = %d, model %d", step, d.Remaining, wantRemaining)
		}
	}
}

// TestRateLimiterHammer runs many goroutines against one credential and organisation
// (run it with -race) and checks the limits hold exactly under contention.
func TestRateLimiterHammer(t *testing.T) {
	t.Run("OKOneCredential", func(t *testing.T) {
		r := New(Defaults())
		var admitted atomic.Int64
		var wg sync.WaitGroup
		for g := range 16 {
			wg.Go(func() {
				for i := range 200 {
					// Everyone inside one window: at most 120 may pass.
					now := at(time.Duration(g*200+i) * time.Millisecond * 10)
					if r.Admit(now, "key", "org", false).OK {
						admitted.Add(1)
					}
				}
			})
		}
		wg.Wait()
		if n := admitted.Load(); n != 120 {
			t.Fatalf("admitted %d reads on one credential within a window, want exactly 120", n)
		}
	})
	t.Run("OKOneOrganisation", func(t *testing.T) {
		r := New(Defaults())
		var admitted atomic.Int64
		var wg sync.WaitGroup
		for g := range 32 {
			wg.Go(func() {
				cred := fmt.Sprintf("key%d", g%8)
				for range 100 {
					if r.Admit(t0, cred, "org", (g/8)%2 == 0).OK {
						admitted.Add(1)
					}
				}
			})
		}
		wg.Wait()
		// 8 credentials × 120 reads > 600, 8 × 20 writes > 60: the organisation binds.
		if n := admitted.Load(); n != 660 {
			t.Fatalf("admitted %d requests, want 600 reads + 60 writes", n)
		}
	})
}

func TestParse(t *testing.T) {
	def := Defaults()
	with := func(f func(*Limits)) Limits { l := Defaults(); f(&l); return l }
	tests := []struct {
		name    string
		in      string
		want    Limits
		wantErr string // substring of the error; empty means no error
	}{
		{"OKDefault", "default", def, ""},
		{"OKEmpty", "  ", def, ""},
		{"OKOff", "off", with(func(l *Limits) { l.Off = true }), ""},
		{"OKAll", "read=1,write=2,org_read=3,org_write=4,ip=5,failed_auth=6,registrations=7",
			Limits{Read: 1, Write: 2, OrgRead: 3, OrgWrite: 4, IP: 5, FailedAuth: 6, Registrations: 7, Window: time.Minute}, ""},
		{"OKRegistrations", "registrations=5000", with(func(l *Limits) { l.Registrations = 5000 }), ""},
		{"OKSubset", "write=40", with(func(l *Limits) { l.Write = 40 }), ""},
		{"OKSpaces", " org_read = 1200 , ip=10 ", with(func(l *Limits) { l.OrgRead, l.IP = 1200, 10 }), ""},
		{"OKMaximum", "read=100000000", with(func(l *Limits) { l.Read = 100000000 }), ""},
		{"ErrUnknownName", "reads=5", def, `unknown limit "reads"`},
		{"ErrCaseMatters", "Read=5", def, `unknown limit "Read"`},
		{"ErrNoValue", "read", def, `item "read" is not name=value`},
		{"ErrEmptyItem", "read=5,,write=3", def, `item "" is not name=value`},
		{"ErrNoName", "=5", def, `item "=5"`},
		{"ErrZero", "write=0", def, `write="0" is not a whole number from 1 to 100000000`},
		{"ErrNegative", "org_write=-1", def, `org_write="-1"`},
		{"ErrNonNumeric", "read=lots", def, `read="lots"`},
		{"ErrFraction", "read=1.5", def, `read="1.5"`},
		{"ErrTooLarge", "ip=100000001", def, `ip="100000001"`},
		{"ErrDuplicate", "read=5,read=6", def, `"read" is given more than once`},
		{"ErrOffMixed", "off,read=5", def, `item "off"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.in)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("error %v", err)
				}
			} else if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want one containing %s", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"default", "off", "read=1,write=2", "org_read=600,org_write=60,ip=9", "x=1", "read=-1", "read=1,read=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := Parse(s)
		if err != nil {
			if l != Defaults() {
				t.Fatalf("error %v with non-default limits %+v", err, l)
			}
			return
		}
		for _, v := range []int{l.Read, l.Write, l.OrgRead, l.OrgWrite, l.IP} {
			if v < 1 || v > maxLimit {
				t.Fatalf("accepted out-of-range limit %d from %q", v, s)
			}
		}
		if l.Window != time.Minute {
			t.Fatalf("window changed to %v", l.Window)
		}
	})
}

func BenchmarkAdmit(b *testing.B) {
	r := New(Defaults())
	creds := make([]string, 1000)
	orgs := make([]string, len(creds))
	for i := range creds {
		creds[i] = fmt.Sprintf("key_%04d_secretish", i)
		orgs[i] = fmt.Sprintf("org_%03d", i%100)
	}
	// Warm up: every credential and organisation seen, every ring grown to its limit.
	now := t0
	for range 130 {
		for i := range creds {
			r.Admit(now, creds[i], orgs[i], false)
		}
		now = now.Add(time.Second)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		now = now.Add(time.Millisecond)
		r.Admit(now, creds[i%len(creds)], orgs[i%len(creds)], false)
	}
}

func BenchmarkAdmitParallel(b *testing.B) {
	r := New(Defaults())
	creds := make([]string, 1000)
	orgs := make([]string, len(creds))
	for i := range creds {
		creds[i] = fmt.Sprintf("key_%04d_secretish", i)
		orgs[i] = fmt.Sprintf("org_%03d", i%100)
		r.Admit(t0, creds[i], orgs[i], false)
	}
	var clock atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			i++
			now := t0.Add(time.Duration(clock.Add(int64(time.Millisecond))))
			r.Admit(now, creds[i%len(creds)], orgs[i%len(creds)], false)
		}
	})
}

// Pair shows two one-window budgets in one pair of headers, under the names given, with
// the first's outcome; with limits off there are no headers.
func TestPair(t *testing.T) {
	first, second := New(Limits{IP: 2}), New(Limits{IP: 5})
	mustAdmit(t, first.AdmitIP(t0, "a"))
	d := Pair(first.AdmitIP(t0, "a"), "one", second.PeekIP(t0, "a"), "two")
	mustAdmit(t, d)
	if got := string(d.AppendPolicy(nil)); got != `"one";q=2;w=60, "two";q=5;w=60` {
		t.Errorf("RateLimit-Policy = %s", got)
	}
	if got := string(d.AppendRateLimit(nil)); got != `"one";r=0;t=60, "two";r=5;t=0` {
		t.Errorf("RateLimit = %s", got)
	}
	mustRefuse(t, Pair(first.AdmitIP(at(time.Second), "a"), "one", second.PeekIP(t0, "a"), "two"), 59)
	off := New(Limits{Off: true})
	d = Pair(off.AdmitIP(t0, "a"), "one", off.PeekIP(t0, "a"), "two")
	mustAdmit(t, d)
	if len(d.AppendPolicy(nil)) != 0 || len(d.AppendRateLimit(nil)) != 0 {
		t.Errorf("headers with limits off: %s / %s", d.AppendPolicy(nil), d.AppendRateLimit(nil))
	}
}
