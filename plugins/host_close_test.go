package plugins

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestCloseWhileCompiling: closing the host while a built-in compiles cancels the
// compile instead of waiting for it; the load returns ErrClosed, wazero is freed by the
// compile once it stops, and nothing panics inside wazero.
func TestCloseWhileCompiling(t *testing.T) {
	deadline := time.Now().Add(2 * time.Minute)
	for caught := 0; caught < 2; {
		if time.Now().After(deadline) {
			t.Fatalf("caught a compile in flight only %d times in 2 minutes", caught)
		}
		h, err := NewHost(context.Background(), Config{}) // no shared cache: a real compile
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := h.Builtin(context.Background(), BuiltinRedactor)
			done <- err
		}()
		inFlight := waitCompiling(h, done)
		closedAt := time.Now()
		if err := h.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		if inFlight {
			err = <-done
		} else {
			err = nil // done already received: the load ended before Close
		}
		if !inFlight {
			if err != nil && !errors.Is(err, ErrClosed) {
				t.Fatalf("load around close: %v", err)
			}
			continue // the compile ended before it was seen: try again
		}
		t.Logf("caught in flight; load returned %s after close", time.Since(closedAt))
		caught++
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("load canceled by close returned %v, want ErrClosed", err)
		}
		if r := h.runtime; r != nil {
			if _, err := r.CompileModule(context.Background(), []byte("\x00asm\x01\x00\x00\x00")); err == nil {
				t.Fatal("the runtime is still open once the canceled compile returned")
			}
		}
	}
}

// waitCompiling reports whether h was seen compiling before the load ended (when it
// returns false, the load's result was taken from done).
func waitCompiling(h *Host, done <-chan error) bool {
	for {
		h.mu.Lock()
		n := h.compiling
		h.mu.Unlock()
		if n > 0 {
			return true
		}
		select {
		case <-done:
			return false
		case <-time.After(time.Millisecond):
		}
	}
}
