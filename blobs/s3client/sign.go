package s3client

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// AWS Signature Version 4 for S3, as documented in "Authenticating Requests (AWS
// Signature Version 4)": a canonical request is hashed into a string to sign, which a
// key derived from the secret, the date, the region and the service signs.

const (
	algorithm       = "AWS4-HMAC-SHA256"
	service         = "s3"
	amzTime         = "20060102T150405Z"
	amzDate         = "20060102"
	emptySHA256     = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	unsignedPayload = "UNSIGNED-PAYLOAD"
	// maxPresign is the longest a presigned URL may live (X-Amz-Expires), seven days.
	maxPresign = 7 * 24 * time.Hour
)

// Credential is an access key, its secret and, for a temporary credential, the session
// token.
type Credential struct {
	AccessKey, SecretKey, SessionToken string
}

// signHeaders signs req in place: it sets X-Amz-Date, X-Amz-Content-Sha256 (payloadHash:
// the hex SHA-256 of the body, or UNSIGNED-PAYLOAD), X-Amz-Security-Token when the
// credential has one, and Authorization over every header req carries.
//
// The path and query req sends are rewritten to their canonical encoding, so that the
// bytes on the wire are the bytes signed whatever net/url would have chosen.
func signHeaders(req *http.Request, cred Credential, region, payloadHash string, now time.Time) {
	now = now.UTC()
	req.Header.Set("X-Amz-Date", now.Format(amzTime))
	req.Header.Set("X-Amz-Content-Sha256", payloadHash)
	if cred.SessionToken != "" {
		req.Header.Set("X-Amz-Security-Token", cred.SessionToken)
	}
	path := canonicalPath(req.URL)
	query := canonicalQuery(req.URL.Query())
	req.URL.RawPath, req.URL.RawQuery = path, query
	names, headers := canonicalHeaders(req)
	canon := strings.Join([]string{req.Method, path, query, headers, names, payloadHash}, "\n")
	scope := now.Format(amzDate) + "/" + region + "/" + service + "/aws4_request"
	sig := signature(cred.SecretKey, now, region, scope, canon)
	req.Header.Set("Authorization", algorithm+" Credential="+cred.AccessKey+"/"+scope+
		",SignedHeaders="+names+",Signature="+sig)
}

// presign returns u (a GET of an object, its query holding any response-* overrides)
// signed in its query string: valid for expires from now without any credential. Only
// the host header is signed, so any client can follow the URL.
func presign(u *url.URL, cred Credential, region string, expires time.Duration, now time.Time) string {
	now = now.UTC()
	scope := now.Format(amzDate) + "/" + region + "/" + service + "/aws4_request"
	q := u.Query()
	q.Set("X-Amz-Algorithm", algorithm)
	q.Set("X-Amz-Credential", cred.AccessKey+"/"+scope)
	q.Set("X-Amz-Date", now.Format(amzTime))
	q.Set("X-Amz-Expires", strconv.FormatInt(int64(expires/time.Second), 10))
	q.Set("X-Amz-SignedHeaders", "host")
	if cred.SessionToken != "" {
		q.Set("X-Amz-Security-Token", cred.SessionToken)
	}
	path := canonicalPath(u)
	query := canonicalQuery(q)
	canon := strings.Join([]string{http.MethodGet, path, query, "host:" + u.Host + "\n", "host", unsignedPayload}, "\n")
	sig := signature(cred.SecretKey, now, region, scope, canon)
	return u.Scheme + "://" + u.Host + path + "?" + query + "&X-Amz-Signature=" + sig
}

func signature(secret string, now time.Time, region, scope, canon string) string {
	sum := sha256.Sum256([]byte(canon))
	toSign := algorithm + "\n" + now.Format(amzTime) + "\n" + scope + "\n" + hex.EncodeToString(sum[:])
	key := hmacSHA256([]byte("AWS4"+secret), now.Format(amzDate))
	key = hmacSHA256(key, region)
	key = hmacSHA256(key, service)
	key = hmacSHA256(key, "aws4_request")
	return hex.EncodeToString(hmacSHA256(key, toSign))
}

func hmacSHA256(key []byte, data string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(data))
	return h.Sum(nil)
}

// canonicalPath is the URI-encoded path of u: S3 wants each byte of the object key
// encoded once, slashes kept.
func canonicalPath(u *url.URL) string {
	if u.Path == "" {
		return "/"
	}
	return uriEncode(u.Path, true)
}

// canonicalQuery is q sorted by name (then value), names and values URI-encoded, "="
// always present.
func canonicalQuery(q url.Values) string {
	if len(q) == 0 {
		return ""
	}
	type pair struct{ k, v string }
	pairs := make([]pair, 0, len(q))
	for k, vs := range q {
		for _, v := range vs {
			pairs = append(pairs, pair{uriEncode(k, false), uriEncode(v, false)})
		}
	}
	sort.Slice(pairs, func(i, j int) bool {
		if pairs[i].k != pairs[j].k {
			return pairs[i].k < pairs[j].k
		}
		return pairs[i].v < pairs[j].v
	})
	var b strings.Builder
	for i, p := range pairs {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(p.k)
		b.WriteByte('=')
		b.WriteString(p.v)
	}
	return b.String()
}

// unsignedHeaders are left out of the signature: Authorization is the signature itself,
// and proxies may rewrite the others.
var unsignedHeaders = map[string]bool{"authorization": true, "user-agent": true, "expect": true, "x-amzn-trace-id": true}

// canonicalHeaders returns the signed header names ("a;b;c") and the canonical header
// block ("a:v\nb:v\n..."): host plus every header of req, lower-cased and sorted, values
// trimmed with inner runs of spaces collapsed, repeated headers joined by commas.
func canonicalHeaders(req *http.Request) (names, block string) {
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	vals := map[string]string{"host": host}
	keys := []string{"host"}
	for k, vs := range req.Header {
		lk := strings.ToLower(k)
		if unsignedHeaders[lk] || lk == "host" {
			continue
		}
		clean := make([]string, len(vs))
		for i, v := range vs {
			clean[i] = strings.Join(strings.Fields(v), " ")
		}
		vals[lk] = strings.Join(clean, ",")
		keys = append(keys, lk)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte(':')
		b.WriteString(vals[k])
		b.WriteByte('\n')
	}
	return strings.Join(keys, ";"), b.String()
}
