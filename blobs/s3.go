package blobs

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/encrypt"
)

// PartSize is the size of each part of a multipart upload; a blob larger than this goes
// up in parts. 16 MiB: small enough that one upload in flight buffers one part (uploads
// are held in memory a part at a time), large enough that a 50 MB document is four
// requests, not ten, and that 10,000 parts (S3's limit) reach 156 GiB, far past any blob
// interviewd writes. It is minio-go's own threshold and above S3's 5 MiB minimum part.
const PartSize = 16 << 20

// S3 is the store of several nodes: every key an object in one bucket.
type S3 struct {
	c   *minio.Client
	cfg S3Config
	sse encrypt.ServerSide // nil: the bucket's default
}

// NewS3 returns the store for cfg. It does not contact the service: a bucket that is
// down at start makes the server unready (Ping), not unable to start.
func NewS3(_ context.Context, cfg S3Config) (*S3, error) {
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   64,
		ResponseHeaderTimeout: time.Minute,
		IdleConnTimeout:       time.Minute,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: 10 * time.Second,
		DisableCompression:    true,
	}
	if cfg.RootCAs != nil {
		tr.TLSClientConfig = &tls.Config{RootCAs: cfg.RootCAs, MinVersion: tls.VersionTLS12}
	}
	c, err := minio.New(cfg.Endpoint, &minio.Options{
		Creds:     credentials.NewChainCredentials(credentialProviders(cfg)),
		Secure:    cfg.Secure,
		Region:    cfg.Region,
		Transport: tr,
		// Every upload carries a CRC32C of its bytes (of each part, and of the whole),
		// which the service checks before it stores them: on https the payload is not
		// signed, so this is what refuses bytes changed on the way.
		TrailingHeaders: true,
		// A refused connection is retried a few times, not ten: a bucket that is down
		// answers 503 within seconds instead of holding the request.
		MaxRetries: 3,
	})
	if err != nil {
		return nil, fmt.Errorf("s3://%s: %w", cfg.Bucket, err)
	}
	s := &S3{c: c, cfg: cfg}
	switch cfg.SSE {
	case SSES3:
		s.sse = encrypt.NewSSE()
	case SSEKMS:
		if s.sse, err = encrypt.NewSSEKMS(cfg.KMSKeyID, nil); err != nil {
			return nil, fmt.Errorf("s3://%s: %w", cfg.Bucket, err)
		}
	}
	return s, nil
}

func (s *S3) String() string {
	scheme := "https"
	if !s.cfg.Secure {
		scheme = "http"
	}
	return "s3://" + s.cfg.Bucket + "/" + s.cfg.Prefix + " at " + scheme + "://" + s.cfg.Endpoint
}

func (s *S3) object(key string) string { return s.cfg.Prefix + key }

// s3Err maps a client error: a missing object is fs.ErrNotExist, a cancelled or expired
// context itself, anything else (the service unreachable, a 5xx, a refused credential, a
// missing bucket) ErrUnavailable.
func s3Err(op, key string, err error) error {
	resp := minio.ToErrorResponse(err)
	if resp.Code == "NoSuchKey" || (resp.StatusCode == http.StatusNotFound && resp.Code != "NoSuchBucket") {
		return notExist(op, key)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &opError{op: op, key: key, err: err}
	}
	return unavailable(op, key, err)
}

