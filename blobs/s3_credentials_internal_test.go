package blobs

import (
	"fmt"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7/pkg/credentials"
)

// TestCredentialProviders pins the order the S3 store looks for its credential in:
// the configuration's keys first when given, then the environment, MinIO's variables,
// the shared credentials file and last an IAM role (IRSA, ECS, instance metadata),
// whose provider has a client of its own with a time limit.
func TestCredentialProviders(t *testing.T) {
	names := func(ps []credentials.Provider) string {
		var out []string
		for _, p := range ps {
			out = append(out, fmt.Sprintf("%T", p))
		}
		return strings.Join(out, " ")
	}
	chain := "*credentials.EnvAWS *credentials.EnvMinio *credentials.FileAWSCredentials *credentials.IAM"
	ps := credentialProviders(S3Config{})
	if got := names(ps); got != chain {
		t.Fatalf("without keys: %s, want %s", got, chain)
	}
	if iam := ps[len(ps)-1].(*credentials.IAM); iam.Client == nil || iam.Client.Timeout <= 0 || iam.Endpoint != "" {
		t.Fatalf("IAM provider: %+v (want its own client with a time limit, the default endpoints)", iam)
	}
	ps = credentialProviders(S3Config{AccessKey: "AK", SecretKey: "SK", SessionToken: "TOK"})
	if got := names(ps); got != "*credentials.Static "+chain {
		t.Fatalf("with keys: %s", got)
	}
	v, err := ps[0].Retrieve()
	if err != nil || v.AccessKeyID != "AK" || v.SecretAccessKey != "SK" || v.SessionToken != "TOK" || v.SignerType.IsAnonymous() {
		t.Fatalf("the explicit keys: %+v %v", v, err)
	}
}
