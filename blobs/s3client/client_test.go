package s3client

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"
)

// AWS's own behaviour (regions, throttling) cannot run here: these tests put a small
// stand-in for it on loopback that answers as AWS documents. The client's requests
// against a real S3 server are in the blobs package's conformance suite (versitygw).

type seen struct {
	method, path, region string
	body                 string
	payload              string // x-amz-content-sha256
}

// fakeS3 answers each request with answer and records what it saw.
type fakeS3 struct {
	mu   sync.Mutex
	reqs []seen
	srv  *httptest.Server
}

func newFake(t *testing.T, answer func(n int, s seen, w http.ResponseWriter)) (*fakeS3, *Client) {
	t.Helper()
	return startFake(t, false, answer)
}

// newFakeTLS is newFake on https.
func newFakeTLS(t *testing.T, answer func(n int, s seen, w http.ResponseWriter)) (*fakeS3, *Client) {
	t.Helper()
	return startFake(t, true, answer)
}

func startFake(t *testing.T, withTLS bool, answer func(n int, s seen, w http.ResponseWriter)) (*fakeS3, *Client) {
	t.Helper()
	f := &fakeS3{}
	f.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s := seen{method: r.Method, path: r.URL.EscapedPath(), region: scopeRegion(r.Header.Get("Authorization")),
			body: string(b), payload: r.Header.Get("X-Amz-Content-Sha256")}
		f.mu.Lock()
		f.reqs = append(f.reqs, s)
		n := len(f.reqs)
		f.mu.Unlock()
		answer(n, s, w)
	}))
	if withTLS {
		f.srv.StartTLS()
	} else {
		f.srv.Start()
	}
	t.Cleanup(f.srv.Close)
	_, host, _ := strings.Cut(f.srv.URL, "://")
	c, err := New(Config{Endpoint: host, Secure: withTLS, Bucket: "files", Credential: exampleCred, Transport: f.srv.Client().Transport})
	if err != nil {
		t.Fatal(err)
	}
	return f, c
}

func (f *fakeS3) seen() []seen {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seen(nil), f.reqs...)
}

// scopeRegion reads the region out of an Authorization header's credential scope.
func scopeRegion(auth string) string {
	_, cred, _ := strings.Cut(auth, "Credential=")
	parts := strings.Split(cred, "/")
	if len(parts) < 3 {
		return ""
	}
	return parts[2]
}

