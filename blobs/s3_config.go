package blobs

import (
	"crypto/x509"
	"fmt"
	"net/url"
	"strings"
)

// S3Config names a bucket of an S3-compatible service (AWS S3, Cloudflare R2, Garage,
// MinIO, Ceph, versitygw, ...) and how to reach it.
type S3Config struct {
	Endpoint string // host[:port]
	Secure   bool   // https
	Region   string // "" lets the client ask the bucket for its region
	Bucket   string
	// Prefix is prepended to every key ("interviewd/" to share a bucket); "" or ending
	// in a slash.
	Prefix string
	// AccessKey, SecretKey and SessionToken are the credential the configuration gives
	// explicitly. Empty: the credential chain (environment, shared credentials file,
	// IAM role) finds one; see credentialProviders.
	AccessKey, SecretKey, SessionToken string
	// SSE asks the bucket to encrypt every object written: "" (the bucket's default),
	// SSES3 or SSEKMS. KMSKeyID names the KMS key for SSEKMS ("" is the account's
	// default aws/s3 key).
	SSE      string
	KMSKeyID string
	// RootCAs, when set, are the only roots trusted for the endpoint's certificate (a
	// private CA); nil trusts the system's.
	RootCAs *x509.CertPool
}

// The values of the sse parameter.
const (
	SSES3  = "s3"  // SSE-S3: keys managed by the service (x-amz-server-side-encryption: AES256)
	SSEKMS = "kms" // SSE-KMS: keys in the service's KMS (x-amz-server-side-encryption: aws:kms)
)

// s3Params are the query parameters a --blobs s3:// value may carry.
var s3Params = map[string]bool{"endpoint": true, "region": true, "sse": true, "kms_key": true}

const s3Syntax = "s3://bucket[/prefix]?endpoint=host:port&region=region[&sse=s3|kms[&kms_key=ID]]"

// ParseS3URL reads a --blobs value,
// s3://BUCKET[/PREFIX]?endpoint=URL&region=REGION[&sse=s3|kms[&kms_key=KEY_ID]].
// endpoint is host[:port] (https) or an http:// or https:// URL; without it the store is
// AWS S3 (s3.REGION.amazonaws.com). sse asks for server-side encryption of every object
// written.
//
// The credential given explicitly is AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and, when
// set, AWS_SESSION_TOKEN, read through env (the configuration interviewd was started
// with). Without them the store looks for one through the SDK's credential chain when
// it first speaks to the bucket.
func ParseS3URL(raw string, env func(string) (string, bool)) (S3Config, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "s3" {
		return S3Config{}, fmt.Errorf("%q: want %s", raw, s3Syntax)
	}
	if u.User != nil {
		return S3Config{}, fmt.Errorf("s3://%s: put the credential in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or a shared credentials file or an IAM role), not in the URL", u.Host)
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
		if !s3Params[k] {
			return S3Config{}, fmt.Errorf("%q: unknown parameter %q; want %s", raw, k, s3Syntax)
		}
	}
	cfg.Region = q.Get("region")
	if cfg.Endpoint, cfg.Secure, err = s3Endpoint(q.Get("endpoint"), cfg.Region); err != nil {
		return S3Config{}, err
	}
	cfg.SSE, cfg.KMSKeyID = q.Get("sse"), q.Get("kms_key")
	switch {
	case cfg.SSE != "" && cfg.SSE != SSES3 && cfg.SSE != SSEKMS:
		return S3Config{}, fmt.Errorf("s3://%s: sse=%q; want sse=s3 (SSE-S3) or sse=kms (SSE-KMS)", cfg.Bucket, cfg.SSE)
	case cfg.KMSKeyID != "" && cfg.SSE != SSEKMS:
		return S3Config{}, fmt.Errorf("s3://%s: kms_key is the key of sse=kms; add sse=kms or drop kms_key", cfg.Bucket)
	}
	cfg.AccessKey, _ = env("AWS_ACCESS_KEY_ID")
	cfg.SecretKey, _ = env("AWS_SECRET_ACCESS_KEY")
	cfg.SessionToken, _ = env("AWS_SESSION_TOKEN")
	// Half a credential is a mistake, not a cue to look elsewhere.
	switch {
	case cfg.AccessKey != "" && cfg.SecretKey == "":
		return S3Config{}, fmt.Errorf("s3://%s: AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not; set both, or neither to use the credential chain", cfg.Bucket)
	case cfg.AccessKey == "" && cfg.SecretKey != "":
		return S3Config{}, fmt.Errorf("s3://%s: AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not; set both, or neither to use the credential chain", cfg.Bucket)
	case cfg.AccessKey == "" && cfg.SessionToken != "":
		return S3Config{}, fmt.Errorf("s3://%s: AWS_SESSION_TOKEN is set without AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY", cfg.Bucket)
	}
	return cfg, nil
}

// s3Endpoint reads the endpoint parameter: host[:port] (https), an http:// or https://
// URL, or "" for AWS S3 in region.
func s3Endpoint(ep, region string) (host string, secure bool, err error) {
	switch {
	case ep == "" && region != "":
		return "s3." + region + ".amazonaws.com", true, nil
	case ep == "":
		return "s3.amazonaws.com", true, nil
	case strings.Contains(ep, "://"):
		eu, err := url.Parse(ep)
		if err != nil || (eu.Scheme != "http" && eu.Scheme != "https") || eu.Host == "" || strings.Trim(eu.Path, "/") != "" {
			return "", false, fmt.Errorf("endpoint %q: want host:port, http://host:port or https://host", ep)
		}
		return eu.Host, eu.Scheme == "https", nil
	case strings.ContainsAny(ep, "/?#@"):
		return "", false, fmt.Errorf("endpoint %q: want host:port, http://host:port or https://host", ep)
	}
	return ep, true, nil
}
