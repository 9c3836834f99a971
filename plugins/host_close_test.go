package plugins

import (
	"context"
	"errors"
	"testing"
)

// TestCloseWhileCompiling: closing the host while a built-in compiles waits for the
// compile or stops it with ErrClosed; it never panics inside wazero.
func TestCloseWhileCompiling(t *testing.T) {
	for i := 0; i < 3; i++ {
		h, err := NewHost(context.Background(), Config{})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := h.Builtin(context.Background(), BuiltinRedactor)
			done <- err
		}()
		if err := h.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil && !errors.Is(err, ErrClosed) {
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("load during close: %v", err)
			}
		}
	}
}