func xmlError(w http.ResponseWriter, status int, code, extra string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>`+code+`</Code><Message>refused</Message>`+extra+`<RequestId>R1</RequestId></Error>`)
}

// TestWrongRegion: a bucket in eu-west-1 refuses a request signed for us-east-1 (HEAD:
// 301 with x-amz-bucket-region; others: 400 AuthorizationHeaderMalformed naming the
// region). The request is sent once more for that region, and every later one, presigned
// URLs included, uses it straight away.
func TestWrongRegion(t *testing.T) {
	f, c := newFake(t, func(_ int, s seen, w http.ResponseWriter) {
		switch {
		case s.region == "eu-west-1":
			w.Header().Set("Last-Modified", "Fri, 24 May 2013 00:00:00 GMT")
			io.WriteString(w, "bytes")
		case s.method == http.MethodHead:
			w.Header().Set("X-Amz-Bucket-Region", "eu-west-1")
			w.WriteHeader(http.StatusMovedPermanently)
		default:
			xmlError(w, http.StatusBadRequest, "AuthorizationHeaderMalformed", "<Region>eu-west-1</Region>")
		}
	})
	ctx := context.Background()
	info, err := c.HeadObject(ctx, "a")
	if err != nil || info.Size != 5 || info.LastModified.IsZero() {
		t.Fatalf("head: %+v %v", info, err)
	}
	body, _, err := c.GetObject(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(body)
	body.Close()
	if string(b) != "bytes" {
		t.Fatalf("get: %q", b)
	}
	u, err := c.PresignGet(ctx, "a", time.Minute, nil)
	if err != nil || !strings.Contains(u, "%2Feu-west-1%2Fs3%2F") {
		t.Fatalf("presign: %s %v", u, err)
	}
	var regions []string
	for _, s := range f.seen() {
		regions = append(regions, s.method+" "+s.region)
	}
	if got := strings.Join(regions, ", "); got != "HEAD us-east-1, HEAD eu-west-1, GET eu-west-1" {
		t.Fatalf("requests: %s", got)
	}

	// A region refusal is followed once, not in a loop.
	f2, c2 := newFake(t, func(_ int, s seen, w http.ResponseWriter) {
		next := map[string]string{"us-east-1": "eu-west-1", "eu-west-1": "ap-south-1", "ap-south-1": "us-east-1"}
		xmlError(w, http.StatusBadRequest, "AuthorizationHeaderMalformed", "<Region>"+next[s.region]+"</Region>")
	})
	var serr *Error
	if _, _, err := c2.GetObject(ctx, "a"); !errors.As(err, &serr) || serr.StatusCode != 400 {
		t.Fatalf("a region loop: %v", err)
	}
	if n := len(f2.seen()); n != 2 {
		t.Fatalf("a region loop sent %d requests", n)
	}
}

// TestPresignAsksRegion: without a configured region the first presigned URL waits for
// the bucket to name its region, so it is not signed for the wrong one.
func TestPresignAsksRegion(t *testing.T) {
	f, c := newFake(t, func(_ int, s seen, w http.ResponseWriter) {
		if s.region != "eu-central-1" {
			w.Header().Set("X-Amz-Bucket-Region", "eu-central-1")
			w.WriteHeader(http.StatusMovedPermanently)
		}
	})
	u, err := c.PresignGet(context.Background(), "exports/j.csv", time.Minute, nil)
	if err != nil || !strings.Contains(u, "%2Feu-central-1%2F") || !strings.HasPrefix(u, f.srv.URL+"/files/exports/j.csv?") {
		t.Fatalf("presign: %s %v", u, err)
	}
	if n := len(f.seen()); n != 2 {
		t.Fatalf("%d requests", n)
	}
	if _, err := c.PresignGet(context.Background(), "exports/j.csv", time.Minute, nil); err != nil || len(f.seen()) != 2 {
		t.Fatalf("a second presign asked again: %v, %d requests", err, len(f.seen()))
	}
}

// TestRetries: 5xx and SlowDown are tried again up to three times in all; a PUT only when
// its body can be sent again; a 4xx never.
func TestRetries(t *testing.T) {
	ctx := context.Background()
	t.Run("SlowDownThenOK", func(t *testing.T) {
		f, c := newFake(t, func(n int, _ seen, w http.ResponseWriter) {
			if n < 3 {
				xmlError(w, http.StatusServiceUnavailable, "SlowDown", "")
				return
			}
			io.WriteString(w, "ok")
		})
		body, info, err := c.GetObject(ctx, "a")
		if err != nil || info.Size != 2 {
			t.Fatalf("%+v %v", info, err)
		}
		body.Close()
		if n := len(f.seen()); n != 3 {
			t.Fatalf("%d requests", n)
		}
	})
	t.Run("GivesUp", func(t *testing.T) {
		f, c := newFake(t, func(_ int, _ seen, w http.ResponseWriter) {
			xmlError(w, http.StatusInternalServerError, "InternalError", "")
		})
		var serr *Error
		if err := c.DeleteObject(ctx, "a"); !errors.As(err, &serr) || serr.Code != "InternalError" || serr.RequestID != "R1" {
			t.Fatalf("%v", err)
		}
		if n := len(f.seen()); n != 3 {
			t.Fatalf("%d requests", n)
		}
	})
	t.Run("NoRetryOn4xx", func(t *testing.T) {
		f, c := newFake(t, func(_ int, _ seen, w http.ResponseWriter) {
			xmlError(w, http.StatusForbidden, "AccessDenied", "")
		})
		var serr *Error
		if _, err := c.HeadObject(ctx, "a"); !errors.As(err, &serr) || serr.StatusCode != 403 || serr.NotFound() {
			t.Fatalf("%v", err)
		}
		if n := len(f.seen()); n != 1 {
			t.Fatalf("%d requests", n)
		}
	})
	t.Run("PutSeekable", func(t *testing.T) {
		f, c := newFake(t, func(n int, _ seen, w http.ResponseWriter) {
			if n < 3 {
				xmlError(w, http.StatusServiceUnavailable, "ServiceUnavailable", "")
			}
		})
		if err := c.PutObject(ctx, "a", bytes.NewReader([]byte("payload")), 7, ""); err != nil {
			t.Fatal(err)
		}
		for _, s := range f.seen() {
			if s.method != http.MethodPut || s.body != "payload" {
				t.Fatalf("%+v", f.seen())
			}
		}
		if n := len(f.seen()); n != 3 {
			t.Fatalf("%d requests", n)
		}
	})
	t.Run("PutStreamOnce", func(t *testing.T) {
		// On https a stream is sent as it is read, unsigned: it cannot be sent again.
		f, c := newFakeTLS(t, func(_ int, _ seen, w http.ResponseWriter) {
			xmlError(w, http.StatusServiceUnavailable, "ServiceUnavailable", "")
		})
		stream := io.MultiReader(strings.NewReader("pay"), strings.NewReader("load")) // cannot seek
		if err := c.PutObject(ctx, "a", stream, 7, ""); err == nil {
			t.Fatal("stored")
		}
		if s := f.seen(); len(s) != 1 || s[0].payload != unsignedPayload {
			t.Fatalf("a stream was sent %d times: %+v", len(s), s)
		}
	})
	t.Run("PutStreamHTTP", func(t *testing.T) {
		// On plain http the body's hash is signed: a stream is copied to a file first to
		// learn it, and that file can be sent again.
		f, c := newFake(t, func(n int, _ seen, w http.ResponseWriter) {
			if n < 2 {
				xmlError(w, http.StatusServiceUnavailable, "ServiceUnavailable", "")
			}
		})
		stream := io.MultiReader(strings.NewReader("pay"), strings.NewReader("load"))
		if err := c.PutObject(ctx, "a", stream, 7, ""); err != nil {
			t.Fatal(err)
		}
		const sum = "239f59ed55e737c77147cf55ad0c1b030b6d7ee748a7426952f9b852d5a935e5" // SHA-256 of "payload"
		if s := f.seen(); len(s) != 2 || s[0].payload != sum || s[1].payload != sum || s[1].body != "payload" {
			t.Fatalf("%+v", s)
		}
		if err := c.PutObject(ctx, "a", strings.NewReader("payload"), 7, ""); err != nil || f.seen()[2].payload != sum {
			t.Fatalf("a seekable body: %v %+v", err, f.seen())
		}
		if err := c.PutObject(ctx, "a", strings.NewReader("pay"), 7, ""); err == nil || len(f.seen()) != 3 {
			t.Fatalf("a short body was sent: %v", err)
		}
		if err := c.PutObject(ctx, "a", io.MultiReader(strings.NewReader("payload!")), 7, ""); err == nil || len(f.seen()) != 3 {
			t.Fatalf("a long stream was sent: %v", err)
		}
		// Past maxBuffered a stream goes through a temporary file.
		big := bytes.Repeat([]byte("0123456789abcdef"), maxBuffered/16+1)
		if err := c.PutObject(ctx, "a", io.MultiReader(bytes.NewReader(big)), int64(len(big)), ""); err != nil {
			t.Fatal(err)
		}
		want := sha256.Sum256(big)
		if s := f.seen(); len(s) != 4 || s[3].payload != hex.EncodeToString(want[:]) || s[3].body != string(big) {
			t.Fatalf("a large stream: %d requests", len(s))
		}
	})
	t.Run("PutUnknownSize", func(t *testing.T) {
		f, c := newFake(t, func(n int, _ seen, w http.ResponseWriter) {
			if n < 2 {
				xmlError(w, http.StatusServiceUnavailable, "SlowDown", "")
			}
		})
		// Spooled to a file first, so it is sent whole twice.
		if err := c.PutObject(ctx, "a", iotest.OneByteReader(strings.NewReader("payload")), -1, ""); err != nil {
			t.Fatal(err)
		}
		if s := f.seen(); len(s) != 2 || s[0].body != "payload" || s[1].body != "payload" {
			t.Fatalf("%+v", s)
		}
	})
	t.Run("ContextDuringBackoff", func(t *testing.T) {
		ctx, cancel := context.WithCancel(ctx)
		f, c := newFake(t, func(_ int, _ seen, w http.ResponseWriter) {
			cancel()
			xmlError(w, http.StatusServiceUnavailable, "SlowDown", "")
		})
		if _, err := c.HeadObject(ctx, "a"); !errors.Is(err, context.Canceled) {
			t.Fatalf("%v", err)
		}
		if n := len(f.seen()); n != 1 {
			t.Fatalf("%d requests", n)
		}
	})
}
