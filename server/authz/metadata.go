package authz

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	json "github.com/goccy/go-json"

	"interviewd/kv"
	"interviewd/server/pipeline"
)

// Client ID Metadata Documents (the MCP authorization flow of 2025-11-25): a client
// whose client_id is an https URL publishes its metadata there, and the authorization
// server fetches it instead of asking the client to register.
//
// The fetch is an outbound request to an address a stranger chose, so it is guarded
// against server-side request forgery: https only; the address actually dialled, after
// DNS resolution, must be public (checked in the dialer's Control hook, at connect
// time, so a name that resolves to a public address for a check and a private one for
// the connection cannot slip through); no redirects; at most 5 KB; 3 seconds in all.

const (
	metadataMaxBytes = 5 << 10
	metadataTimeout  = 3 * time.Second
	MetadataTTL      = 10 * time.Minute
	metadataFailTTL  = 30 * time.Second // a failed fetch is not retried for every request
	metadataCacheMax = 1024
)

// ClientMetadata fetches and caches metadata documents.
type ClientMetadata struct {
	hc    *http.Client
	mu    sync.Mutex
	cache map[string]metadataEntry
}

type metadataEntry struct {
	client  kv.OAuthClient
	err     error
	expires time.Time
}

// NewClientMetadata returns the fetcher. allowLoopback lets tests serve a document on
// 127.0.0.1; roots, when not nil, are the CAs it trusts (a test's own).
func NewClientMetadata(allowLoopback bool, roots *x509.CertPool) *ClientMetadata {
	dialer := &net.Dialer{Timeout: metadataTimeout, Control: func(network, address string, _ syscall.RawConn) error {
		return checkDialAddr(address, allowLoopback)
	}}
	tr := &http.Transport{
		Proxy:                  nil, // a proxy would dial for us, past the guard
		DialContext:            dialer.DialContext,
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: roots},
		TLSHandshakeTimeout:    metadataTimeout,
		ResponseHeaderTimeout:  metadataTimeout,
		MaxIdleConns:           16,
		IdleConnTimeout:        30 * time.Second,
		MaxResponseHeaderBytes: 16 << 10,
	}
	return &ClientMetadata{
		hc: &http.Client{Transport: tr, Timeout: metadataTimeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return errMetadataRedirect }},
		cache: map[string]metadataEntry{},
	}
}

var errMetadataRedirect = errors.New("the client metadata document redirects; it must be served at its client_id")

// errForbiddenAddr is the guard's refusal.
type errForbiddenAddr struct{ addr netip.Addr }

func (e errForbiddenAddr) Error() string {
	return "the client_id's host resolves to " + e.addr.String() + ", which is not a public address"
}

// checkDialAddr refuses every address that is not public unicast: loopback (unless
// allowed), private, link-local, unspecified, multicast, shared (100.64/10) and the
// IPv6 forms of all of these.
func checkDialAddr(address string, allowLoopback bool) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return fmt.Errorf("dial %q: not an address", address)
	}
	a = a.Unmap()
	if a.IsLoopback() && allowLoopback {
		return nil
	}
	if !PublicAddr(a) {
		return errForbiddenAddr{a}
	}
	return nil
}

var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b::/96"), // NAT64 reaches IPv4 space, private parts included
	netip.MustParsePrefix("2001:db8::/32"),
	netip.MustParsePrefix("100::/64"),
	netip.MustParsePrefix("::/96"),          // IPv4-compatible (deprecated): ::7f00:1 is 127.0.0.1, and Unmap leaves it
	netip.MustParsePrefix("64:ff9b:1::/48"), // local-use NAT64 (RFC 8215)
	netip.MustParsePrefix("2002::/16"),      // 6to4 embeds an IPv4 address, private ones included
	netip.MustParsePrefix("fec0::/10"),      // site-local (deprecated), still routed inside some networks
}