// Put stores r under key: in one PUT up to PartSize, as a multipart upload past it (a
// failed one is aborted, so nothing of it stays in the bucket).
func (s *S3) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	if err := checkKey(key); err != nil {
		return err
	}
	switch {
	case size == 0:
		// Nothing is read for an empty object: a stream that is not empty must fail
		// here, as it does in a folder.
		if err := (&sizedReader{r: r}).end(); err != nil {
			return &opError{op: "put", key: key, err: err}
		}
		r = bytes.NewReader(nil)
	case size > 0:
		r = newSizedReader(r, size)
	default:
		// Of unknown length: read up to a part. A stream that ends within it goes up in
		// one PUT of that size; a longer one as a multipart upload of unknown length,
		// which would otherwise be used for every stream, however small.
		var head bytes.Buffer
		n, err := io.CopyN(&head, ctxReader{ctx, r}, PartSize)
		switch {
		case errors.Is(err, io.EOF):
			r, size = bytes.NewReader(head.Bytes()), n
		case err != nil:
			return &opError{op: "put", key: key, err: err}
		default:
			r = io.MultiReader(&head, r)
		}
	}
	_, err := s.c.PutObject(ctx, s.cfg.Bucket, s.object(key), r, size, minio.PutObjectOptions{
		ContentType:          "application/octet-stream",
		PartSize:             PartSize,
		ServerSideEncryption: s.sse,
	})
	if err != nil {
		if errors.Is(err, errSizeMismatch) {
			return &opError{op: "put", key: key, err: err}
		}
		return s3Err("put", key, err)
	}
	return nil
}

func (s *S3) Get(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	if err := checkKey(key); err != nil {
		return nil, 0, err
	}
	obj, err := s.c.GetObject(ctx, s.cfg.Bucket, s.object(key), minio.GetObjectOptions{})
	if err != nil {
		return nil, 0, s3Err("get", key, err)
	}
	st, err := obj.Stat() // sends the GET: a missing key fails here
	if err != nil {
		obj.Close()
		return nil, 0, s3Err("get", key, err)
	}
	return obj, st.Size, nil
}

func (s *S3) Stat(ctx context.Context, key string) (Info, error) {
	if err := checkKey(key); err != nil {
		return Info{}, err
	}
	st, err := s.c.StatObject(ctx, s.cfg.Bucket, s.object(key), minio.StatObjectOptions{})
	if err != nil {
		return Info{}, s3Err("stat", key, err)
	}
	return Info{Key: key, Size: st.Size, ModTime: st.LastModified}, nil
}

func (s *S3) Delete(ctx context.Context, key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if err := s.c.RemoveObject(ctx, s.cfg.Bucket, s.object(key), minio.RemoveObjectOptions{}); err != nil {
		if err := s3Err("delete", key, err); errors.Is(err, ErrUnavailable) {
			return err
		}
	}
	return nil
}

func (s *S3) List(ctx context.Context, prefix string) ([]Info, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the listing goroutine on an early return
	var out []Info
	for o := range s.c.ListObjects(ctx, s.cfg.Bucket, minio.ListObjectsOptions{Prefix: s.object(prefix), Recursive: true}) {
		if o.Err != nil {
			return nil, s3Err("list", prefix, o.Err)
		}
		out = append(out, Info{Key: strings.TrimPrefix(o.Key, s.cfg.Prefix), Size: o.Size, ModTime: o.LastModified})
	}
	return out, nil
}

// Presign signs a GET of key locally (no request is sent) that answers as an
// attachment: the client fetches the bytes from the bucket, not through a node.
func (s *S3) Presign(ctx context.Context, key string, ttl time.Duration, filename, mediaType string) (string, error) {
	if err := checkKey(key); err != nil {
		return "", err
	}
	q := url.Values{}
	if filename != "" {
		q.Set("response-content-disposition", mime.FormatMediaType("attachment", map[string]string{"filename": filename}))
	}
	if mediaType != "" {
		q.Set("response-content-type", mediaType)
	}
	u, err := s.c.PresignedGetObject(ctx, s.cfg.Bucket, s.object(key), ttl, q)
	if err != nil {
		return "", s3Err("presign", key, err)
	}
	return u.String(), nil
}

// Ping asks whether the bucket exists and the credential may use it.
func (s *S3) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ok, err := s.c.BucketExists(ctx, s.cfg.Bucket)
	if err != nil {
		if v, cerr := s.c.GetCreds(); cerr == nil && v.SignerType.IsAnonymous() {
			err = fmt.Errorf("%w (the bucket answered: %v)", errNoCredential, err)
		}
		return unavailable("ping", s.cfg.Bucket, err)
	}
	if !ok {
		return unavailable("ping", s.cfg.Bucket, errors.New("no such bucket"))
	}
	return nil
}
