package blobs_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"interviewd/blobs"
	"interviewd/blobs/blobstest"
)

// noEnv is a configuration that gives no keys: the store uses the credential chain.
func noEnv(string) (string, bool) { return "", false }

// chainVars are the process environment the credential chain reads.
var chainVars = []string{
	"AWS_ACCESS_KEY_ID", "AWS_ACCESS_KEY", "AWS_SECRET_ACCESS_KEY", "AWS_SECRET_KEY", "AWS_SESSION_TOKEN",
	"MINIO_ROOT_USER", "MINIO_ROOT_PASSWORD", "MINIO_ACCESS_KEY", "MINIO_SECRET_KEY",
	"AWS_PROFILE", "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE",
	"AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_ROLE_SESSION_NAME",
	"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
	"AWS_CONTAINER_AUTHORIZATION_TOKEN", "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
}

// emptyChain clears every source of the chain for the rest of the test: no variables, a
// home folder with no ~/.aws, and as the IAM role's source a loopback container
// credentials endpoint that has none (so no lookup leaves the machine for the instance
// metadata service).
func emptyChain(t *testing.T) {
	t.Helper()
	for _, v := range chainVars {
		t.Setenv(v, "")
	}
	t.Setenv("HOME", t.TempDir())
	none := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(none.Close)
	t.Setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", none.URL+"/no-role")
}

