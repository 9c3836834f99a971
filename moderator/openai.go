package moderator

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"interviewd/kv"
)

// OpenAIConfig configures the engine that speaks an OpenAI-compatible chat-completions
// endpoint. Zero values take the documented defaults.
type OpenAIConfig struct {
	URL        string        // base URL such as http://host/v1; requests go to {URL}/chat/completions
	Key        string        // sent as "Authorization: Bearer {Key}"; omitted when empty
	Model      string        // model name sent with every request; omitted when empty
	Timeout    time.Duration // per attempt; default 60s
	MaxRetries int           // retries after the first attempt; 0 means 3, negative means none
	Backoff    time.Duration // base of the exponential backoff; default 500ms
	HTTPClient *http.Client  // default: a client on http.DefaultTransport
	// Sleep waits between attempts and returns ctx.Err() if ctx ends first. The
	// default waits on a timer; tests inject one that records the wait and returns.
	Sleep func(ctx context.Context, d time.Duration) error
}

// OpenAI is an Engine backed by an OpenAI-compatible chat-completions endpoint. Every
// reply is structured JSON checked against a schema before use; transient failures
// (network errors, timeouts, 429, 5xx and invalid output) are retried a bounded number
// of times with backoff. It is safe for concurrent use.
type OpenAI struct {
	endpoint   string
	key        string
	model      string
	timeout    time.Duration
	maxRetries int
	backoff    time.Duration
	client     *http.Client
	sleep      func(ctx context.Context, d time.Duration) error
}

var _ Engine = (*OpenAI)(nil)

const (
	openaiDefaultTimeout    = 60 * time.Second
	openaiDefaultMaxRetries = 3
	openaiDefaultBackoff    = 500 * time.Millisecond
	// openaiBackoffCap bounds every wait, a server's Retry-After included, so a
	// misbehaving endpoint cannot park a job for hours.
	openaiBackoffCap = 30 * time.Second
	// openaiMaxProbes is how many follow-ups one scripted question may get; past it
	// Probe moves on without asking the model.
	openaiMaxProbes = 2
)

// NewOpenAI returns an engine for cfg. It returns an error when cfg.URL is not an
// absolute http or https URL; the error never echoes the URL, which may carry
// credentials.
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	endpoint, err := chatEndpoint(cfg.URL)
	if err != nil {
		return nil, err
	}
	o := &OpenAI{
		endpoint:   endpoint,
		key:        cfg.Key,
		model:      cfg.Model,
		timeout:    cfg.Timeout,
		maxRetries: cfg.MaxRetries,
		backoff:    cfg.Backoff,
		client:     cfg.HTTPClient,
		sleep:      cfg.Sleep,
	}
	if o.timeout <= 0 {
		o.timeout = openaiDefaultTimeout
	}
	switch {
	case o.maxRetries == 0:
		o.maxRetries = openaiDefaultMaxRetries
	case o.maxRetries < 0:
		o.maxRetries = 0
	}
	if o.backoff <= 0 {
		o.backoff = openaiDefaultBackoff
	}
	if o.client == nil {
		o.client = &http.Client{}
	}
	if o.sleep == nil {
		o.sleep = chatSleep
	}
	return o, nil
}

// chatEndpoint returns {base}/chat/completions, keeping any query (some gateways need
// an api-version parameter). It returns an error for anything but an absolute http(s) URL.
func chatEndpoint(base string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(base))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", errors.New("model endpoint: the model URL must be an absolute http or https URL")
	}
	u.Fragment = ""
	u.RawFragment = ""
	u.Path = strings.TrimRight(u.Path, "/") + "/chat/completions"
	u.RawPath = ""
	return u.String(), nil
}

// Author drafts or refines a brief. It returns an error wrapping ErrRefused when the
// model declines (its refusal field or its own "refused" answer), an error naming the
// HTTP status and the API's message for a rejected request, and otherwise the last
// failure once the retries are spent.
func (o *OpenAI) Author(ctx context.Context, req AuthorRequest) (kv.Brief, error) {
	body := chatRequest{
		Model:          o.model,
		Messages:       authorMessages(req),
		Temperature:    chatTemperature(0.2),
		ResponseFormat: chatFormat("brief", chatBriefSchema),
	}
	return chatCall(ctx, o, body, decodeBrief)
}

// Probe returns a short neutral follow-up or "" to move on. It returns "" without a
// call once the question has had openaiMaxProbes follow-ups. Errors are those of Author;
// a refusal wraps ErrRefused.
func (o *OpenAI) Probe(ctx context.Context, req ProbeRequest) (string, error) {
	if req.ProbesSoFar >= openaiMaxProbes {
		return "", nil
	}
	body := chatRequest{
		Model:          o.model,
		Messages:       probeMessages(req),
		Temperature:    chatTemperature(0.3),
		ResponseFormat: chatFormat("probe", chatProbeSchema),
	}
	return chatCall(ctx, o, body, func(content string) (string, error) {
		return decodeProbe(content, req.Note)
	})
}

// Participant returns the synthetic participant's next reply. Errors are those of
// Author; a refusal wraps ErrRefused.
func (o *OpenAI) Participant(ctx context.Context, req ParticipantRequest) (string, error) {
	seed := req.Seed
	body := chatRequest{
		Model:          o.model,
		Messages:       participantMessages(req),
		Temperature:    chatTemperature(0.8),
		Seed:           &seed,
		ResponseFormat: chatFormat("reply", chatReplySchema),
	}
	return chatCall(ctx, o, body, decodeReply)
}

func chatTemperature(t float64) *float64 { return &t }
