package s3client

import (
	"context"
	"fmt"
	"net/url"
	"time"
)

// PresignGet returns a URL that GETs key without a credential until expires has passed
// (1 s to 7 days, S3's limits). overrides are the response-* parameters the service
// answers with (response-content-disposition, response-content-type); they are signed,
// so the URL's holder cannot change them.
//
// Nothing is sent: the URL is signed for the configured region, or the one a refusal
// named. Without a configured region the first call asks the bucket (HeadBucket) so the
// URL is not signed for the wrong one.
func (c *Client) PresignGet(ctx context.Context, key string, expires time.Duration, overrides url.Values) (string, error) {
	if expires < time.Second || expires > maxPresign {
		return "", fmt.Errorf("s3: a presigned URL lives between 1 s and 7 days, not %s", expires)
	}
	if c.cfg.Region == "" {
		c.mu.Lock()
		settled := c.settled
		c.mu.Unlock()
		if !settled {
			if err := c.HeadBucket(ctx); err != nil {
				return "", err
			}
		}
	}
	region, endpoint := c.location()
	u := c.objectURL(endpoint, key)
	u.RawQuery = overrides.Encode()
	return presign(u, c.cfg.Credential, region, expires, c.now()), nil
}
