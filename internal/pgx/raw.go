package pgx

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// QueryRaw runs sql with params already encoded in formats (0 text, 1 binary: one per
// parameter, or one for all) and calls row with each row's values in binary (nil for
// NULL). The values are the connection's buffer, valid only during the call: a caller
// that decodes its own columns, as the store's hottest reads do, pays for no Rows, no
// Scan destinations and no copies it does not need. An error from row stops the walk;
// the rest of the result is read and dropped, and the connection stays usable.
func (c *Conn) QueryRaw(ctx context.Context, sql string, params [][]byte, formats []int16, row func(values [][]byte) error) error {
	sd, err := c.prepared(ctx, sql)
	if err != nil {
		return err
	}
	if len(formats) > 1 && len(formats) != len(params) {
		return fmt.Errorf("pgx: %d formats for %d parameters", len(formats), len(params))
	}
	if c.direct(sd, params) {
		return c.queryDirect(ctx, sd, params, formats, row)
	}
	rr := c.pc.ExecStatement(ctx, sd, params, formats, binaryResults)
	var rowErr error
	for rowErr == nil && rr.NextRow() {
		rowErr = row(rr.Values())
	}
	_, err = rr.Close()
	if rowErr != nil {
		return rowErr
	}
	return err
}

// The direct path: QueryRaw speaks the extended protocol itself (Bind, Execute, Sync,
// then the messages up to ReadyForQuery) on pgconn's frontend, without what pgconn
// does around each statement that a small read has no need of. pgconn arms a 15 ms
// timer before every write, to start a reader goroutine should the write block while
// the server is blocked writing to us: a timer-heap update per statement, and a
// wake-up of the thread waiting in the network poller whenever that timer becomes the
// earliest. It also encodes the Bind into a buffer it drops and reallocates whenever a
// message passed 1 kB. Here the three messages are encoded into the connection's own
// buffer, sent in one write, and the answer read with the frontend's reader.
//
// That write cannot wait on a server that waits on us: the server answers nothing
// before it has read the Bind and the Execute, which come first in it, and every
// earlier answer was read up to its ReadyForQuery. directMax bounds the buffer a
// connection keeps; bigger statements take pgconn's path.
const directMax = 32 << 10

// direct reports whether a statement can take the direct path: the connection idle
// outside a transaction (pgconn's own state then needs no update from the answer:
// ReadyForQuery says idle again), the result's columns known (no Describe needed) and
// the parameters small.
func (c *Conn) direct(sd *pgconn.StatementDescription, params [][]byte) bool {
	if c.pc.IsBusy() || c.pc.IsClosed() || c.pc.TxStatus() != 'I' || len(sd.Fields) == 0 {
		return false
	}
	n := 0
	for _, p := range params {
		n += len(p)
	}
	return n <= directMax
}

// The messages that follow every Bind: read only, shared.
var (
	executeMsg = pgproto3.Execute{}
	syncMsg    = pgproto3.Sync{}
)

