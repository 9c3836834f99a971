package pipeline

import (
	"crypto/tls"
	"io"
	"net"
	"sync"

	"github.com/valyala/fasthttp"
)

// Graceful stop without lost answers.
//
// fasthttp's shutdown closes every connection it counts as idle, every 100 ms until
// none is left. A keep-alive connection counts as idle from the moment its last answer
// is written until its goroutine has peeked the first byte of the next request and
// marked it active, so a close can land just after a new request was read: the
// handler then runs (and may commit a write) and its answer goes nowhere. fasthttp
// has no hook inside that window, so the connections themselves decide what a close
// from the shutdown means:
//
//   - a connection with a request under way (bytes of it read while idle) is not
//     closed: the request is answered, with Connection: close (CloseOnShutdown), and
//     the connection ends when fasthttp is done with it;
//   - a connection waiting for a request has its read side shut: the waiting read
//     ends at once, a request already buffered is still answered, and a request that
//     was in flight is dropped unread, never started, so its client can send it again;
//   - the connection really closes when fasthttp reports it finished with it
//     (StateClosed, which follows every close fasthttp itself makes).
//
// Bytes read after the read side was shut are dropped, so a request is either seen
// whole by the handler or not at all.

// TrackedListener wraps every accepted connection in a trackedConn.
type TrackedListener struct{ net.Listener }

func (l TrackedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{Conn: c, idle: true, capture: true}
	if t, ok := c.(tlsConn); ok {
		return &trackedTLSConn{trackedConn: tc, tls: t}, nil
	}
	return tc, nil
}

// tlsConn is what fasthttp looks for to tell a TLS connection (ctx.IsTLS).
type tlsConn interface {
	Handshake() error
	ConnectionState() tls.ConnectionState
}

// trackedTLSConn keeps a TLS connection recognisable as one behind the wrapper.
type trackedTLSConn struct {
	*trackedConn
	tls tlsConn
}

func (c *trackedTLSConn) Handshake() error                     { return c.tls.Handshake() }
func (c *trackedTLSConn) ConnectionState() tls.ConnectionState { return c.tls.ConnectionState() }

// tracked returns the trackedConn behind nc, or nil.
func tracked(nc net.Conn) *trackedConn {
	switch c := nc.(type) {
	case *trackedConn:
		return c
	case *trackedTLSConn:
		return c.trackedConn
	}
	return nil
}

// headCapture bounds the start of a request line a connection remembers: enough for a
// method and the first path segments, so an answer to a request fasthttp could not
// parse can still be given in the shape of the route it was for (HTML for pages).
const headCapture = 64

type trackedConn struct {
	net.Conn
	mu         sync.Mutex
	idle       bool // between requests, or before the first: the shutdown may close it
	started    bool // bytes of a new request were read while idle
	deferred   bool // a close was asked for while a request was starting
	readClosed bool // the read side is shut: further bytes are dropped
	closed     bool
	capture    bool // the next bytes read start a request: remember its head
	head       [headCapture]byte
	headLen    int
	// peerIP is the peer's address as text, made by the first request's access line:
	// only the connection's own serving goroutine reads or writes it.
	peerIP string
}

func (c *trackedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.readClosed || c.closed {
		return 0, io.EOF
	}
	if n > 0 {
		if c.idle {
			c.started = true
		}
		if c.capture {
			c.headLen = copy(c.head[:], p[:n])
			c.capture = false
		}
	}
	return n, err
}

// Close is called by fasthttp when a connection is finished with and by the shutdown
// for idle connections; see the comment at the top of the file.
func (c *trackedConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	if c.idle && !c.started {
		if c.shutRead() {
			return nil
		}
		return c.closeLocked()
	}
	// A request is being read or answered (the shutdown may have seen the connection
	// idle a moment ago): it is answered, and fasthttp ends the connection after it.
	c.deferred = true
	return nil
}

func (c *trackedConn) closeLocked() error {
	c.closed = true
	return c.Conn.Close()
}

// shutRead shuts the read side of the underlying TCP (or unix) connection, under TLS
// too, and reports whether it could.
func (c *trackedConn) shutRead() bool {
	type readCloser interface{ CloseRead() error }
	nc := c.Conn
	if u, ok := nc.(interface{ NetConn() net.Conn }); ok { // *tls.Conn
		nc = u.NetConn()
	}
	rc, ok := nc.(readCloser)
	if !ok || rc.CloseRead() != nil {
		return false
	}
	c.readClosed = true
	return true
}

// ConnState is the server's ConnState hook: it tells each connection where fasthttp is.
func ConnState(nc net.Conn, st fasthttp.ConnState) {
	c := tracked(nc)
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch st {
	case fasthttp.StateActive:
		c.idle, c.started = false, false
	case fasthttp.StateIdle:
		c.idle, c.started, c.capture = true, false, true
		if c.deferred { // the shutdown timed out and keep-alive resumed: end it now
			c.deferred = false
			c.shutRead()
		}
	case fasthttp.StateClosed:
		if !c.closed {
			_ = c.closeLocked()
		}
	}
}

// requestHead returns the start of the request line the connection last began to read.
func requestHead(nc net.Conn) []byte {
	c := tracked(nc)
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]byte(nil), c.head[:c.headLen]...)
}
