package a2a

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	stdjson "encoding/json"
	"sort"
	"strings"
	"sync"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"interviewd/kv"
	"interviewd/server/pipeline"
)

// AgentCardPath is where A2A clients look for the agent card (A2A §8.2).
const AgentCardPath = "/.well-known/agent-card.json"

// Security scheme names of the agent card.
const (
	a2aSchemeBearer = "bearer"
	a2aSchemeAPIKey = "apiKey"
)

// agentCardDoc is the card as served: its JSON and the strong ETag of those bytes.
type agentCardDoc struct {
	raw  []byte
	etag string
}

// routeAgentCard serves the public agent card. It is rendered on first request (like
// the OpenAPI document) and the same for every caller, so clients may cache it and
// revalidate with If-None-Match.
func (s *Agent) routeAgentCard(r *router.Router) {
	doc := sync.OnceValue(func() agentCardDoc {
		raw := jsonNoEscape(s.agentCard(), "  ")
		sum := sha256.Sum256(raw)
		return agentCardDoc{raw: raw, etag: `"` + base64.RawURLEncoding.EncodeToString(sum[:16]) + `"`}
	})
	h := func(c *fasthttp.RequestCtx) {
		d := doc()
		h := &c.Response.Header
		h.Set("Cache-Control", "public, max-age=300")
		h.Set("ETag", d.etag)
		// The card is public: agents running in a browser may read it from anywhere.
		h.Set("Access-Control-Allow-Origin", "*")
		if etagMatches(c.Request.Header.Peek("If-None-Match"), d.etag) {
			c.SetStatusCode(fasthttp.StatusNotModified)
			return
		}
		c.SetContentType("application/json")
		c.SetBody(d.raw)
	}
	pipeline.HandlePlain(r, "GET", AgentCardPath, h)
	pipeline.HandlePlain(r, "HEAD", AgentCardPath, h)
}

// jsonNoEscape encodes v as people read it ("<", not "\u003c"), indented by indent.
func jsonNoEscape(v any, indent string) []byte {
	var b bytes.Buffer
	enc := stdjson.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", indent)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// etagMatches applies If-None-Match (RFC 9110 §13.1.2): "*" or any listed tag, weak
// or strong, equal to etag.
func etagMatches(header []byte, etag string) bool {
	if len(header) == 0 {
		return false
	}
	for tag := range strings.SplitSeq(string(header), ",") {
		tag = strings.TrimPrefix(strings.TrimSpace(tag), "W/")
		if tag == "*" || tag == etag {
			return true
		}
	}
	return false
}

// agentCard describes interviewd to other agents: one skill per research operation,
// generated from the table, so an operation added later is a skill with no code here.
func (s *Agent) agentCard() *a2a.AgentCard {
	card := &a2a.AgentCard{
		Name: "interviewd",
		Description: "Runs AI-moderated research interviews: authors a study from plain-language guidance, " +
			"rehearses it with a synthetic participant, hands out invite links, and exports redacted transcripts. " +
			"Send a data part {\"skill\": NAME, \"arguments\": {...}} naming one of the skills below (the arguments are " +
			"those of the REST operation of the same name), or plain text such as \"create a study about ...\" or " +
			"\"status of study ID\". Each message runs as a task whose artifact holds the same JSON as the REST API; " +
			"authoring, simulation and export tasks stay working until their job ends.",
		Version:             pipeline.OpenAPIVersion,
		DocumentationURL:    s.BaseURL + "/v1/api/openapi.json",
		Provider:            &a2a.AgentProvider{Org: "interviewd", URL: s.BaseURL},
		SupportedInterfaces: []*a2a.AgentInterface{{URL: s.BaseURL + Resource, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2a.Version}},
		Capabilities:        a2a.AgentCapabilities{Streaming: true},
		DefaultInputModes:   []string{"application/json", "text/plain"},
		DefaultOutputModes:  []string{"application/json", "text/plain"},
		SecuritySchemes: a2a.NamedSecuritySchemes{
			a2aSchemeBearer: a2a.HTTPAuthSecurityScheme{Scheme: "Bearer", BearerFormat: "interviewd API key (jsk_live_… or jsk_test_…)",
				Description: "An interviewd API key holding agent:run, as Authorization: Bearer. OAuth access tokens are not accepted here."},
			a2aSchemeAPIKey: a2a.APIKeySecurityScheme{Location: a2a.APIKeySecuritySchemeLocationHeader, Name: "X-API-Key",
				Description: "The same API key in an X-API-Key header."},
		},
		SecurityRequirements: a2aSecurity(kv.ScopeAgentRun),
	}
	for _, o := range s.Ops {
		card.Skills = append(card.Skills, agentSkill(o))
	}
	return card
}

// a2aSecurity is either scheme carrying scopes.
func a2aSecurity(scopes ...string) a2a.SecurityRequirementsOptions {
	return a2a.SecurityRequirementsOptions{
		{a2aSchemeBearer: scopes},
		{a2aSchemeAPIKey: scopes},
	}
}

// agentSkill describes one operation as a skill.
func agentSkill(o *pipeline.Operation) a2a.AgentSkill {
	desc := pipeline.ToolDescription(o)
	if o.Awaits != "" {
		desc += " Runs as a background job: the task stays working until it ends, then completes with the " + o.Awaits + " result as its artifact."
	}
	tags := []string{"research"}
	if o.Write {
		tags = append(tags, "write")
	} else {
		tags = append(tags, "read")
	}
	if o.Awaits != "" {
		tags = append(tags, "background-job")
	}
	scopes := []string{kv.ScopeAgentRun}
	switch {
	case len(o.AnyScope) > 0:
		scopes = append(scopes, o.AnyScope[0])
	case o.Scope != "":
		scopes = append(scopes, o.Scope)
	}
	return a2a.AgentSkill{
		ID:                   o.Name,
		Name:                 o.Summary,
		Description:          desc,
		Tags:                 tags,
		Examples:             skillExamples(o),
		InputModes:           []string{"application/json"},
		OutputModes:          []string{"application/json"},
		SecurityRequirements: a2aSecurity(scopes...),
	}
}

// skillExamples are the data part that calls the skill, its required arguments
// filled with placeholders, and the plain-text requests the built-in engine maps to it.
func skillExamples(o *pipeline.Operation) []string {
	args := map[string]any{}
	for i := range o.Plan.Fields {
		fp := &o.Plan.Fields[i]
		if fp.Required {
			args[fp.Name] = "<" + fp.Name + ">"
		}
	}
	out := []string{string(jsonNoEscape(struct {
		Skill     string         `json:"skill"`
		Arguments map[string]any `json:"arguments"`
	}{o.Name, args}, ""))}
	texts := plainExamples[o.Name]
	sort.Strings(texts)
	return append(out, texts...)
}
