package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"interviewd/blobs"
)

const blobsFlagHelp = "where uploads, export artifacts and plugins are kept: empty for DATA/blobs, or an S3-compatible bucket " +
	"s3://BUCKET[/PREFIX]?endpoint=HOST:PORT&region=REGION (endpoint may be http://HOST:PORT; the credential comes from " +
	"AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN)"

const blobsPresignHelp = "answer export downloads through signed URLs and the web app with a redirect to a presigned URL of the " +
	"S3 bucket (for buckets clients can reach), so artifacts do not pass through the node"

// checkBlobs refuses a --blobs or --blobs-presign that cannot work, without touching
// any folder or the network.
func checkBlobs(spec string, presign bool, env func(string) (string, bool)) error {
	if strings.HasPrefix(spec, "s3://") {
		if _, err := blobs.ParseS3URL(spec, env); err != nil {
			return fmt.Errorf("--blobs: %w", err)
		}
		return nil
	}
	if strings.Contains(spec, "://") {
		_, err := openBlobs(context.Background(), spec, "", env) // names the scheme
		return err
	}
	if presign {
		return fmt.Errorf("--blobs-presign needs --blobs s3://…: files in a folder have no presigned URLs")
	}
	return nil
}

// openBlobs returns the blob store --blobs names, for the data folder data.
func openBlobs(ctx context.Context, spec, data string, env func(string) (string, bool)) (blobs.Store, error) {
	s, err := blobs.Open(ctx, spec, filepath.Join(data, "blobs"), env)
	if err != nil {
		return nil, fmt.Errorf("--blobs: %w", err)
	}
	return s, nil
}
