package s3client

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"testing"

	"interviewd/blobs/blobstest"
)

// TestSignedPayloadRefused: over plain http the body's hash is signed, and a real S3
// server (versitygw) refuses bytes other than the ones hashed, storing nothing: what
// keeps a body cut short on the way from being stored as a whole one.
func TestSignedPayloadRefused(t *testing.T) {
	srv := blobstest.Start(t)
	c, err := New(Config{
		Endpoint: srv.Addr, Region: "us-east-1", Bucket: srv.Bucket,
		Credential: Credential{AccessKey: blobstest.Access, SecretKey: blobstest.Secret},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	other := sha256.Sum256([]byte("the whole body"))
	_, err = c.do(ctx, &request{
		method: http.MethodPut, key: "cut", body: strings.NewReader("the whole"), size: 9,
		payload: hex.EncodeToString(other[:]),
	})
	var serr *Error
	if !errors.As(err, &serr) || serr.StatusCode/100 != 4 {
		t.Fatalf("a body that is not the hashed one: %v", err)
	}
	if _, err := c.HeadObject(ctx, "cut"); !errors.As(err, &serr) || !serr.NotFound() {
		t.Fatalf("it was stored: %v", err)
	}
	if err := c.PutObject(ctx, "whole", strings.NewReader("the whole body"), 14, ""); err != nil {
		t.Fatal(err)
	}
	if info, err := c.HeadObject(ctx, "whole"); err != nil || info.Size != 14 {
		t.Fatalf("%+v %v", info, err)
	}
}
