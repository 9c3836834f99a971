package s3client

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"
)

// ObjectInfo describes one object.
type ObjectInfo struct {
	Key          string // the object's full name in the bucket
	Size         int64
	LastModified time.Time
}

// maxPut is the largest object one PUT may carry on AWS S3.
const maxPut = 5 << 30

var errTooLarge = errors.New("s3: an object of more than 5 GiB needs a multipart upload, which this client does not do")

// PutObject stores size bytes of body as key, replacing any object there, with one PUT:
// the service stores the whole body or nothing. A size below zero is unknown: the body is
// first copied to a temporary file to learn it. A body that fails to read (or ends before
// size) fails the PUT with the reader's own error, which is then returned as it is.
//
// Over https the payload is sent unsigned (x-amz-content-sha256: UNSIGNED-PAYLOAD), as
// minio-go does: TLS protects the bytes on the way, and hashing first would read every
// upload twice. Over plain http nothing protects them, and a server may take a body cut
// short by a failing reader for a whole one (versitygw does, now and then): there the
// body's SHA-256 is computed first and signed, so the service refuses any other bytes.
// A body that can seek is read twice for that; any other is held in memory when small,
// else copied to a temporary file.
func (c *Client) PutObject(ctx context.Context, key string, body io.Reader, size int64, contentType string) error {
	if size > maxPut {
		return errTooLarge // before reading any of it
	}
	payload := unsignedPayload
	_, seekable := body.(io.Seeker)
	if !c.cfg.Secure && !seekable && size > 0 && size <= maxBuffered {
		b, err := readExactly(body, size)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		body, payload = bytes.NewReader(b), hex.EncodeToString(sum[:])
	} else if size < 0 || (!c.cfg.Secure && !seekable && size > 0) {
		f, n, sum, err := spool(body)
		if err != nil {
			return err
		}
		defer os.Remove(f.Name())
		defer f.Close()
		if size >= 0 && n != size {
			return fmt.Errorf("s3: the body is %d bytes, not %d", n, size)
		}
		body, size = f, n
		if !c.cfg.Secure {
			payload = sum
		}
	} else if !c.cfg.Secure && size > 0 {
		sum, err := hashSeekable(body.(io.ReadSeeker), size)
		if err != nil {
			return err
		}
		payload = sum
	}
	if size == 0 && body != nil {
		// net/http sends no body for a zero length and so never reads this one: read it
		// here, so a stream that is not empty (or whose reader refuses to end, as a
		// length check does) fails instead of storing an empty object.
		var one [1]byte
		if n, err := io.ReadAtLeast(body, one[:], 1); n > 0 {
			return errors.New("s3: the body is longer than its size, 0")
		} else if !errors.Is(err, io.EOF) {
			return err
		}
		if !c.cfg.Secure {
			payload = emptySHA256
		}
	}
	if size > maxPut {
		return errTooLarge
	}
	h := http.Header{}
	if contentType != "" {
		h.Set("Content-Type", contentType)
	}
	resp, err := c.do(ctx, &request{
		method: http.MethodPut, key: key, header: h,
		body: body, size: size, payload: payload, resend: true,
	})
	if err != nil {
		return err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // lets the connection be reused
	resp.Body.Close()
	return nil
}

// GetObject opens key for reading: the body streams from the service as it is read. The
// caller closes it.
func (c *Client) GetObject(ctx context.Context, key string) (io.ReadCloser, ObjectInfo, error) {
	resp, err := c.do(ctx, &request{method: http.MethodGet, key: key, resend: true})
	if err != nil {
		return nil, ObjectInfo{}, err
	}
	info, err := objectInfo(key, resp)
	if err != nil {
		resp.Body.Close()
		return nil, ObjectInfo{}, err
	}
	return resp.Body, info, nil
}

// HeadObject describes key.
func (c *Client) HeadObject(ctx context.Context, key string) (ObjectInfo, error) {
	resp, err := c.do(ctx, &request{method: http.MethodHead, key: key, resend: true})
	if err != nil {
		return ObjectInfo{}, err
	}
	resp.Body.Close()
	return objectInfo(key, resp)
}

// DeleteObject removes key; a key that is not there is no error.
func (c *Client) DeleteObject(ctx context.Context, key string) error {
	resp, err := c.do(ctx, &request{method: http.MethodDelete, key: key, resend: true})
	var serr *Error
	if errors.As(err, &serr) && serr.StatusCode == http.StatusNotFound && serr.Code != "NoSuchBucket" {
		return nil
	}
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// objectInfo reads the size and modification time of a GET or HEAD answer.
func objectInfo(key string, resp *http.Response) (ObjectInfo, error) {
	size, err := strconv.ParseInt(resp.Header.Get("Content-Length"), 10, 64)
	if err != nil || size < 0 {
		return ObjectInfo{}, errors.New("s3: the answer for " + key + " has no Content-Length")
	}
	mod, _ := http.ParseTime(resp.Header.Get("Last-Modified"))
	return ObjectInfo{Key: key, Size: size, LastModified: mod}, nil
}
