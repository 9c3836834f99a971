package s3client

import (
	"context"
	"net/http"
)

// HeadBucket checks that the bucket exists and the credential may use it; it also
// settles the bucket's region when none was configured.
func (c *Client) HeadBucket(ctx context.Context) error {
	resp, err := c.do(ctx, &request{method: http.MethodHead, resend: true})
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}
