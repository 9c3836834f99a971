// Package blobstest runs a real S3-compatible server for tests: versitygw
// (github.com/versity/versitygw, pinned in .ci/run) with its posix backend in a temporary
// folder, listening on loopback. Tests that need it skip, saying so in one line on the
// go command's standard error, when versitygw is not on PATH, and fail instead when
// INTERVIEWD_REQUIRE_S3=1 (as CI sets).
package blobstest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Version is the versitygw release .ci/run installs.
const Version = "v1.8.0"

// Access and Secret are the root credential every test server is started with.
const (
	Access = "interviewd-test"
	Secret = "interviewd-test-secret-key"
)

// S3 is one running versitygw.
type S3 struct {
	Addr   string // 127.0.0.1:PORT
	Bucket string
	// RootCAs trusts the server's certificate when it was started with StartTLS.
	RootCAs *x509.CertPool

	certFile, keyFile string
	root              string
	bin               string
	t                 testing.TB

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	out  *lockedWriter
}

// Start starts versitygw on a free loopback port with an empty bucket and stops it when
// the test ends.
func Start(t testing.TB) *S3 {
	t.Helper()
	return start(t, false)
}

// StartTLS is Start with the server on https, its certificate (for 127.0.0.1, made
// here) trusted by RootCAs alone.
func StartTLS(t testing.TB) *S3 {
	t.Helper()
	return start(t, true)
}

func start(t testing.TB, withTLS bool) *S3 {
	t.Helper()
	bin, err := exec.LookPath("versitygw")
	if err != nil {
		msg := "versitygw (an S3-compatible server) is not on PATH; install it with go install github.com/versity/versitygw/cmd/versitygw@" + Version
		if os.Getenv("INTERVIEWD_REQUIRE_S3") == "1" {
			t.Fatal(msg)
		}
		noticeOnce.Do(func() { notice("interviewd: SKIPPED S3 tests: " + msg + "\n") })
		t.Skip(msg)
	}
	s := &S3{Bucket: "interviewd", root: t.TempDir(), bin: bin, t: t}
	if err := os.Mkdir(filepath.Join(s.root, s.Bucket), 0o700); err != nil {
		t.Fatal(err) // the posix backend's buckets are the root's folders
	}
	if withTLS {
		s.certFile, s.keyFile, s.RootCAs = selfSigned(t, t.TempDir())
	}
	for try := 0; ; try++ {
		s.Addr = freeAddr(t)
		err := s.start()
		if err == nil {
			break
		}
		if try == 4 { // another process took the port each time
			t.Fatal(err)
		}
	}
	t.Cleanup(s.Stop)
	return s
}

// URL is the --blobs value for this server's bucket.
func (s *S3) URL() string {
	scheme := "http"
	if s.RootCAs != nil {
		scheme = "https"
	}
	return "s3://" + s.Bucket + "?endpoint=" + scheme + "://" + s.Addr + "&region=us-east-1"
}

// Env is a lookup of the credential variables ParseS3URL reads, for this server.
func (s *S3) Env(name string) (string, bool) {
	switch name {
	case "AWS_ACCESS_KEY_ID":
		return Access, true
	case "AWS_SECRET_ACCESS_KEY":
		return Secret, true
	}
	return "", false
}

// Client is a plain S3 client of this server, for looking at the bucket from outside.
func (s *S3) Client() *minio.Client {
	c, err := minio.New(s.Addr, s.minioOptions(0))
	if err != nil {
		s.t.Fatal(err)
	}
	return c
}

func (s *S3) minioOptions(retries int) *minio.Options {
	o := &minio.Options{Creds: credentials.NewStaticV4(Access, Secret, ""), Region: "us-east-1", MaxRetries: retries}
	if s.RootCAs != nil {
		o.Secure = true
		o.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: s.RootCAs}}
	}
	return o
}

// selfSigned writes a certificate for 127.0.0.1 and its key into dir and returns their
// paths and a pool that trusts the certificate.
func selfSigned(t testing.TB, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "interviewd test S3"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// Restart starts the server again on its address after Stop (the bucket's contents
// are kept).
func (s *S3) Restart() {
	s.t.Helper()
	if err := s.start(); err != nil {
		s.t.Fatal(err)
	}
}

func (s *S3) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	args := []string{"--access", Access, "--secret", Secret, "--port", s.Addr, "--region", "us-east-1"}
	if s.certFile != "" {
		args = append(args, "--cert", s.certFile, "--key", s.keyFile)
	}
	cmd := exec.Command(s.bin, append(args, "posix", s.root)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + s.root}
	w := &lockedWriter{b: &strings.Builder{}}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	// Ready when the bucket answers; a machine under load may take a while to start it.
	c, err := minio.New(s.Addr, s.minioOptions(1))
	if err != nil {
		return err
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		ok, err := c.BucketExists(ctx, s.Bucket)
		cancel()
		if err == nil && ok {
			break
		}
		select {
		case <-done:
			return fmt.Errorf("versitygw on %s exited: %s", s.Addr, w.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-done
			return fmt.Errorf("versitygw on %s not ready within 2 minutes (%v): %s", s.Addr, err, w.String())
		}
	}
	s.cmd, s.done, s.out = cmd, done, w
	return nil
}

// Stop kills the server and waits for it to exit; the bucket stays on disk.
func (s *S3) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.done
	if s.t.Failed() {
		s.t.Logf("versitygw's output:\n%s", s.out.String())
	}
	s.cmd = nil
}

type lockedWriter struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.b.Len() < 64<<10 {
		w.b.Write(p)
	}
	return len(p), nil
}

func (w *lockedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// freeAddr returns a loopback address with a port nothing listens on right now.
func freeAddr(t testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

var noticeOnce sync.Once

// notice writes line where the person running the tests sees it: without -v, go test
// keeps a passing package's output to itself, so it goes to the go command's own
// standard error (Linux: /proc/PPID/fd/2) when that is a terminal or a pipe.
func notice(line string) {
	parent := fmt.Sprintf("/proc/%d/fd/2", os.Getppid())
	if st, err := os.Stat(parent); err == nil && !st.Mode().IsRegular() && !testing.Verbose() {
		if f, err := os.OpenFile(parent, os.O_WRONLY|os.O_APPEND, 0); err == nil {
			_, err = f.WriteString(line)
			if cerr := f.Close(); err == nil && cerr == nil {
				return
			}
		}
	}
	fmt.Fprint(os.Stderr, line)
}
