package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/valyala/fasthttp"

	"interviewd/kv"
)

// requestFunc fills req with one worker's next request. The driver reuses req for the
// worker's whole run, so a requestFunc sets everything that varies, every time. last is
// the answer to the worker's previous request, for scenarios whose next step depends on
// it (a participant's interview ends); it is nil before the first request and after a
// transport error, and it is only valid during the call. When a run ends the driver
// calls it once more to hand over the last answer; that request is never sent.
type requestFunc func(req *fasthttp.Request, last *fasthttp.Response)

// workload is what a scenario's setup prepares against one target.
type workload struct {
	// newWorker makes one requestFunc per worker (numbered from 0): state a scenario
	// keeps per connection (a random source, an interview in progress) is the worker's
	// own and needs no lock.
	newWorker func(worker int) requestFunc
	// sample is how many requests of a fresh worker the smoke check sends; the last
	// answer is what the ceiling replays. 0 means 1.
	sample int
	// verify, when set, runs after the timed load and checks what the server kept. It
	// returns figures for the report, or an error when the check could not be made.
	verify func(ctx context.Context) ([]figure, error)
	// enough, when set, says whether the load so far shows what the scenario exists to
	// show (an interview taken to its end). With options.UntilEnough the timed run goes
	// on past --duration until it does (within untilEnoughWait), so a test of the
	// scenario never depends on how much a busy machine gets done in a fixed window.
	enough func() bool
}

// scenario is one kind of load. setup runs once against the target.
type scenario struct {
	name  string
	setup func(ctx context.Context, t *target) (workload, error)
	// conns, when set, chooses the scenario's concurrency instead of --conns.
	conns func(o options) int
}

// scenarios is the registry, in run order. A new kind of load (MCP tools/call, ...) is
// one more entry here.
var scenarios = []scenario{
	{name: "get_study", setup: setupGetStudy},
	{name: "list_studies", setup: setupListStudies},
	{name: "mcp_get_study", setup: setupMCPGetStudy},
	{name: "a2a_get_study", setup: setupA2AGetStudy},
	{name: "participants", setup: setupParticipants, conns: participantConns},
	{name: "create_link", setup: setupCreateLink},
	{name: "app_studies", setup: setupAppStudies},
	{name: "app_transcript", setup: setupAppTranscript},
}

func findScenario(name string) (scenario, bool) {
	for _, s := range scenarios {
		if s.name == name {
			return s, true
		}
	}
	return scenario{}, false
}

func scenarioNames() []string {
	names := make([]string, len(scenarios))
	for i, s := range scenarios {
		names[i] = s.name
	}
	return names
}

// apiRequest makes req an authenticated GET of uri (a full URL).
func apiRequest(req *fasthttp.Request, uri, bearer string) {
	req.Header.SetMethod(fasthttp.MethodGet)
	req.SetRequestURI(uri)
	req.Header.Set(fasthttp.HeaderAuthorization, bearer)
}

// setupGetStudy reads one random known study per request. The URIs are built once.
func setupGetStudy(_ context.Context, t *target) (workload, error) {
	if len(t.studyIDs) == 0 {
		return workload{}, errors.New("get_study: the target has no studies (create some, or run --scenarios list_studies)")
	}
	uris := make([]string, len(t.studyIDs))
	for i, id := range t.studyIDs {
		uris[i] = t.baseURL + "/v1/api/studies/" + id
	}
	bearer := "Bearer " + t.key
	return workload{newWorker: func(worker int) requestFunc {
		rng := rand.New(rand.NewPCG(uint64(worker), 0x1d))
		return func(req *fasthttp.Request, _ *fasthttp.Response) {
			apiRequest(req, uris[rng.IntN(len(uris))], bearer)
		}
	}}, nil
}

// setupListStudies reads the first page of 50 studies, newest first.
func setupListStudies(_ context.Context, t *target) (workload, error) {
	uri := t.baseURL + "/v1/api/studies?limit=50"
	bearer := "Bearer " + t.key
	return workload{newWorker: func(int) requestFunc {
		return func(req *fasthttp.Request, _ *fasthttp.Response) { apiRequest(req, uri, bearer) }
	}}, nil
}

