package s3client

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Config names one bucket of an S3-compatible service and the credential to reach it.
type Config struct {
	Endpoint string // host[:port] of the service
	Secure   bool   // https
	// Region signs the requests; "" is us-east-1 until the service names the bucket's
	// region in a refusal.
	Region string
	Bucket string
	Credential
	// Transport carries the requests; nil is http.DefaultTransport.
	Transport http.RoundTripper
	// Attempts is how many times a request that may be sent again is tried before its
	// error is returned; 0 is 3.
	Attempts int
}

// Client speaks to one bucket. It is safe for concurrent use.
type Client struct {
	cfg      Config
	hc       *http.Client
	attempts int
	now      func() time.Time // the signing clock; tests pin it

	mu       sync.Mutex
	region   string
	endpoint string
	settled  bool // an answer came back signed for region: it is the bucket's
}

// New returns a client of cfg's bucket. It sends nothing.
func New(cfg Config) (*Client, error) {
	if cfg.Endpoint == "" || cfg.Bucket == "" {
		return nil, errors.New("s3: an endpoint and a bucket are required")
	}
	if cfg.AccessKey == "" || cfg.SecretKey == "" {
		return nil, errors.New("s3: an access key and its secret are required")
	}
	tr := cfg.Transport
	if tr == nil {
		tr = http.DefaultTransport
	}
	c := &Client{
		cfg: cfg,
		hc: &http.Client{
			Transport: tr,
			// A redirect is S3 naming another region or endpoint; following it would
			// resend a signature made for this one (or drop it, across hosts).
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		attempts: cfg.Attempts,
		now:      time.Now,
		region:   cfg.Region,
		endpoint: cfg.Endpoint,
	}
	if c.attempts <= 0 {
		c.attempts = 3
	}
	if c.region == "" {
		c.region = "us-east-1"
	}
	return c, nil
}

// location is the region requests are signed for and the endpoint they go to.
func (c *Client) location() (region, endpoint string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.region, c.endpoint
}

// virtualHost reports whether the bucket goes in the host name (bucket.s3.amazonaws.com)
// rather than the path: on AWS, which is phasing path-style requests out, when the bucket
// is a valid DNS label sequence (and, over https, has no dot the certificate would not
// cover). Every other service is addressed by path, which they all accept and which needs
// no wildcard DNS; minio-go's BucketLookupAuto chooses the same.
func (c *Client) virtualHost(endpoint string) bool {
	host := endpoint
	if h, _, ok := strings.Cut(endpoint, ":"); ok {
		host = h
	}
	if !strings.HasSuffix(host, ".amazonaws.com") || (c.cfg.Secure && strings.Contains(c.cfg.Bucket, ".")) {
		return false
	}
	return dnsBucket(c.cfg.Bucket)
}

// dnsBucket reports whether b can be a host name label sequence: 3 to 63 lower-case
// letters, digits, dots and hyphens, starting and ending with a letter or digit.
func dnsBucket(b string) bool {
	if len(b) < 3 || len(b) > 63 || strings.Contains(b, "..") {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		alnum := 'a' <= c && c <= 'z' || '0' <= c && c <= '9'
		if !alnum && ((c != '-' && c != '.') || i == 0 || i == len(b)-1) {
			return false
		}
	}
	return true
}

// objectURL is the URL of key ("" for the bucket itself) at endpoint.
func (c *Client) objectURL(endpoint, key string) *url.URL {
	u := &url.URL{Scheme: "http", Host: endpoint}
	if c.cfg.Secure {
		u.Scheme = "https"
	}
	if c.virtualHost(endpoint) {
		u.Host = c.cfg.Bucket + "." + endpoint
		u.Path = "/" + key
	} else {
		u.Path = "/" + c.cfg.Bucket + "/" + key
	}
	return u
}

// request is one S3 call before it is signed for a region.
type request struct {
	method  string
	key     string // "" for a request on the bucket
	query   url.Values
	header  http.Header
	body    io.Reader // nil for none
	size    int64     // the body's length
	payload string    // x-amz-content-sha256
	// resend says the request may be sent again after a dropped connection or a 5xx
	// answer: every S3 call here is idempotent, so this holds unless a body cannot be
	// read again.
	resend bool
}

// do sends r and returns the 2xx response; any other answer is an *Error. Requests that
// may be resent are tried up to c.attempts times on connection errors, 5xx, 429 and
// SlowDown, with a short randomised backoff, never past ctx. A refusal that names the
// bucket's region (AWS answers so when the signature's region is wrong) is sent once
// more, signed for that region, which every later request then uses.
func (c *Client) do(ctx context.Context, r *request) (*http.Response, error) {
	body := newRewinder(r.body)
	movedRegion := false
	for attempt := 1; ; {
		region, endpoint := c.location()
		req, err := c.newRequest(ctx, r, body, region, endpoint)
		if err != nil {
			return nil, err
		}
		resp, err := c.hc.Do(req)
		if err == nil && resp.StatusCode/100 == 2 {
			c.settle(region)
			return resp, nil
		}
		if berr := body.failed(); berr != nil {
			// The body's own reader failed (a short stream, a disk error): the
			// request was cut off, and sending it again would fail the same way.
			if resp != nil {
				resp.Body.Close()
			}
			return nil, berr
		}
		var retry bool
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			retry = true // the connection failed
		} else {
			serr := readError(resp, r.method)
			if serr.wrongRegion(region) && !movedRegion {
				movedRegion = true
				c.moveRegion(region, serr.Region)
				if body.canResend() {
					continue
				}
			}
			err = serr
			retry = serr.retryable()
		}
		if !retry || !r.resend || !body.canResend() || attempt >= c.attempts {
			return nil, err
		}
		if werr := backoff(ctx, attempt); werr != nil {
			return nil, werr
		}
		attempt++
	}
}

