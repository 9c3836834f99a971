package depcheck

// Module is the module's root import path: the binary's main package.
const Module = "interviewd"

// surfaces are the server's surface packages, one per surface (DESIGN.md, server/). A
// surface that does not exist yet matches nothing, so the rules that name it hold
// until it does, and from then on.
var surfaces = []string{
	"interviewd/server/rest/...",
	"interviewd/server/mcp/...",
	"interviewd/server/a2a/...",
	"interviewd/server/oauth/...",
	"interviewd/server/access/...",
	"interviewd/server/app/...",
	"interviewd/server/participant/...",
}

// Rules are the house's dependency rules. Dependencies point one way:
// main → cmd → server → jobs → {moderator, analysis} → kv → blobs; server → webui;
// server, jobs → plugins; server → extract. A new rule is one more entry.
var Rules = []Rule{
	{
		Name:   "kv imports nothing of ours but blobs and the findings types: never server, a surface, jobs or an engine above it",
		From:   []string{"interviewd/kv/..."},
		Tests:  true,
		Closed: true,
		Only:   []string{"interviewd/blobs", "interviewd/analysis/findings"},
	},
	{
		Name:   "kv's storage engines (kv/internal/...) are kv's alone",
		From:   []string{"interviewd/..."},
		Unless: []string{"interviewd/kv", "interviewd/kv/internal/..."},
		Direct: true,
		Tests:  true,
		Deny:   []string{"interviewd/kv/internal/..."},
	},
	{
		Name:   "analysis is pure (interviews in, findings out): it imports nothing of ours but the tagger",
		From:   []string{"interviewd/analysis/..."},
		Closed: true,
		Only:   []string{"interviewd/tagger"},
	},
	{
		Name: "moderator sits below jobs and server",
		From: []string{"interviewd/moderator/..."},
		Deny: []string{"interviewd/jobs/...", "interviewd/server/...", "interviewd/webui/...", "interviewd/plugins/...", "interviewd/analysis", "interviewd/cmd/...", "interviewd/bench/..."},
	},
	{
		Name: "jobs sit below server",
		From: []string{"interviewd/jobs/..."},
		Deny: []string{"interviewd/server/...", "interviewd/webui/...", "interviewd/cmd/...", "interviewd/bench/..."},
	},
	{
		Name:  "plugins imports nothing of ours but the findings types",
		From:  []string{"interviewd/plugins/..."},
		Tests: true, Closed: true,
		Only: []string{"interviewd/analysis/findings"},
	},
	{
		Name: "the leaves (blobs, extract, webui, sms, logbatch, tagger) import nothing of ours",
		From: []string{
			"interviewd/blobs/...", "interviewd/extract/...", "interviewd/webui/...",
			"interviewd/sms/...", "interviewd/logbatch/...", "interviewd/tagger/...",
		},
		Tests: true, Closed: true,
	},
	{
		Name:   "nothing imports server but the command line and the load-test suite",
		From:   []string{"interviewd/..."},
		Unless: []string{"interviewd", "interviewd/cmd/...", "interviewd/bench/...", "interviewd/server/..."},
		Deny:   []string{"interviewd/server/..."},
	},
	{
		Name:  "server/ratelimit imports nothing of server: not the assembly, the pipeline or a surface",
		From:  []string{"interviewd/server/ratelimit/..."},
		Tests: true,
		Deny:  []string{"interviewd/server/..."},
	},
	{
		Name:   "nothing imports the binary (main) or its command line",
		From:   []string{"interviewd/..."},
		Unless: []string{"interviewd", "interviewd/cmd/..."},
		Tests:  true,
		Deny:   []string{"interviewd", "interviewd/cmd/..."},
	},
	{
		Name:  "surfaces never import each other",
		From:  surfaces,
		Apart: true,
	},
	// Surfaces cannot import the assembly, nor the pipeline import research or a
	// surface: those would be import cycles, which the compiler refuses.
	{
		Name: "what surfaces share (research, authz) imports no surface",
		From: []string{"interviewd/server/research/...", "interviewd/server/authz/..."},
		Deny: surfaces,
	},
}