// setupMCPGetStudy calls the MCP tool get_study for one random known study per request:
// one stateless JSON-RPC POST to /v1/mcp (protocol 2025-11-25, no handshake needed).
func setupMCPGetStudy(_ context.Context, t *target) (workload, error) {
	if len(t.studyIDs) == 0 {
		return workload{}, errors.New("mcp_get_study: the target has no studies")
	}
	bodies := make([][]byte, len(t.studyIDs))
	for i, id := range t.studyIDs {
		bodies[i] = []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_study","arguments":{"study_id":"` + id + `"}}}`)
	}
	uri := t.baseURL + "/v1/mcp"
	bearer := "Bearer " + t.key
	return workload{newWorker: func(worker int) requestFunc {
		rng := rand.New(rand.NewPCG(uint64(worker), 0x3c))
		return func(req *fasthttp.Request, _ *fasthttp.Response) {
			req.Header.SetMethod(fasthttp.MethodPost)
			req.SetRequestURI(uri)
			req.Header.Set(fasthttp.HeaderAuthorization, bearer)
			req.Header.SetContentType("application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
			req.SetBody(bodies[rng.IntN(len(bodies))])
		}
	}}, nil
}

// setupA2AGetStudy sends the A2A message that runs the get_study skill for one random
// known study per request: one JSON-RPC SendMessage to /v1/a2a, answered with the
// completed task (committed before the answer, so each message is also one durable
// write). Every message has its own messageId: one sent again would be answered with
// the first one's task.
func setupA2AGetStudy(_ context.Context, t *target) (workload, error) {
	if len(t.studyIDs) == 0 {
		return workload{}, errors.New("a2a_get_study: the target has no studies")
	}
	// Each body is its two halves around the message's id.
	heads, tails := make([][]byte, len(t.studyIDs)), make([][]byte, len(t.studyIDs))
	for i, id := range t.studyIDs {
		heads[i] = []byte(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"bench-`)
		tails[i] = []byte(`","role":"ROLE_USER","parts":[{"data":{"skill":"get_study","arguments":{"study_id":"` + id + `"}}}]}}}`)
	}
	run := strconv.FormatUint(rand.Uint64(), 36) // runs against one target do not share ids
	var sent atomic.Int64
	uri := t.baseURL + "/v1/a2a"
	bearer := "Bearer " + t.agentKey
	// A refused message is still HTTP 200 (a JSON-RPC error): every answer is checked
	// for the completed task, and those that are not one are reported.
	var answered, notCompleted atomic.Int64
	return workload{newWorker: func(worker int) requestFunc {
		rng := rand.New(rand.NewPCG(uint64(worker), 0x2a))
		return func(req *fasthttp.Request, last *fasthttp.Response) {
			if last != nil {
				answered.Add(1)
				if !bytes.Contains(last.Body(), []byte(`"state":"TASK_STATE_COMPLETED"`)) {
					notCompleted.Add(1)
				}
			}
			req.Header.SetMethod(fasthttp.MethodPost)
			req.SetRequestURI(uri)
			req.Header.Set(fasthttp.HeaderAuthorization, bearer)
			req.Header.SetContentType("application/json")
			req.Header.Set("A2A-Version", "1.0")
			i := rng.IntN(len(heads))
			body := append(append(req.Body()[:0], heads[i]...), run...)
			body = strconv.AppendInt(append(body, '-'), sent.Add(1), 36)
			req.SetBody(append(body, tails[i]...))
		}
	}, verify: func(context.Context) ([]figure, error) {
		if n := notCompleted.Load(); n > 0 {
			return nil, fmt.Errorf("%d of %d answers were not a completed task", n, answered.Load())
		}
		return nil, nil
	}}, nil
}

// setupCreateLink mints a participant link per request (POST
// /v1/api/studies/{id}/participant-links) for one random known study: a durable write
// per request, so it measures how the store shares commits between concurrent writers.
// In-process, it then looks every acknowledged link up in the store: an answer given
// before its commit was durable, or a write lost from a shared commit, shows as missing.
func setupCreateLink(_ context.Context, t *target) (workload, error) {
	if len(t.studyIDs) == 0 {
		return workload{}, errors.New("create_link: the target has no studies")
	}
	uris := make([]string, len(t.studyIDs))
	for i, id := range t.studyIDs {
		uris[i] = t.baseURL + "/v1/api/studies/" + id + "/participant-links"
	}
	bearer := "Bearer " + t.key
	var (
		mu     sync.Mutex
		tokens []string // acknowledged links, in the run against the target only
	)
	live := true // the first run is the target's; the ceiling's replayed answers are not links
	w := workload{newWorker: func(worker int) requestFunc {
		rng := rand.New(rand.NewPCG(uint64(worker), 0x2b))
		body := []byte(`{"context":{"segment":"bench worker ` + strconv.Itoa(worker) + `","source":"load test"},"audience":"group","note":"Seeded by the load-test suite."}`)
		record := live
		return func(req *fasthttp.Request, last *fasthttp.Response) {
			if last != nil && record && last.StatusCode() == fasthttp.StatusOK {
				var out struct {
					URL string `json:"url"`
				}
				if json.Unmarshal(last.Body(), &out) == nil {
					if i := strings.LastIndex(out.URL, "/i/"); i >= 0 {
						mu.Lock()
						tokens = append(tokens, out.URL[i+len("/i/"):])
						mu.Unlock()
					}
				}
			}
			req.Header.SetMethod(fasthttp.MethodPost)
			req.SetRequestURI(uris[rng.IntN(len(uris))])
			req.Header.Set(fasthttp.HeaderAuthorization, bearer)
			req.Header.SetContentType("application/json")
			req.SetBody(body)
		}
	}}
	if t.db == nil {
		return w, nil
	}
	w.verify = func(ctx context.Context) ([]figure, error) {
		live = false
		mu.Lock()
		defer mu.Unlock()
		missing := 0
		for _, tok := range tokens {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if _, err := t.db.FindLinkByToken(ctx, tok); kv.ErrorCode(err) == kv.ENOTFOUND {
				missing++
			} else if err != nil {
				return nil, err
			}
		}
		return []figure{{"links", len(tokens)}, {"missing", missing}}, nil
	}
	return w, nil
}