func (c *Client) newRequest(ctx context.Context, r *request, body *rewinder, region, endpoint string) (*http.Request, error) {
	u := c.objectURL(endpoint, r.key)
	u.RawQuery = r.query.Encode()
	req, err := http.NewRequestWithContext(ctx, r.method, u.Scheme+"://"+u.Host+"/", nil)
	if err != nil {
		return nil, err
	}
	req.URL = u // the key as it is in Path; signHeaders encodes it
	for k, vs := range r.header {
		req.Header[k] = vs
	}
	switch {
	case r.body != nil && r.size == 0:
		req.Body = http.NoBody // nothing to read, nor to rewind
	case r.body != nil:
		if req.Body, err = body.next(ctx); err != nil {
			return nil, err
		}
		req.ContentLength = r.size
	}
	payload := r.payload
	if payload == "" {
		payload = emptySHA256
	}
	signHeaders(req, c.cfg.Credential, region, payload, c.now())
	return req, nil
}

// moveRegion remembers the bucket's region. On AWS's own endpoints the endpoint follows
// it, so that later requests go straight to the bucket's region instead of through a
// redirect.
func (c *Client) moveRegion(from, to string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.region != from {
		return // another request moved it already
	}
	if c.endpoint == "s3.amazonaws.com" || c.endpoint == "s3."+from+".amazonaws.com" {
		c.endpoint = "s3." + to + ".amazonaws.com"
	}
	c.region = to
}

func (c *Client) settle(region string) {
	c.mu.Lock()
	if c.region == region {
		c.settled = true
	}
	c.mu.Unlock()
}

// backoff waits before attempt+1: about 100 ms, then 200 ms, then 400 ms (±50%), so three
// tries of an unreachable service fail within a second.
func backoff(ctx context.Context, attempt int) error {
	d := 100 * time.Millisecond << (attempt - 1)
	d = d/2 + rand.N(d)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
