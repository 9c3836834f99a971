package extract

import (
	"context"
	"io"
)

const (
	// maxInflateRatio is the most bytes one compressed byte may inflate to. Real
	// office XML and PDF content inflate well under it; deflate bombs inflate about
	// 1000 to 1. The same figure guards Apache POI (ZipSecureFile).
	maxInflateRatio = 100
	// inflateRatioGrace is how many bytes one stream may inflate before its ratio is
	// judged, so small, highly repetitive parts are not refused.
	inflateRatioGrace = 1 << 20
)

// budget is the decompression allowance of one extraction, shared by every archive
// entry or PDF stream it inflates. It also carries the extraction's context so that
// every read notices a deadline.
type budget struct {
	ctx  context.Context
	left int64 // bytes that may still be inflated
}

func newBudget(ctx context.Context, lim Limits) *budget {
	return &budget{ctx: ctx, left: lim.MaxDecompressed}
}

// inflated wraps a decompressor dec whose compressed input was counted by raw (nil
// when the data is stored, not compressed). Its reads fail with errRejected once the
// whole extraction has inflated more than its allowance, once this stream inflates
// more than maxInflateRatio times its compressed input read so far, or once the
// context ends. The declared size of an entry is never consulted.
func (b *budget) inflated(dec io.Reader, raw *countingReader) io.Reader {
	return &meteredReader{b: b, r: io.LimitReader(dec, b.left+1), raw: raw}
}

// meteredReader enforces a budget on one stream; see budget.inflated.
type meteredReader struct {
	b   *budget
	r   io.Reader
	raw *countingReader
	n   int64 // bytes inflated from this stream
}

// Read reads inflated bytes. It returns errRejected when a limit is passed.
func (m *meteredReader) Read(p []byte) (int, error) {
	if m.b.ctx.Err() != nil {
		return 0, errRejected
	}
	n, err := m.r.Read(p)
	m.n += int64(n)
	m.b.left -= int64(n)
	if m.b.left < 0 {
		return 0, errRejected
	}
	if m.raw != nil && m.n > inflateRatioGrace && m.n > maxInflateRatio*m.raw.n {
		return 0, errRejected
	}
	return n, err
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
