package blobs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"sync"
)

// copyWorkers is how many blobs Copy copies at once.
const copyWorkers = 8

// Copy copies every blob of src into dst (replacing blobs of the same key) and returns
// how many it copied. Each copy is checked: its bytes are hashed on the way in, read
// back from dst and hashed again; then dst is listed and every key of src must be there
// with its size. Any difference is an error naming the key (the first one found), and n
// counts only the blobs copied and verified.
func Copy(ctx context.Context, dst, src Store) (n int, err error) {
	list, err := src.List(ctx, "")
	if err != nil {
		return 0, fmt.Errorf("list %s: %w", src, err)
	}
	// A few copies at a time: a bucket's latency, not its bandwidth, bounds one copy.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	todo := make(chan Info)
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	for range copyWorkers {
		wg.Go(func() {
			for b := range todo {
				err := copyOne(ctx, dst, src, b)
				mu.Lock()
				if err == nil {
					n++
				} else if first == nil {
					first = err
					cancel() // the others stop at their next read
				}
				mu.Unlock()
			}
		})
	}
	for _, b := range list {
		if ctx.Err() != nil {
			break
		}
		todo <- b
	}
	close(todo)
	wg.Wait()
	if first != nil {
		return n, first
	}
	if err := ctx.Err(); err != nil {
		return n, err
	}
	got, err := dst.List(ctx, "")
	if err != nil {
		return n, fmt.Errorf("list %s: %w", dst, err)
	}
	sizes := make(map[string]int64, len(got))
	for _, b := range got {
		sizes[b.Key] = b.Size
	}
	for _, b := range list {
		if size, ok := sizes[b.Key]; !ok || size != b.Size {
			return n, fmt.Errorf("copy %s: %s lists it with %d bytes (present: %v), the source %d", b.Key, dst, size, ok, b.Size)
		}
	}
	return n, nil
}

func copyOne(ctx context.Context, dst, src Store, b Info) error {
	r, size, err := src.Get(ctx, b.Key)
	if err != nil {
		return fmt.Errorf("copy %s: read: %w", b.Key, err)
	}
	h := sha256.New()
	err = dst.Put(ctx, b.Key, io.TeeReader(r, h), size)
	r.Close()
	if err != nil {
		return fmt.Errorf("copy %s: write: %w", b.Key, err)
	}
	want := h.Sum(nil)
	back, backSize, err := dst.Get(ctx, b.Key)
	if err != nil {
		return fmt.Errorf("copy %s: read back: %w", b.Key, err)
	}
	defer back.Close()
	h.Reset()
	if _, err := io.Copy(h, back); err != nil {
		return fmt.Errorf("copy %s: read back: %w", b.Key, err)
	}
	if backSize != size || !bytes.Equal(h.Sum(nil), want) {
		return fmt.Errorf("copy %s: the copy differs from the source (%d bytes, source %d)", b.Key, backSize, size)
	}
	return nil
}
