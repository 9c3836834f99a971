package cmd

import (
	"context"
	"io"
	"strings"
	"testing"
)

// TestRunOAuthClientMetadataFlag: --oauth-client-metadata off stops advertising (and
// accepting) client ID metadata documents; anything but on or off is refused.
func TestRunOAuthClientMetadataFlag(t *testing.T) {
	err := Run(context.Background(), []string{"serve", "--data", t.TempDir(), "--oauth-client-metadata", "maybe"}, io.Discard, io.Discard, noEnv)
	if err == nil || !strings.Contains(err.Error(), `--oauth-client-metadata "maybe": want on or off`) {
		t.Fatalf("got %v", err)
	}
	for flag, want := range map[string]bool{"on": true, "off": false} {
		b := mustBoot(t, "--data", t.TempDir(), "--oauth-client-metadata", flag)
		status, body := get(t, b.URL+"/.well-known/oauth-authorization-server", "")
		if status != 200 || strings.Contains(body, `"client_id_metadata_document_supported":true`) != want {
			t.Fatalf("--oauth-client-metadata %s: %d %s", flag, status, body)
		}
	}
}
