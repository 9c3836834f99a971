package blobs

import (
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/minio/minio-go/v7/pkg/credentials"
)

// credentialProviders lists where the S3 store looks for its credential, first match
// wins, as the AWS SDKs do:
//
//  1. the keys the configuration gives explicitly (S3Config.AccessKey, ...);
//  2. the process environment: AWS_ACCESS_KEY_ID (or AWS_ACCESS_KEY),
//     AWS_SECRET_ACCESS_KEY (or AWS_SECRET_KEY) and AWS_SESSION_TOKEN;
//  3. MINIO_ROOT_USER and MINIO_ROOT_PASSWORD (or MINIO_ACCESS_KEY, MINIO_SECRET_KEY);
//  4. the shared credentials file: AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials
//     (with ~/.aws/config), profile AWS_PROFILE or "default", including its
//     credential_process and SSO entries;
//  5. an IAM role: IRSA on EKS (AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN, exchanged
//     with STS), EKS Pod Identity or ECS task roles (AWS_CONTAINER_CREDENTIALS_*), or
//     the EC2 instance profile from the instance metadata service.
//
// Temporary credentials (an IAM role's, STS's) are fetched again before they expire.
func credentialProviders(cfg S3Config) []credentials.Provider {
	var ps []credentials.Provider
	if cfg.AccessKey != "" {
		ps = append(ps, &credentials.Static{Value: credentials.Value{
			AccessKeyID:     cfg.AccessKey,
			SecretAccessKey: cfg.SecretKey,
			SessionToken:    cfg.SessionToken,
			SignerType:      credentials.SignatureV4,
		}})
	}
	return append(ps,
		&credentials.EnvAWS{},
		&credentials.EnvMinio{},
		&credentials.FileAWSCredentials{},
		&credentials.IAM{Client: metadataClient()},
	)
}

// metadataClient is the HTTP client of the IAM provider (instance metadata, the ECS
// credentials endpoint, STS). It has its own transport and time limit: the bucket's
// transport may trust only a private CA, and on a machine with no metadata service
// the lookup should give up within seconds rather than hold every request.
func metadataClient() *http.Client {
	return &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			TLSHandshakeTimeout:   10 * time.Second,
			ResponseHeaderTimeout: 10 * time.Second,
			IdleConnTimeout:       time.Minute,
		},
	}
}

// errNoCredential explains a bucket refusing anonymous requests after the whole chain
// came up empty.
var errNoCredential = errors.New("no S3 credential found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, " +
	"a profile in the shared credentials file (AWS_SHARED_CREDENTIALS_FILE, AWS_PROFILE), or run with an IAM role " +
	"(instance profile, ECS task role, IRSA)")
