package s3client

import (
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// listResult is the part of a ListObjectsV2 answer read here.
type listResult struct {
	IsTruncated           bool
	NextContinuationToken string
	EncodingType          string
	Contents              []struct {
		Key          string
		Size         int64
		LastModified string
	}
}

// ListObjects calls fn for every object whose key starts with prefix, in key order,
// following continuation tokens (ListObjectsV2) until the listing ends or fn fails.
//
// Keys are asked for URL-encoded (encoding-type=url), as minio-go does: XML 1.0 cannot
// carry every byte a key may hold. A service that ignores the parameter says so by
// leaving out <EncodingType>, and its keys are then taken as they are.
func (c *Client) ListObjects(ctx context.Context, prefix string, fn func(ObjectInfo) error) error {
	token := ""
	for {
		q := url.Values{"list-type": {"2"}, "prefix": {prefix}, "encoding-type": {"url"}}
		if token != "" {
			q.Set("continuation-token", token)
		}
		resp, err := c.do(ctx, &request{method: http.MethodGet, query: q, resend: true})
		if err != nil {
			return err
		}
		var page listResult
		err = xml.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(&page)
		resp.Body.Close()
		if err != nil {
			return fmt.Errorf("s3: reading a listing: %w", err)
		}
		for _, o := range page.Contents {
			key := o.Key
			if page.EncodingType == "url" {
				if key, err = url.QueryUnescape(o.Key); err != nil {
					return fmt.Errorf("s3: a listed key %q: %w", o.Key, err)
				}
			}
			mod, err := time.Parse(time.RFC3339Nano, o.LastModified)
			if err != nil {
				return fmt.Errorf("s3: the modification time of %q: %w", key, err)
			}
			if err := fn(ObjectInfo{Key: key, Size: o.Size, LastModified: mod}); err != nil {
				return err
			}
		}
		if !page.IsTruncated {
			return nil
		}
		if page.NextContinuationToken == "" || page.NextContinuationToken == token {
			return fmt.Errorf("s3: a truncated listing without a new continuation token")
		}
		token = page.NextContinuationToken
	}
}