// roundTrip writes, reads and pings through s.
func roundTrip(t *testing.T, s blobs.Store) {
	t.Helper()
	put(t, s, "files/cred", []byte("through the chain"))
	if got := string(get(t, s, "files/cred")); got != "through the chain" {
		t.Fatalf("got %q", got)
	}
	if err := s.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func openS3(t *testing.T, srv *blobstest.S3, env func(string) (string, bool)) blobs.Store {
	t.Helper()
	s, err := blobs.Open(context.Background(), srv.URL(), "", env)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// refused checks that the bucket turns s away: unavailable, not missing.
func refused(t *testing.T, s blobs.Store) error {
	t.Helper()
	if _, _, err := s.Get(context.Background(), "files/cred"); !errors.Is(err, blobs.ErrUnavailable) {
		t.Fatalf("get: %v, want ErrUnavailable", err)
	}
	err := s.Ping(context.Background())
	if !errors.Is(err, blobs.ErrUnavailable) {
		t.Fatalf("ping: %v, want ErrUnavailable", err)
	}
	return err
}

// TestS3CredentialEnv reaches versitygw with keys from the process environment, AWS's
// and MinIO's names, and checks that keys the configuration gives win over them.
func TestS3CredentialEnv(t *testing.T) {
	srv := blobstest.Start(t)
	t.Run("AWS", func(t *testing.T) {
		emptyChain(t)
		t.Setenv("AWS_ACCESS_KEY_ID", blobstest.Access)
		t.Setenv("AWS_SECRET_ACCESS_KEY", blobstest.Secret)
		roundTrip(t, openS3(t, srv, noEnv))
	})
	t.Run("MinIO", func(t *testing.T) {
		emptyChain(t)
		t.Setenv("MINIO_ROOT_USER", blobstest.Access)
		t.Setenv("MINIO_ROOT_PASSWORD", blobstest.Secret)
		roundTrip(t, openS3(t, srv, noEnv))
	})
	t.Run("ExplicitFirst", func(t *testing.T) {
		emptyChain(t)
		t.Setenv("AWS_ACCESS_KEY_ID", blobstest.Access)
		t.Setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret")
		roundTrip(t, openS3(t, srv, srv.Env)) // the configuration's keys, not the environment's
		// Keys given are used as given: a wrong one is not papered over by the chain.
		t.Setenv("AWS_SECRET_ACCESS_KEY", blobstest.Secret)
		refused(t, openS3(t, srv, func(name string) (string, bool) {
			if name == "AWS_SECRET_ACCESS_KEY" {
				return "not-the-secret", true
			}
			return srv.Env(name)
		}))
	})
	t.Run("ErrHalfACredential", func(t *testing.T) {
		for name, want := range map[string]string{
			"AWS_ACCESS_KEY_ID":     "AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not",
			"AWS_SECRET_ACCESS_KEY": "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not",
		} {
			_, err := blobs.ParseS3URL(srv.URL(), func(k string) (string, bool) {
				if k == name {
					return "", false
				}
				return srv.Env(k)
			})
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("without %s: %v, want %q", name, err, want)
			}
		}
	})
}

// TestS3CredentialFile reaches versitygw with keys from a shared credentials file, the
// profile AWS_PROFILE names (without it, the file's default profile).
func TestS3CredentialFile(t *testing.T) {
	srv := blobstest.Start(t)
	emptyChain(t)
	file := filepath.Join(t.TempDir(), "credentials")
	ini := "[default]\naws_access_key_id = " + blobstest.Access + "\naws_secret_access_key = not-the-secret\n\n" +
		"[interviewd]\naws_access_key_id = " + blobstest.Access + "\naws_secret_access_key = " + blobstest.Secret + "\n"
	if err := os.WriteFile(file, []byte(ini), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", file)
	refused(t, openS3(t, srv, noEnv)) // the default profile's secret is wrong
	t.Setenv("AWS_PROFILE", "interviewd")
	roundTrip(t, openS3(t, srv, noEnv))

	// ~/.aws/credentials when no file is named.
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "")
	home := t.TempDir()
	t.Setenv("HOME", home)
	if err := os.MkdirAll(filepath.Join(home, ".aws"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".aws", "credentials"), []byte(ini), 0o600); err != nil {
		t.Fatal(err)
	}
	roundTrip(t, openS3(t, srv, noEnv))
}

// TestS3CredentialRole reaches versitygw with an IAM role's temporary credential,
// served by a loopback endpoint speaking the ECS/EKS container credentials protocol
// (AWS_CONTAINER_CREDENTIALS_FULL_URI with AWS_CONTAINER_AUTHORIZATION_TOKEN), the
// same provider that asks the instance metadata service on EC2. The credential it
// hands out expires within a second: the store fetches a new one and goes on working.
// (It carries no session token: versitygw refuses tokens it did not issue.)
func TestS3CredentialRole(t *testing.T) {
	srv := blobstest.Start(t)
	emptyChain(t)
	var fetched, unauthorised atomic.Int32
	role := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v2/credentials/task" || r.Header.Get("Authorization") != "container-token" {
			unauthorised.Add(1)
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		fetched.Add(1)
		json.NewEncoder(w).Encode(map[string]any{
			"AccessKeyId":     blobstest.Access,
			"SecretAccessKey": blobstest.Secret,
			"Expiration":      time.Now().Add(time.Second).UTC().Format(time.RFC3339Nano),
		})
	}))
	t.Cleanup(role.Close)
	t.Setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", role.URL+"/v2/credentials/task")
	t.Setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN", "container-token")
	s := openS3(t, srv, noEnv)
	roundTrip(t, s)
	if fetched.Load() == 0 || unauthorised.Load() != 0 {
		t.Fatalf("credential fetched %d times, %d refused", fetched.Load(), unauthorised.Load())
	}
	first := fetched.Load()
	for deadline := time.Now().Add(time.Minute); fetched.Load() == first; {
		if time.Now().After(deadline) {
			t.Fatalf("the expired credential was not fetched again within a minute (%d fetches)", first)
		}
		if _, err := s.Stat(context.Background(), "files/cred"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	roundTrip(t, s)
}

// TestS3NoCredential finds nothing anywhere in the chain: the bucket refuses the
// anonymous requests, and Ping says what to set.
func TestS3NoCredential(t *testing.T) {
	srv := blobstest.Start(t)
	emptyChain(t)
	s := openS3(t, srv, noEnv)
	err := refused(t, s)
	if !strings.Contains(err.Error(), "no S3 credential found") {
		t.Fatalf("ping: %v", err)
	}
	if err := s.Put(context.Background(), "files/x", strings.NewReader("x"), 1); !errors.Is(err, blobs.ErrUnavailable) {
		t.Fatalf("put: %v", err)
	}
}
