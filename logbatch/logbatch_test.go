package logbatch

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is an io.Writer whose content can be read while others write.
type syncBuffer struct {
	mu     sync.Mutex
	b      bytes.Buffer
	writes int
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes++
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (s *syncBuffer) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writes
}

// never is a delay no test run reaches: a batched line is written only by what the
// test does.
const never = time.Hour

func TestBatchedLinesWaitAndDirectLinesKeepOrder(t *testing.T) {
	var out syncBuffer
	w := New(&out, never)
	b := w.Batched()
	fmt.Fprint(b, "request 1\n")
	fmt.Fprint(b, "request 2\n")
	if got := out.String(); got != "" {
		t.Fatalf("batched lines written before their time: %q", got)
	}
	fmt.Fprint(w, "warning\n")
	if got, want := out.String(), "request 1\nrequest 2\nwarning\n"; got != want {
		t.Fatalf("a direct line must follow what was queued before it: got %q, want %q", got, want)
	}
	if n := out.count(); n != 2 {
		t.Fatalf("the queue should be one write and the direct line another: %d writes", n)
	}
	fmt.Fprint(b, "request 3\n")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(b, "after close\n")
	if got, want := out.String(), "request 1\nrequest 2\nwarning\nrequest 3\nafter close\n"; got != want {
		t.Fatalf("Close must write the queue and later lines go through: got %q, want %q", got, want)
	}
}

func TestBatchedLinesAreWrittenAfterTheDelay(t *testing.T) {
	var out syncBuffer
	w := New(&out, time.Millisecond)
	defer w.Close()
	fmt.Fprint(w.Batched(), "request\n")
	deadline := time.Now().Add(30 * time.Second) // a busy machine may run the timer late
	for out.String() != "request\n" {
		if time.Now().After(deadline) {
			t.Fatalf("a batched line was never written: %q", out.String())
		}
		time.Sleep(time.Millisecond)
	}
}

func TestAFullQueueIsWrittenAtOnce(t *testing.T) {
	var out syncBuffer
	w := New(&out, never)
	line := strings.Repeat("x", 1023) + "\n"
	for range flushAt / len(line) {
		fmt.Fprint(w.Batched(), line)
	}
	if got := len(out.String()); got != flushAt {
		t.Fatalf("a queue of %d bytes should be written without waiting: %d written", flushAt, got)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestConcurrentLinesAreWrittenWholeAndOnce(t *testing.T) {
	var out syncBuffer
	w := New(&out, 100*time.Microsecond)
	const writers, lines = 8, 2000
	var wg sync.WaitGroup
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range lines {
				if i%100 == 0 {
					fmt.Fprintf(w, "direct %d %d\n", g, i)
				} else {
					fmt.Fprintf(w.Batched(), "batched %d %d\n", g, i)
				}
			}
		}()
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	last := map[int]int{}
	for l := range strings.SplitSeq(strings.TrimSuffix(out.String(), "\n"), "\n") {
		seen[l]++
		var kind string
		var g, i int
		if _, err := fmt.Sscanf(l, "%s %d %d", &kind, &g, &i); err != nil {
			t.Fatalf("a line was cut: %q", l)
		}
		// One writer's lines stay in its order, whichever way each went.
		if prev, ok := last[g]; ok && i <= prev {
			t.Fatalf("writer %d: line %d written after line %d", g, i, prev)
		}
		last[g] = i
	}
	if len(seen) != writers*lines {
		t.Fatalf("%d distinct lines, want %d", len(seen), writers*lines)
	}
	for l, n := range seen {
		if n != 1 {
			t.Fatalf("%q written %d times", l, n)
		}
	}
}

type failing struct{ err error }

func (f failing) Write(p []byte) (int, error) { return 0, f.err }

func TestCloseReportsAWriteError(t *testing.T) {
	broken := errors.New("disk full")
	w := New(failing{broken}, never)
	fmt.Fprint(w.Batched(), "request\n")
	if err := w.Close(); !errors.Is(err, broken) {
		t.Fatalf("Close returned %v, want the write error", err)
	}
}
