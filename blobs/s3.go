package blobs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"interviewd/blobs/s3client"
)

// S3Config names a bucket of an S3-compatible service (AWS S3, Cloudflare R2, Garage,
// MinIO, Ceph, versitygw, ...) and the credential to reach it.
type S3Config struct {
	Endpoint string // host[:port]
	Secure   bool   // https
	Region   string
	Bucket   string
	// Prefix is prepended to every key ("interviewd/" to share a bucket); "" or ending
	// in a slash.
	Prefix                             string
	AccessKey, SecretKey, SessionToken string
}

// ParseS3URL reads a --blobs value, s3://BUCKET[/PREFIX]?endpoint=URL&region=REGION.
// endpoint is host[:port] (https) or an http:// or https:// URL; without it the store is
// AWS S3 (s3.REGION.amazonaws.com). The credential comes from AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY and, when set, AWS_SESSION_TOKEN, read through env.
func ParseS3URL(raw string, env func(string) (string, bool)) (S3Config, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "s3" {
		return S3Config{}, fmt.Errorf("%q: want s3://bucket?endpoint=host:port&region=region", raw)
	}
	if u.User != nil {
		return S3Config{}, fmt.Errorf("s3://%s: put the credential in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, not in the URL", u.Host)
	}
	cfg := S3Config{Bucket: u.Host, Secure: true}
	if cfg.Bucket == "" {
		return S3Config{}, fmt.Errorf("%q: the bucket is missing (s3://bucket?...)", raw)
	}
	if p := strings.Trim(u.Path, "/"); p != "" {
		if err := checkKey(p); err != nil {
			return S3Config{}, fmt.Errorf("%q: the prefix %q is not a clean path", raw, p)
		}
		cfg.Prefix = p + "/"
	}
	q := u.Query()
	for k := range q {
		if k != "endpoint" && k != "region" {
			return S3Config{}, fmt.Errorf("%q: unknown parameter %q; want endpoint and region", raw, k)
		}
	}
	cfg.Region = q.Get("region")
	ep := q.Get("endpoint")
	switch {
	case ep == "" && cfg.Region != "":
		cfg.Endpoint = "s3." + cfg.Region + ".amazonaws.com"
	case ep == "":
		cfg.Endpoint = "s3.amazonaws.com"
	case strings.Contains(ep, "://"):
		eu, err := url.Parse(ep)
		if err != nil || (eu.Scheme != "http" && eu.Scheme != "https") || eu.Host == "" || strings.Trim(eu.Path, "/") != "" {
			return S3Config{}, fmt.Errorf("endpoint %q: want host:port, http://host:port or https://host", ep)
		}
		cfg.Endpoint, cfg.Secure = eu.Host, eu.Scheme == "https"
	default:
		if strings.ContainsAny(ep, "/?#@") {
			return S3Config{}, fmt.Errorf("endpoint %q: want host:port, http://host:port or https://host", ep)
		}
		cfg.Endpoint = ep
	}
	cfg.AccessKey, _ = env("AWS_ACCESS_KEY_ID")
	cfg.SecretKey, _ = env("AWS_SECRET_ACCESS_KEY")
	cfg.SessionToken, _ = env("AWS_SESSION_TOKEN")
	if cfg.AccessKey == "" || cfg.SecretKey == "" {
		return S3Config{}, fmt.Errorf("s3://%s: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY to the bucket's credential", cfg.Bucket)
	}
	return cfg, nil
}

// S3 is the store of several nodes: every key an object in one bucket.
type S3 struct {
	c   *s3client.Client
	cfg S3Config
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
	c, err := s3client.New(s3client.Config{
		Endpoint: cfg.Endpoint,
		Secure:   cfg.Secure,
		Region:   cfg.Region,
		Bucket:   cfg.Bucket,
		Credential: s3client.Credential{
			AccessKey: cfg.AccessKey, SecretKey: cfg.SecretKey, SessionToken: cfg.SessionToken,
		},
		Transport: tr,
		// A refused connection is retried a few times, not ten: a bucket that is down
		// answers 503 within a second instead of holding the request.
		Attempts: 3,
	})
	if err != nil {
		return nil, fmt.Errorf("s3://%s: %w", cfg.Bucket, err)
	}
	return &S3{c: c, cfg: cfg}, nil
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
	var resp *s3client.Error
	if errors.As(err, &resp) && resp.NotFound() {
		return notExist(op, key)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &opError{op: op, key: key, err: err}
	}
	return unavailable(op, key, err)
}

func (s *S3) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if size >= 0 {
		r = newSizedReader(r, size)
	}
	if err := s.c.PutObject(ctx, s.object(key), r, size, "application/octet-stream"); err != nil {
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
	body, info, err := s.c.GetObject(ctx, s.object(key))
	if err != nil {
		return nil, 0, s3Err("get", key, err)
	}
	return body, info.Size, nil
}

func (s *S3) Stat(ctx context.Context, key string) (Info, error) {
	if err := checkKey(key); err != nil {
		return Info{}, err
	}
	info, err := s.c.HeadObject(ctx, s.object(key))
	if err != nil {
		return Info{}, s3Err("stat", key, err)
	}
	return Info{Key: key, Size: info.Size, ModTime: info.LastModified}, nil
}

func (s *S3) Delete(ctx context.Context, key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if err := s.c.DeleteObject(ctx, s.object(key)); err != nil {
		if err := s3Err("delete", key, err); errors.Is(err, ErrUnavailable) {
			return err
		}
	}
	return nil
}

func (s *S3) List(ctx context.Context, prefix string) ([]Info, error) {
	var out []Info
	err := s.c.ListObjects(ctx, s.object(prefix), func(o s3client.ObjectInfo) error {
		out = append(out, Info{Key: strings.TrimPrefix(o.Key, s.cfg.Prefix), Size: o.Size, ModTime: o.LastModified})
		return nil
	})
	if err != nil {
		return nil, s3Err("list", prefix, err)
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
	u, err := s.c.PresignGet(ctx, s.object(key), ttl, q)
	if err != nil {
		return "", s3Err("presign", key, err)
	}
	return u, nil
}

// Ping asks whether the bucket exists and the credential may use it.
func (s *S3) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := s.c.HeadBucket(ctx); err != nil {
		var resp *s3client.Error
		if errors.As(err, &resp) && resp.StatusCode == http.StatusNotFound {
			return unavailable("ping", s.cfg.Bucket, errors.New("no such bucket"))
		}
		return unavailable("ping", s.cfg.Bucket, err)
	}
	return nil
}
