package cmd

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// pebbleVersion is the Let's Encrypt test CA CI installs (.ci/run); other versions may work.
const pebbleVersion = "v2.10.1"

// TestACMEWithPebble gets a real certificate for interviewd from pebble, Let's Encrypt's
// test CA, through the real flags and Run: --acme-directory points at pebble, and
// --acme-ca-root makes the ACME client trust pebble's own API certificate (made here).
// Validation is real, not PEBBLE_VA_ALWAYS_VALID: pebble resolves the domain through a
// small DNS server in this test that answers 127.0.0.1, and connects to interviewd's
// --http-addr (HTTP-01) and TLS port (TLS-ALPN-01) for whichever challenge autocert takes.
// Without pebble on PATH the test skips, unless INTERVIEWD_REQUIRE_PEBBLE=1 (as CI sets).
func TestACMEWithPebble(t *testing.T) {
	bin, err := exec.LookPath("pebble")
	if err != nil {
		msg := "pebble (Let's Encrypt's test CA) is not on PATH; install it with go install github.com/letsencrypt/pebble/v2/cmd/pebble@" + pebbleVersion
		if os.Getenv("INTERVIEWD_REQUIRE_PEBBLE") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	const domain = "interviews.example.test"
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	addr, httpAddr := freeAddr(t), freeAddr(t)
	_, tlsPort, _ := net.SplitHostPort(addr)
	_, httpPort, _ := net.SplitHostPort(httpAddr)

	// pebble serves its API over HTTPS only: a certificate for 127.0.0.1, trusted by
	// interviewd through --acme-ca-root and by this test's client.
	api := mustCert(t, "pebble API")
	apiCert, apiKey := filepath.Join(dir, "pebble-cert.pem"), filepath.Join(dir, "pebble-key.pem")
	api.write(t, apiCert, apiKey)

	pebbleAddr, mgmtAddr := freeAddr(t), freeAddr(t)
	cfg := map[string]any{"pebble": map[string]any{
		"listenAddress": pebbleAddr, "managementListenAddress": mgmtAddr,
		"certificate": apiCert, "privateKey": apiKey,
		"httpPort": mustAtoi(t, httpPort), "tlsPort": mustAtoi(t, tlsPort),
		"ocspResponderURL": "", "externalAccountBindingRequired": false,
		"retryAfter": map[string]int{"authz": 1, "order": 1},
	}}
	cfgFile := filepath.Join(dir, "pebble-config.json")
	b, _ := json.Marshal(cfg)
	if err := os.WriteFile(cfgFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	dns, asked := startLoopbackDNS(t)
	pebbleLog := &syncBuffer{}
	cmd := exec.Command(bin, "-config", cfgFile, "-dnsserver", dns)
	cmd.Env = append(os.Environ(), "PEBBLE_VA_NOSLEEP=1", "PEBBLE_WFE_NONCEREJECT=0")
	cmd.Stdout, cmd.Stderr = pebbleLog, pebbleLog
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			l := pebbleLog.String()
			t.Logf("pebble's log (end):\n%s", l[max(0, len(l)-8000):])
		}
	})
	// pebble negotiates HTTP/2 when offered, so this client offers only HTTP/1.1.
	pool := x509.NewCertPool()
	pool.AddCert(api.x509)
	pebbleClient := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool}, DisableKeepAlives: true}}
	directory := "https://" + pebbleAddr + "/dir"
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		resp, err := pebbleClient.Get(directory)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("pebble's directory %s not ready within 60 s: %v", directory, err)
		}
	}

	logs := bootAt(t, addr, "--data", data, "--acme-domain", domain, "--acme-email", "ops@example.test",
		"--acme-directory", directory, "--acme-ca-root", apiCert, "--http-addr", httpAddr)

	// pebble makes a new root each run; the served chain must end there.
	resp, err := pebbleClient.Get("https://" + mgmtAddr + "/roots/0")
	if err != nil {
		t.Fatal(err)
	}
	rootPEM, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	roots := x509.NewCertPool()
	if resp.StatusCode != 200 || !roots.AppendCertsFromPEM(rootPEM) {
		t.Fatalf("pebble root: %d %q", resp.StatusCode, rootPEM)
	}

	// The first handshake for the domain obtains the certificate (account, order,
	// validation, issuance) while it waits; the deadline is generous for a busy machine.
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 120 * time.Second}, "tcp", addr,
		&tls.Config{ServerName: domain, RootCAs: roots})
	if err != nil {
		t.Fatalf("handshake with SNI %s: %v\ninterviewd's log:\n%s", domain, err, logs.String())
	}
	state := conn.ConnectionState()
	conn.Close()
	leaf := state.PeerCertificates[0]
	if err := leaf.VerifyHostname(domain); err != nil || !contains(leaf.DNSNames, domain) {
		t.Fatalf("served certificate names %v: %v", leaf.DNSNames, err)
	}
	inter := x509.NewCertPool()
	for _, c := range state.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{DNSName: domain, Roots: roots, Intermediates: inter}); err != nil {
		t.Fatalf("served chain does not lead to pebble's root: %v", err)
	}
	// Something the system or a test made itself would not pass either check; make sure
	// the certificate is not self-signed by interviewd (issuer differs from subject).
	if leaf.Issuer.String() == leaf.Subject.String() {
		t.Fatalf("self-signed certificate served: %s", leaf.Subject)
	}

	// The CA really validated: it looked the domain up (and so connected to interviewd).
	if !contains(asked(), domain+".") {
		t.Fatalf("pebble never resolved %s (asked %v): no real validation took place", domain, asked())
	}

	t.Run("OK_CachedInDataACME", func(t *testing.T) {
		raw, err := os.ReadFile(filepath.Join(data, "acme", domain))
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for rest := raw; ; {
			var blk *pem.Block
			if blk, rest = pem.Decode(rest); blk == nil {
				break
			}
			if blk.Type == "CERTIFICATE" && string(blk.Bytes) == string(leaf.Raw) {
				found = true
			}
		}
		if !found {
			t.Fatalf("DATA/acme/%s does not hold the served certificate", domain)
		}
	})
	t.Run("OK_HTTPSWithIssuedCertificate", func(t *testing.T) {
		c := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{
			TLSClientConfig:   &tls.Config{RootCAs: roots},
			DisableKeepAlives: true,
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, network, addr)
			},
		}}
		resp, err := c.Get("https://" + domain + "/v1/api/openapi.json")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Strict-Transport-Security") == "" {
			t.Fatalf("%d %v", resp.StatusCode, resp.Header)
		}
	})
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// startLoopbackDNS serves DNS over TCP (what pebble's -dnsserver client speaks) on
// 127.0.0.1, answering every A question with 127.0.0.1 and every other question with no
// records, so pebble's validation of any name reaches this machine. It stops, waiting
// for its goroutines, when the test ends.
func startLoopbackDNS(t *testing.T) (addr string, asked func() []string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	conns := map[net.Conn]bool{}
	var names []string
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns[c] = true
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				for {
					var n uint16
					if err := binary.Read(c, binary.BigEndian, &n); err != nil {
						return
					}
					q := make([]byte, n)
					if _, err := io.ReadFull(c, q); err != nil {
						return
					}
					a, name, err := dnsAnswer(q)
					if err != nil {
						t.Errorf("DNS query: %v", err)
						return
					}
					mu.Lock()
					names = append(names, name)
					mu.Unlock()
					if _, err := c.Write(append(binary.BigEndian.AppendUint16(nil, uint16(len(a))), a...)); err != nil {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String(), func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), names...)
	}
}

