package main

import (
	"context"
	"fmt"
	"path/filepath"

	"interviewd/blobs"
)

const blobsFlagHelp = "where uploads, export artifacts and plugins are kept: empty for DATA/blobs, or an S3-compatible bucket " +
	"s3://BUCKET[/PREFIX]?endpoint=HOST:PORT&region=REGION (endpoint may be http://HOST:PORT; the credential comes from " +
	"AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN)"

const blobsPresignHelp = "answer export downloads through signed URLs and the web app with a redirect to a presigned URL of the " +
	"S3 bucket (for buckets clients can reach), so artifacts do not pass through the node"

// openBlobs returns the blob store --blobs names, for the data folder data.
func openBlobs(ctx context.Context, spec, data string, env func(string) (string, bool)) (blobs.Store, error) {
	s, err := blobs.Open(ctx, spec, filepath.Join(data, "blobs"), env)
	if err != nil {
		return nil, fmt.Errorf("--blobs: %w", err)
	}
	return s, nil
}
