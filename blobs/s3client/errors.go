package s3client

import (
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Error is the service's refusal: the status and the code and message of its XML error
// document (HEAD answers carry no body, so only the status).
type Error struct {
	StatusCode int
	Code       string // NoSuchKey, NoSuchBucket, AccessDenied, SlowDown, ...
	Message    string
	// Region is the bucket's region when the answer names it (x-amz-bucket-region, or
	// the <Region> of AuthorizationHeaderMalformed).
	Region    string
	RequestID string
}

func (e *Error) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.StatusCode)
	}
	if e.Code == "" {
		return fmt.Sprintf("s3: %d: %s", e.StatusCode, msg)
	}
	return fmt.Sprintf("s3: %d %s: %s", e.StatusCode, e.Code, msg)
}

// NotFound reports whether e says the object is missing: NoSuchKey, or any 404 that is
// not the bucket's (a HEAD of a missing object answers a bare 404).
func (e *Error) NotFound() bool {
	return e.Code == "NoSuchKey" || (e.StatusCode == http.StatusNotFound && e.Code != "NoSuchBucket")
}

// wrongRegion reports whether e refuses a request signed for region because the bucket
// is in another: AWS answers 301 (or 307, or 400 AuthorizationHeaderMalformed) naming it.
func (e *Error) wrongRegion(region string) bool {
	switch e.StatusCode {
	case http.StatusMovedPermanently, http.StatusTemporaryRedirect, http.StatusBadRequest:
		return e.Region != "" && e.Region != region
	}
	return false
}

// retryable reports whether the same request may succeed a moment later.
func (e *Error) retryable() bool {
	switch e.Code {
	case "SlowDown", "RequestTimeout", "InternalError", "ServiceUnavailable":
		return true
	}
	return e.StatusCode >= 500 || e.StatusCode == http.StatusTooManyRequests
}

// readError reads and closes resp, a non-2xx answer.
func readError(resp *http.Response, method string) *Error {
	defer resp.Body.Close()
	e := &Error{
		StatusCode: resp.StatusCode,
		Region:     resp.Header.Get("X-Amz-Bucket-Region"),
		RequestID:  resp.Header.Get("X-Amz-Request-Id"),
	}
	if method == http.MethodHead {
		return e
	}
	var doc struct {
		Code, Message, Region, RequestId string
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if xml.Unmarshal(b, &doc) == nil {
		e.Code, e.Message = doc.Code, strings.TrimSpace(doc.Message)
		if e.Region == "" && doc.Region != "" {
			e.Region = doc.Region
		}
		if e.RequestID == "" {
			e.RequestID = doc.RequestId
		}
	}
	return e
}