// dnsAnswer answers a one-question query (RFC 1035 §4.1), saying the name asked.
func dnsAnswer(q []byte) ([]byte, string, error) {
	if len(q) < 12 || binary.BigEndian.Uint16(q[4:6]) != 1 {
		return nil, "", errors.New("want a header and one question")
	}
	i, name := 12, ""
	for i < len(q) && q[i] != 0 {
		if end := i + 1 + int(q[i]); end <= len(q) {
			name += string(q[i+1:end]) + "."
		}
		i += int(q[i]) + 1
	}
	if i+5 > len(q) {
		return nil, "", fmt.Errorf("truncated question %x", q)
	}
	question := q[12 : i+5]
	qtype := binary.BigEndian.Uint16(q[i+1 : i+3])
	ancount := uint16(0)
	if qtype == 1 {
		ancount = 1
	}
	a := append([]byte{}, q[0:2]...)              // ID
	a = append(a, 0x84|(q[2]&0x01), 0x00)         // response, authoritative, RD echoed, NOERROR
	a = binary.BigEndian.AppendUint16(a, 1)       // QDCOUNT
	a = binary.BigEndian.AppendUint16(a, ancount) // ANCOUNT
	a = append(a, 0, 0, 0, 0)                     // NSCOUNT, ARCOUNT
	a = append(a, question...)
	if ancount == 1 {
		// Name (pointer to the question's), type A, class IN, TTL 60, 4 bytes: 127.0.0.1.
		a = append(a, 0xC0, 0x0C, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 127, 0, 0, 1)
	}
	return a, name, nil
}
