// Package s3client is the small S3 client the blob store needs, and nothing more: one
// bucket, objects put whole with a single request, read, described, deleted and listed,
// and GETs presigned, all signed with AWS Signature Version 4 on the standard library.
//
// It exists so that the binary does not carry a general-purpose SDK: minio-go's package
// initialisation (regular expressions, CPU feature detection, machine-id reads, codec
// tables) cost every start of the server about a millisecond, and its dependencies
// 2.7 MB of binary, for the handful of calls interviewd makes.
//
// What it does not do: multipart uploads (an object is one PUT, so at most 5 GiB),
// streaming (chunked) payload signatures, bucket creation or policies, versioning, SSE
// options, credentials from instance metadata or profiles, and Signature Version 2.
package s3client
