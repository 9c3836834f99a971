package pgx

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5/pgconn"
)

// binaryResults asks for every result column in binary: bytea comes as it is stored.
var binaryResults = []int16{1}

// The type OIDs decoded.
const (
	oidBool      = 16
	oidInt8      = 20
	oidInt2      = 21
	oidInt4      = 23
	oidInt8Array = 1016
)

// encodeArgs encodes arguments: []byte as binary (bytea as it is), everything else as
// text, which PostgreSQL parses as the type the statement gives the parameter. A nil
// (or a nil []byte or pointer) is NULL, as with pgx.
func encodeArgs(args []any) (values [][]byte, formats []int16, err error) {
	if len(args) == 0 {
		return nil, nil, nil
	}
	values = make([][]byte, len(args))
	formats = make([]int16, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case nil:
		case []byte:
			values[i], formats[i] = v, 1
		case string:
			values[i] = []byte(v)
		case *string:
			if v != nil {
				values[i] = []byte(*v)
			}
		case bool:
			if v {
				values[i] = []byte("t")
			} else {
				values[i] = []byte("f")
			}
		case int:
			values[i] = strconv.AppendInt(nil, int64(v), 10)
		case int32:
			values[i] = strconv.AppendInt(nil, int64(v), 10)
		case int64:
			values[i] = strconv.AppendInt(nil, v, 10)
		case uint32:
			values[i] = strconv.AppendUint(nil, uint64(v), 10)
		case uint64:
			values[i] = strconv.AppendUint(nil, v, 10)
		case float64:
			values[i] = strconv.AppendFloat(nil, v, 'g', -1, 64)
		default:
			return nil, nil, fmt.Errorf("pgx: cannot encode argument %d of type %T", i+1, a)
		}
	}
	return values, formats, nil
}

// Rows is a query's rows; Close it (Next does, after the last row).
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Close()
	Err() error
}

type rows struct {
	rr     *pgconn.ResultReader
	err    error
	closed bool
}

func (r *rows) Next() bool {
	if r.closed {
		return false
	}
	if r.rr.NextRow() {
		return true
	}
	r.Close()
	return false
}

func (r *rows) Close() {
	if r.closed {
		return
	}
	r.closed = true
	if _, err := r.rr.Close(); err != nil && r.err == nil {
		r.err = err
	}
}

func (r *rows) Err() error { return r.err }

func (r *rows) Scan(dest ...any) error {
	if r.closed {
		return errors.New("pgx: scan of a closed result")
	}
	fields, values := r.rr.FieldDescriptions(), r.rr.Values()
	if len(dest) != len(values) {
		err := fmt.Errorf("pgx: %d destinations for %d columns", len(dest), len(values))
		r.err = err
		r.Close()
		return err
	}
	for i, d := range dest {
		if err := decode(fields[i].DataTypeOID, values[i], d); err != nil {
			err = fmt.Errorf("pgx: column %q: %w", fields[i].Name, err)
			r.err = err
			r.Close()
			return err
		}
	}
	return nil
}

// Row is a query's only row.
type Row interface {
	Scan(dest ...any) error
}

type row struct {
	r   Rows
	err error
}

// Scan reads the row into dest; ErrNoRows when there is none.
func (r *row) Scan(dest ...any) error {
	if r.err != nil {
		if r.r != nil {
			r.r.Close()
		}
		return r.err
	}
	defer r.r.Close()
	if !r.r.Next() {
		if err := r.r.Err(); err != nil {
			return err
		}
		return ErrNoRows
	}
	if err := r.r.Scan(dest...); err != nil {
		return err
	}
	r.r.Close()
	return r.r.Err()
}

// decode reads one binary value of type oid into dest. The value is the connection's
// buffer: bytes are copied.
func decode(oid uint32, v []byte, dest any) error {
	switch d := dest.(type) {
	case *[]byte:
		if v == nil {
			*d = nil
		} else {
			*d = append(make([]byte, 0, len(v)), v...)
		}
		return nil
	case *string:
		if v == nil {
			return errors.New("cannot scan NULL into *string")
		}
		*d = string(v)
		return nil
	case *bool:
		if v == nil || oid != oidBool || len(v) != 1 {
			return fmt.Errorf("cannot scan %s into *bool", describe(oid, v))
		}
		*d = v[0] == 1
		return nil
	case *int:
		n, err := decodeInt(oid, v)
		*d = int(n)
		return err
	case *int64:
		n, err := decodeInt(oid, v)
		*d = n
		return err
	case *[]int64:
		if v == nil {
			*d = nil
			return nil
		}
		if oid != oidInt8Array {
			return fmt.Errorf("cannot scan %s into *[]int64", describe(oid, v))
		}
		a, err := decodeInt8Array(v)
		*d = a
		return err
	}
	return fmt.Errorf("cannot scan into %T", dest)
}

func describe(oid uint32, v []byte) string {
	if v == nil {
		return "NULL"
	}
	return "a value of type OID " + strconv.FormatUint(uint64(oid), 10)
}

func decodeInt(oid uint32, v []byte) (int64, error) {
	switch {
	case v == nil:
		return 0, errors.New("cannot scan NULL into an integer")
	case oid == oidInt2 && len(v) == 2:
		return int64(int16(binary.BigEndian.Uint16(v))), nil
	case oid == oidInt4 && len(v) == 4:
		return int64(int32(binary.BigEndian.Uint32(v))), nil
	case oid == oidInt8 && len(v) == 8:
		return int64(binary.BigEndian.Uint64(v)), nil
	}
	return 0, fmt.Errorf("cannot scan %s into an integer", describe(oid, v))
}

// decodeInt8Array reads a one-dimensional bigint[] in PostgreSQL's binary array
// format: dimensions, a has-NULL flag, the element type, each dimension's length and
// lower bound, then each element's length and bytes.
func decodeInt8Array(v []byte) ([]int64, error) {
	bad := errors.New("malformed bigint[]")
	if len(v) < 12 {
		return nil, bad
	}
	ndim := binary.BigEndian.Uint32(v)
	if binary.BigEndian.Uint32(v[8:]) != oidInt8 {
		return nil, bad
	}
	if ndim == 0 {
		return []int64{}, nil
	}
	if ndim != 1 || len(v) < 20 {
		return nil, errors.New("cannot scan a multi-dimensional array into *[]int64")
	}
	n := binary.BigEndian.Uint32(v[12:])
	p := v[20:]
	if uint64(len(p)) != uint64(n)*12 {
		return nil, bad
	}
	out := make([]int64, n)
	for i := range out {
		if int32(binary.BigEndian.Uint32(p)) != 8 {
			return nil, errors.New("cannot scan a NULL element into int64")
		}
		out[i] = int64(binary.BigEndian.Uint64(p[4:]))
		p = p[12:]
	}
	return out, nil
}
