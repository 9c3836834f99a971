package cmd

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"interviewd/blobs"
)

const blobsFlagHelp = "where uploads, export artifacts and plugins are kept: empty for DATA/blobs, a folder, or an S3-compatible bucket " +
	"s3://BUCKET[/PREFIX]?endpoint=HOST:PORT&region=REGION[&sse=s3|kms[&kms_key=KEY_ID]] (endpoint may be http://HOST:PORT; " +
	"the credential is AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, else MINIO_ROOT_USER and MINIO_ROOT_PASSWORD, " +
	"the shared credentials file (AWS_PROFILE), or an IAM role: IRSA, ECS task role, EC2 instance profile)"

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

// migrateBlobsOutput is the files' part of `interviewd migrate`'s report.
type migrateBlobsOutput struct {
	From     string `json:"from"`
	To       string `json:"to"`
	Files    int    `json:"files"`
	Verified bool   `json:"verified"`
}

// migrateBlobs copies DATA/blobs into the bucket spec names (toBucket) or the bucket
// into DATA/blobs, every file read back and compared (blobs.Copy).
func migrateBlobs(ctx context.Context, spec, data string, toBucket bool, env func(string) (string, bool)) (*migrateBlobsOutput, error) {
	bucket, err := openBlobs(ctx, spec, data, env)
	if err != nil {
		return nil, err
	}
	folder, err := blobs.NewFS(filepath.Join(data, "blobs"))
	if err != nil {
		return nil, err
	}
	var src, dst blobs.Store = folder, bucket
	if !toBucket {
		src, dst = bucket, folder
	}
	n, err := blobs.Copy(ctx, dst, src)
	if err != nil {
		return nil, fmt.Errorf("copy files from %s to %s (%d copied and verified before this): %w", src, dst, n, err)
	}
	return &migrateBlobsOutput{From: src.String(), To: dst.String(), Files: n, Verified: true}, nil
}
