package s3client

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The examples of AWS's "Signature Calculations for the Authorization Header:
// Transferring Payload in a Single Chunk" and "Authenticating Requests: Using Query
// Parameters" pages: the documented credential, bucket and date, and the signatures the
// documentation prints.
var (
	exampleCred = Credential{AccessKey: "AKIAIOSFODNN7EXAMPLE", SecretKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}
	exampleTime = time.Date(2013, 5, 24, 0, 0, 0, 0, time.UTC)
)

func TestSignHeadersAWSExamples(t *testing.T) {
	for _, tc := range []struct {
		name, method, url string
		header            map[string]string
		payload           string
		signed, signature string
	}{
		{
			name: "GET object", method: "GET", url: "https://examplebucket.s3.amazonaws.com/test.txt",
			header:  map[string]string{"Range": "bytes=0-9"},
			payload: emptySHA256,
			signed:  "host;range;x-amz-content-sha256;x-amz-date", signature: "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41",
		},
		{
			// The key's '$' is encoded in the canonical path (and on the wire).
			name: "PUT object", method: "PUT", url: "https://examplebucket.s3.amazonaws.com/test$file.text",
			header:  map[string]string{"Date": "Fri, 24 May 2013 00:00:00 GMT", "X-Amz-Storage-Class": "REDUCED_REDUNDANCY"},
			payload: "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072", // SHA-256 of "Welcome to Amazon S3."
			signed:  "date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class", signature: "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd",
		},
		{
			// A query parameter without a value is signed as "lifecycle=".
			name: "GET bucket lifecycle", method: "GET", url: "https://examplebucket.s3.amazonaws.com/?lifecycle",
			payload: emptySHA256,
			signed:  "host;x-amz-content-sha256;x-amz-date", signature: "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543",
		},
		{
			name: "list objects", method: "GET", url: "https://examplebucket.s3.amazonaws.com/?max-keys=2&prefix=J",
			payload: emptySHA256,
			signed:  "host;x-amz-content-sha256;x-amz-date", signature: "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, tc.url, nil)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			signHeaders(req, exampleCred, "us-east-1", tc.payload, exampleTime)
			want := "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,SignedHeaders=" +
				tc.signed + ",Signature=" + tc.signature
			if got := req.Header.Get("Authorization"); got != want {
				t.Fatalf("Authorization\n got %s\nwant %s", got, want)
			}
			if req.Header.Get("X-Amz-Date") != "20130524T000000Z" || req.Header.Get("X-Amz-Content-Sha256") != tc.payload {
				t.Fatalf("headers %v", req.Header)
			}
		})
	}
	// The path sent is the path signed.
	req, _ := http.NewRequest("PUT", "https://examplebucket.s3.amazonaws.com/test$file.text", nil)
	signHeaders(req, exampleCred, "us-east-1", emptySHA256, exampleTime)
	if got := req.URL.RequestURI(); got != "/test%24file.text" {
		t.Fatalf("request URI %s", got)
	}
}

// TestSessionToken: a temporary credential's token is sent and signed, as a header or
// in a presigned URL's query.
func TestSessionToken(t *testing.T) {
	cred := exampleCred
	cred.SessionToken = "token/with+odd=chars"
	req, _ := http.NewRequest("GET", "https://examplebucket.s3.amazonaws.com/test.txt", nil)
	signHeaders(req, cred, "us-east-1", emptySHA256, exampleTime)
	if req.Header.Get("X-Amz-Security-Token") != cred.SessionToken ||
		!strings.Contains(req.Header.Get("Authorization"), "SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token,") {
		t.Fatalf("headers %v", req.Header)
	}
	c, _ := New(Config{Endpoint: "s3.amazonaws.com", Secure: true, Region: "us-east-1", Bucket: "examplebucket", Credential: cred})
	u, err := c.PresignGet(context.Background(), "test.txt", time.Hour, nil)
	if err != nil || !strings.Contains(u, "&X-Amz-Security-Token=token%2Fwith%2Bodd%3Dchars&X-Amz-SignedHeaders=host&X-Amz-Signature=") {
		t.Fatalf("presigned %s %v", u, err)
	}
}

// TestPresignAWSExample builds the documented presigned URL through the client: the
// bucket on AWS is addressed by host name, and the whole URL matches.
func TestPresignAWSExample(t *testing.T) {
	c, err := New(Config{Endpoint: "s3.amazonaws.com", Secure: true, Region: "us-east-1", Bucket: "examplebucket", Credential: exampleCred})
	if err != nil {
		t.Fatal(err)
	}
	c.now = func() time.Time { return exampleTime }
	got, err := c.PresignGet(context.Background(), "test.txt", 24*time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	const want = "https://examplebucket.s3.amazonaws.com/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256" +
		"&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request" +
		"&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host" +
		"&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404"
	if got != want {
		t.Fatalf("presigned URL\n got %s\nwant %s", got, want)
	}
	for _, d := range []time.Duration{0, 500 * time.Millisecond, 7*24*time.Hour + time.Second} {
		if _, err := c.PresignGet(context.Background(), "test.txt", d, nil); err == nil || !strings.Contains(err.Error(), "7 days") {
			t.Errorf("expires %s: %v", d, err)
		}
	}
}

func TestAddressing(t *testing.T) {
	for _, tc := range []struct {
		endpoint, bucket string
		secure           bool
		want             string
	}{
		{"s3.eu-west-1.amazonaws.com", "files", true, "https://files.s3.eu-west-1.amazonaws.com/a/b%20c"},
		{"s3.amazonaws.com", "my.files", true, "https://s3.amazonaws.com/my.files/a/b%20c"},     // a dotted bucket breaks the certificate
		{"s3.amazonaws.com", "my.files", false, "http://my.files.s3.amazonaws.com/a/b%20c"},     // no certificate to break
		{"s3.amazonaws.com", "Upper_Case", true, "https://s3.amazonaws.com/Upper_Case/a/b%20c"}, // not a host name
		{"127.0.0.1:7070", "files", false, "http://127.0.0.1:7070/files/a/b%20c"},
		{"ACCOUNT.r2.cloudflarestorage.com", "files", true, "https://ACCOUNT.r2.cloudflarestorage.com/files/a/b%20c"},
	} {
		c, err := New(Config{Endpoint: tc.endpoint, Secure: tc.secure, Bucket: tc.bucket, Credential: exampleCred})
		if err != nil {
			t.Fatal(err)
		}
		req, err := c.newRequest(context.Background(), &request{method: "GET", key: "a/b c"}, newRewinder(nil), "us-east-1", tc.endpoint)
		if err != nil {
			t.Fatal(err)
		}
		if got := req.URL.String(); got != tc.want {
			t.Errorf("%s %s: %s, want %s", tc.endpoint, tc.bucket, got, tc.want)
		}
	}
}

// BenchmarkSignHeaders is the CPU each request spends on its signature.
func BenchmarkSignHeaders(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		req, _ := http.NewRequest("GET", "https://examplebucket.s3.amazonaws.com/exports/0190c8a4-6f0b-7e8e-9d55-1f9b8c1a2b3c.csv", nil)
		signHeaders(req, exampleCred, "us-east-1", emptySHA256, exampleTime)
	}
}
