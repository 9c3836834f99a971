package cmd

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBlobsFlags checks --blobs, INTERVIEWD_BLOBS and --blobs-presign before anything
// touches the data folder.
func TestBlobsFlags(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	envWith := func(vars map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	}
	for _, c := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"ErrHalfACredential", []string{"--blobs", "s3://media?endpoint=127.0.0.1:9"}, map[string]string{"AWS_ACCESS_KEY_ID": "a"},
			"--blobs: s3://media: AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not"},
		{"ErrHalfACredentialFromEnv", nil, map[string]string{"INTERVIEWD_BLOBS": "s3://media?endpoint=127.0.0.1:9", "AWS_SECRET_ACCESS_KEY": "b"},
			"AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not"},
		{"ErrSSE", []string{"--blobs", "s3://media?endpoint=127.0.0.1:9&sse=aes"}, nil, `--blobs: s3://media: sse="aes"; want sse=s3 (SSE-S3) or sse=kms (SSE-KMS)`},
		{"ErrKMSKeyWithoutKMS", []string{"--blobs", "s3://media?endpoint=127.0.0.1:9&kms_key=k"}, nil, "kms_key is the key of sse=kms"},
		{"ErrScheme", []string{"--blobs", "gs://media"}, nil, "unknown scheme gs"},
		{"ErrEndpoint", []string{"--blobs", "s3://media?endpoint=ftp://x"}, map[string]string{"AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "b"}, "want host:port"},
		{"ErrPresignOnFolder", []string{"--blobs-presign"}, nil, "--blobs-presign needs --blobs s3://"},
		{"ErrPresignEnvNotBool", nil, map[string]string{"INTERVIEWD_BLOBS_PRESIGN": "sometimes"}, "INTERVIEWD_BLOBS_PRESIGN=\"sometimes\" is not true or false"},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"serve", "--addr", "127.0.0.1:0", "--data", data}, c.args...)
			err := Run(context.Background(), args, io.Discard, io.Discard, envWith(c.env))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
			if _, err := os.Stat(data); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("a refused start created the data folder: %v", err)
			}
		})
	}
}
