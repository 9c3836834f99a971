package pgx

import (
	"context"
	"fmt"
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