// queryDirect is QueryRaw's direct path (see above). A connection left in an unknown
// state (a failed write or read, a cancellation mid-statement, a fatal error, a panic
// in row) is closed, as pgconn closes it or leaves it busy: the pool then drops it.
func (c *Conn) queryDirect(ctx context.Context, sd *pgconn.StatementDescription, params [][]byte, formats []int16, row func(values [][]byte) error) error {
	if err := ctx.Err(); err != nil {
		return err // nothing sent: the connection is as it was
	}
	c.bind = pgproto3.Bind{PreparedStatement: sd.Name, ParameterFormatCodes: formats, Parameters: params, ResultFormatCodes: binaryResults}
	buf, err := c.bind.Encode(c.wbuf[:0])
	c.bind = pgproto3.Bind{} // keeps no caller's parameters
	if err != nil {
		return err // nothing sent
	}
	buf, _ = executeMsg.Encode(buf)
	buf, _ = syncMsg.Encode(buf)
	c.wbuf = buf[:0]

	// A cancellation interrupts the write or the read in progress by a deadline in the
	// past, as pgconn's default handler does.
	conn := c.pc.Conn()
	var stop func() bool
	if ctx.Done() != nil {
		if c.onCancel == nil {
			c.cancelled = make(chan struct{}, 1)
			c.onCancel = func() {
				_ = conn.SetDeadline(time.Unix(1, 0))
				c.cancelled <- struct{}{}
			}
		}
		stop = context.AfterFunc(ctx, c.onCancel)
	}
	answered := false
	defer func() {
		if !answered {
			// row panicked with the answer half read: pgconn, which believes the
			// connection idle, must not hand it to another statement.
			if stop != nil {
				stop()
			}
			c.closeBroken()
		}
	}()
	err = c.exchange(conn, buf, row)
	answered = true
	if stop != nil && !stop() {
		// The deadline is set or about to be (onCancel runs in a goroutine of its own):
		// the statement was interrupted, or it ended just before. Either way the
		// connection's next use must not meet the deadline.
		<-c.cancelled
		_ = conn.SetDeadline(time.Time{})
		err = cancelError(ctx, err)
	}
	var pe *pgconn.PgError
	if errors.Is(err, errBroken) || errors.As(err, &pe) && strings.EqualFold(pe.Severity, "FATAL") {
		c.closeBroken()
	}
	return err
}

// errBroken marks a failure after which the protocol's state is unknown.
var errBroken = errors.New("pgx: connection broken mid-statement")

// exchange writes the statement and reads its answer up to ReadyForQuery. Its error is
// the server's (a *pgconn.PgError, the connection still usable) or row's (the rest of
// the answer read and dropped), or one wrapping errBroken.
func (c *Conn) exchange(conn net.Conn, msg []byte, row func(values [][]byte) error) error {
	if _, err := conn.Write(msg); err != nil {
		return fmt.Errorf("%w: %w", errBroken, err)
	}
	fe := c.pc.Frontend()
	var result error
	for {
		m, err := fe.Receive()
		if err != nil {
			return fmt.Errorf("%w: %w", errBroken, err)
		}
		switch m := m.(type) {
		case *pgproto3.DataRow:
			if result == nil {
				result = row(m.Values)
			}
		case *pgproto3.BindComplete, *pgproto3.CommandComplete, *pgproto3.EmptyQueryResponse, *pgproto3.NoticeResponse, *pgproto3.ParameterStatus:
			// A notice goes unreported, as pgconn reports one only to an OnNotice
			// callback, which interviewd does not set; a parameter's new value
			// (reported when a setting such as the time zone changes) is nothing a
			// read's connection consults.
		case *pgproto3.NotificationResponse:
			c.note(&pgconn.Notification{PID: m.PID, Channel: m.Channel, Payload: m.Payload})
		case *pgproto3.ErrorResponse:
			pe := pgconn.ErrorResponseToPgError(m)
			if strings.EqualFold(pe.Severity, "FATAL") {
				return pe // the server closes the connection
			}
			if result == nil {
				result = pe
			}
		case *pgproto3.ReadyForQuery:
			if m.TxStatus != 'I' {
				return fmt.Errorf("%w: transaction status %q after a read", errBroken, m.TxStatus)
			}
			return result
		default:
			return fmt.Errorf("%w: unexpected %T", errBroken, m)
		}
	}
}

// closeBroken closes a connection whose protocol state is unknown, without waiting on
// it: pgconn then reports it closed, and the pool drops it.
func (c *Conn) closeBroken() {
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // Close sends Terminate under ctx: on a dead connection, do not wait
	_ = c.pc.Close(ctx)
}

// cancelError is the error of a statement its context ended: the context's, as
// pgconn's, so callers can tell a cancellation from a failure.
func cancelError(ctx context.Context, err error) error {
	var ne net.Error
	if cerr := ctx.Err(); cerr != nil && errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("%w: %w", errBroken, cerr)
	}
	return err
}
