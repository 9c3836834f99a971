package server

import (
	"interviewd/server/pipeline"
	"interviewd/server/research"
)

// What the command line configures a Server with, parsed where the pipeline keeps it.

// RateLimits configures admission (see ratelimit.Limits).
type RateLimits = pipeline.RateLimits

// DefaultRateLimits are the limits a server starts with when none are configured.
func DefaultRateLimits() RateLimits { return pipeline.DefaultRateLimits() }

// ParseRateLimits reads the --rate-limits flag.
func ParseRateLimits(s string) (RateLimits, error) { return pipeline.ParseRateLimits(s) }

// ParseTrustedProxies reads the --trusted-proxies flag.
var ParseTrustedProxies = pipeline.ParseTrustedProxies

// ParseCORSOrigins reads the --cors-origins flag.
var ParseCORSOrigins = pipeline.ParseCORSOrigins

// FasthttpLogger is the fasthttp.Logger for any other fasthttp server interviewd runs
// (the metrics listener): it prints none of the request fasthttp quotes.
var FasthttpLogger = pipeline.FasthttpLogger

// HSTSValue is the Strict-Transport-Security header sent on every answer over TLS.
const HSTSValue = pipeline.HSTSValue

// AddOrgPlugin checks, stores and records an organisation's own plugin, as the web
// app's plugin page does (see research.AddOrgPlugin).
var AddOrgPlugin = research.AddOrgPlugin

// RemoveOrgPlugin removes an organisation's plugin, as the web app's plugin page does
// (see research.RemoveOrgPlugin).
var RemoveOrgPlugin = research.RemoveOrgPlugin