func PublicAddr(a netip.Addr) bool {
	if !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// metadataDoc is the part of a client metadata document interviewd reads.
type metadataDoc struct {
	ClientID                string   `json:"client_id"`
	ClientName              string   `json:"client_name"`
	ClientURI               string   `json:"client_uri"`
	RedirectURIs            []string `json:"redirect_uris"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	Scope                   string   `json:"scope"`
}

// checkMetadataURL returns why id cannot name a metadata document, or "".
func checkMetadataURL(id string) string {
	u, err := url.Parse(id)
	switch {
	case err != nil || len(id) > 2000:
		return "client_id is not a valid URL"
	case u.Scheme != "https":
		return "a client_id URL must use https"
	case u.Host == "" || u.User != nil || u.Fragment != "" || strings.Contains(id, "#"):
		return "a client_id URL needs a host and no user information or fragment"
	case u.Path == "" || u.Path == "/":
		return "a client_id URL must have a path"
	}
	return ""
}

// Client returns the client the document at id describes, from the cache when fresh.
// ENOTFOUND for an id that is no usable URL; an oauthError invalid_client naming why
// a document could not be used.
func (m *ClientMetadata) Client(ctx context.Context, id string, now time.Time) (kv.OAuthClient, error) {
	if msg := checkMetadataURL(id); msg != "" {
		return kv.OAuthClient{}, &OAuthError{Status: 401, Code: "invalid_client", Description: msg + "."}
	}
	m.mu.Lock()
	e, ok := m.cache[id]
	m.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e.client, e.err
	}
	c, err := m.fetch(ctx, id, now)
	e = metadataEntry{client: c, err: err, expires: now.Add(MetadataTTL)}
	if err != nil {
		e.expires = now.Add(metadataFailTTL)
	}
	m.mu.Lock()
	if len(m.cache) >= metadataCacheMax {
		for k, v := range m.cache {
			if !now.Before(v.expires) || len(m.cache) >= metadataCacheMax {
				delete(m.cache, k)
			}
		}
	}
	m.cache[id] = e
	m.mu.Unlock()
	return c, err
}

// fetch gets and validates one document.
func (m *ClientMetadata) fetch(ctx context.Context, id string, now time.Time) (kv.OAuthClient, error) {
	refuse := func(why string) error {
		return &OAuthError{Status: 401, Code: "invalid_client", Description: "The client metadata document at client_id cannot be used: " + why + "."}
	}
	ctx, cancel := context.WithTimeout(ctx, metadataTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", id, nil)
	if err != nil {
		return kv.OAuthClient{}, refuse("client_id is not a valid URL")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "interviewd")
	resp, err := m.hc.Do(req)
	if err != nil {
		var forbidden errForbiddenAddr
		switch {
		case errors.As(err, &forbidden):
			return kv.OAuthClient{}, refuse(forbidden.Error())
		case errors.Is(err, errMetadataRedirect):
			return kv.OAuthClient{}, refuse(errMetadataRedirect.Error())
		case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
			return kv.OAuthClient{}, refuse("fetching it took longer than 3 seconds")
		}
		return kv.OAuthClient{}, refuse("it could not be fetched")
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return kv.OAuthClient{}, refuse(fmt.Sprintf("fetching it answered HTTP %d", resp.StatusCode))
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, metadataMaxBytes+1))
	if err != nil {
		if isTimeout(err) || errors.Is(err, context.DeadlineExceeded) {
			return kv.OAuthClient{}, refuse("fetching it took longer than 3 seconds")
		}
		return kv.OAuthClient{}, refuse("it could not be read")
	}
	if len(body) > metadataMaxBytes {
		return kv.OAuthClient{}, refuse("it is larger than 5 KB")
	}
	var doc metadataDoc
	if err := json.Unmarshal(body, &doc); err != nil {
		return kv.OAuthClient{}, refuse("it is not a JSON object of client metadata")
	}
	if _, desc := CheckClientText(body); desc != "" {
		return kv.OAuthClient{}, refuse(strings.TrimSuffix(desc, "."))
	}
	if doc.ClientID != id {
		return kv.OAuthClient{}, refuse("its client_id is not the URL it is served at")
	}
	switch doc.TokenEndpointAuthMethod {
	case "", kv.AuthMethodNone:
	default:
		return kv.OAuthClient{}, refuse("only public clients (token_endpoint_auth_method none) may use a metadata document here")
	}
	c, err := kv.NewClient(id, kv.ClientInput{Name: doc.ClientName, URI: doc.ClientURI, RedirectURIs: doc.RedirectURIs,
		GrantTypes: doc.GrantTypes, ResponseTypes: doc.ResponseTypes, AuthMethod: kv.AuthMethodNone, Scope: doc.Scope}, now)
	if err != nil {
		var ke *kv.Error
		errors.As(err, &ke)
		return kv.OAuthClient{}, refuse(strings.TrimSuffix(ke.Message, "."))
	}
	c.Document = true
	return c, nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// CheckClientText applies the text rule to client metadata body (a JSON object, a
// registration or a metadata document): the members a person may be shown, and every
// redirect URI (its host is shown beside the name), follow checkLabel, and the whole
// body must be UTF-8 (RFC 8259), ignored members included, since decoding would store
// bad bytes as U+FFFD. It returns RFC 7591's error code (invalid_client_metadata, or
// invalid_redirect_uri) and a description naming the member, or "" when the text is
// sound. Members of another type than string are the typed decoding's to refuse.
func CheckClientText(body []byte) (code, desc string) {
	var members map[string]json.RawMessage
	if json.Unmarshal(body, &members) != nil {
		return "invalid_client_metadata", "The client metadata is not a JSON object."
	}
	for _, name := range clientLabels {
		if fe := pipeline.CheckRawLabel(members[name], nil); fe != nil {
			return "invalid_client_metadata", strings.Replace(fe.Msg, "Input", name, 1)
		}
	}
	var uris []json.RawMessage
	if json.Unmarshal(members["redirect_uris"], &uris) == nil {
		for _, u := range uris {
			if fe := pipeline.CheckRawLabel(u, nil); fe != nil {
				return "invalid_redirect_uri", strings.Replace(fe.Msg, "Input", "A redirect URI in redirect_uris", 1)
			}
		}
	}
	if !utf8.Valid(body) || pipeline.LoneSurrogate(body) {
		return "invalid_client_metadata", "The client metadata must be valid UTF-8 text throughout, ignored members included."
	}
	return "", ""
}

// clientLabels are the members of client metadata a person may be shown (the consent
// page shows the name, and could show the others beside it): each follows checkLabel.
var clientLabels = []string{"client_name", "client_uri", "logo_uri", "tos_uri", "policy_uri"}
