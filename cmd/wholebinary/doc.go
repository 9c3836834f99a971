// Package wholebinary holds the suites that test interviewd as a whole program rather
// than a package: the binary built and run as a person, a service manager or a container
// runs it (crash recovery under SIGKILL, three nodes over one PostgreSQL, blobs in an S3
// bucket, A2A tasks across restarts, `go run`, the systemd unit, the Dockerfile, the
// README's Quickstart), and the command line booted end to end in the test's process
// (package cmdtest) where a suite needs servers it can stop and start again.
//
// It has no product code. It is its own package so that these slow suites, which build
// the module's main package from its root, run apart from package cmd's tests.
package wholebinary
