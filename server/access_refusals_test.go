package server

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"interviewd/kv"
	"interviewd/server/pipeline"
)

// TestAccessRefusals: every refusal the account access API makes, with its status,
// code or validation type, and whether the answer carries the transaction's state.
func TestAccessRefusals(t *testing.T) {
	e, smtp := mustServeMail(t)
	// ready is a transaction of a@example.com at issue_key.
	ready := newAccessAgent(t, e)
	code := ready.start(smtp, "a@example.com")
	ready.step(200, "/v1/access/verify-email", `"token":"`+code+`"`)
	ready.step(200, "/v1/access/workspace", `"action":"select","org_id":"`+e.orgA.ID.String()+`"`)
	// fresh is a transaction still waiting for its email code.
	fresh := newAccessAgent(t, e)
	freshCode := fresh.start(smtp, "b@example.com")

	keyBody := func(extra string) string {
		return `{"transaction_id":"` + ready.id + `","name":"k","scopes":["studies:read"],"environment":"live"` + extra + `}`
	}
	idem := []string{"Idempotency-Key", kv.NewV4().String()}
	cases := []struct {
		name       string
		auth       string // "" none; "proof" the agent's; anything else literal
		path, body string
		headers    []string
		agent      *accessAgent
		status     int
		code       string // the error code, or the first validation item's type
		loc        string // the first validation item's loc, joined with "."
		state      string // the transaction's state in the answer: "" when the proof opens none
	}{
		{"ErrNoProof", "", "/v1/access/transactions", `{"email":"x@example.com","client_name":"a"}`, nil, ready, 401, "missing_token", "", ""},
		{"ErrMalformedProof", "Bearer jmg_short", "/v1/access/transactions", `{"email":"x@example.com","client_name":"a"}`, nil, ready, 401, "invalid_token", "", ""},
		{"ErrNotBearer", "Basic dXNlcjpwYXNz", "/v1/access/verify-email", `{}`, nil, ready, 401, "invalid_token", "", ""},
		{"ErrAPIKey", "Bearer " + e.keys["a_live"], "/v1/access/verify-email", `{"transaction_id":"` + ready.id + `","token":"123456"}`, nil, ready, 401, "invalid_token", "", ""},
		{"ErrOtherProof", "Bearer " + newAccessProof(), "/v1/access/verify-email", `{"transaction_id":"` + fresh.id + `","token":"` + freshCode + `"}`, nil, fresh, 401, "invalid_token", "", ""},
		{"ErrUnknownTransaction", "proof", "/v1/access/verify-email", `{"transaction_id":"` + kv.NewV4().String() + `","token":"123456"}`, nil, fresh, 401, "invalid_token", "", ""},
		{"ErrWorkspaceBeforeEmail", "proof", "/v1/access/workspace", `{"transaction_id":"` + fresh.id + `","action":"list"}`, nil, fresh, 409, "wrong_step", "", "awaiting_email"},
		{"ErrMFABeforeEmail", "proof", "/v1/access/mfa/verify", `{"transaction_id":"` + fresh.id + `","method":"email"}`, nil, fresh, 409, "wrong_step", "", "awaiting_email"},
		{"ErrKeyBeforeEmail", "proof", "/v1/access/keys", `{"transaction_id":"` + fresh.id + `","name":"k","scopes":["studies:read"],"environment":"live","expires_in_days":30}`, idem, fresh, 409, "wrong_step", "", "awaiting_email"},
		{"ErrEmailAgain", "proof", "/v1/access/verify-email", `{"transaction_id":"` + ready.id + `","token":"123456"}`, nil, ready, 409, "wrong_step", "", "awaiting_key"},
		{"ErrMFANotDue", "proof", "/v1/access/mfa/verify", `{"transaction_id":"` + ready.id + `","method":"email"}`, nil, ready, 409, "wrong_step", "", "awaiting_key"},
		{"ErrNoIdempotencyKey", "proof", "/v1/access/keys", keyBody(`,"expires_in_days":30`), nil, ready, 422, "missing", "header.Idempotency-Key", "awaiting_key"},
		{"ErrIdempotencyKeyNotUUID", "proof", "/v1/access/keys", keyBody(`,"expires_in_days":30`), []string{"Idempotency-Key", "retry-1"}, ready, 422, "uuid_parsing", "header.Idempotency-Key", "awaiting_key"},
		{"ErrUnknownScope", "proof", "/v1/access/keys", `{"transaction_id":"` + ready.id + `","name":"k","scopes":["studies:delete"],"environment":"live","expires_in_days":30}`, idem, ready, 422, "enum", "body.scopes", "awaiting_key"},
		{"ErrNoScopes", "proof", "/v1/access/keys", `{"transaction_id":"` + ready.id + `","name":"k","scopes":[],"environment":"live","expires_in_days":30}`, idem, ready, 422, "too_short", "body.scopes", "awaiting_key"},
		{"ErrBadExpiry", "proof", "/v1/access/keys", keyBody(`,"expires_in_days":45`), idem, ready, 422, "enum", "body.expires_in_days", "awaiting_key"},
		{"ErrZeroExpiry", "proof", "/v1/access/keys", keyBody(`,"expires_in_days":0`), idem, ready, 422, "enum", "body.expires_in_days", "awaiting_key"},
		{"ErrExpiryMissing", "proof", "/v1/access/keys", keyBody(``), idem, ready, 422, "missing", "body.expires_in_days", "awaiting_key"},
		{"ErrBadEnvironment", "proof", "/v1/access/keys", `{"transaction_id":"` + ready.id + `","name":"k","scopes":["studies:read"],"environment":"prod","expires_in_days":30}`, idem, ready, 422, "enum", "body.environment", "awaiting_key"},
		{"ErrUnknownMember", "proof", "/v1/access/verify-email", `{"transaction_id":"` + fresh.id + `","token":"1","extra":1}`, nil, fresh, 422, "extra_forbidden", "body.extra", "awaiting_email"},
		{"ErrTransactionIDNotUUID", "proof", "/v1/access/verify-email", `{"transaction_id":"abc","token":"1"}`, nil, fresh, 422, "uuid_parsing", "body.transaction_id", ""},
		{"ErrMFABothForms", "proof", "/v1/access/mfa/verify", `{"transaction_id":"` + fresh.id + `","method":"email","code":"123456"}`, nil, fresh, 422, "value_error", "body.method", "awaiting_email"},
		{"ErrMFAUnknownMethod", "proof", "/v1/access/mfa/verify", `{"transaction_id":"` + fresh.id + `","method":"pigeon"}`, nil, fresh, 422, "enum", "body.method", "awaiting_email"},
		{"ErrSelectWithoutOrg", "proof", "/v1/access/workspace", `{"transaction_id":"` + ready.id + `","action":"select"}`, nil, ready, 422, "missing", "body.org_id", "awaiting_key"},
		{"ErrListWithOrg", "proof", "/v1/access/workspace", `{"transaction_id":"` + ready.id + `","action":"list","org_id":"` + e.orgB.ID.String() + `"}`, nil, ready, 422, "extra_forbidden", "body.org_id", "awaiting_key"},
		{"ErrOtherOrg", "proof", "/v1/access/workspace", `{"transaction_id":"` + ready.id + `","action":"select","org_id":"` + e.orgB.ID.String() + `"}`, nil, ready, 404, "not_found", "", "awaiting_key"},
		{"ErrReplaceNotUUID", "proof", "/v1/access/keys/nope/replace", `{"transaction_id":"` + ready.id + `"}`, idem, ready, 422, "uuid_parsing", "path.key_id", "awaiting_key"},
		{"ErrReplaceOtherOrgsKey", "proof", "/v1/access/keys/" + mustKeyID(t, e, "b_live").String() + "/replace", `{"transaction_id":"` + ready.id + `"}`, idem, ready, 404, "not_found", "", "awaiting_key"},
		{"ErrBadEmail", "proof", "/v1/access/transactions", `{"email":"not-an-address","client_name":"a"}`, nil, fresh, 422, "email", "body.email", ""},
		{"ErrClientNameTooLong", "proof", "/v1/access/transactions", `{"email":"x@example.com","client_name":"` + strings.Repeat("a", 101) + `"}`, nil, fresh, 422, "string_too_long", "body.client_name", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			auth := c.auth
			if auth == "proof" {
				auth = "Bearer " + c.agent.proof
			}
			r := e.do("POST", c.path, auth, c.body, c.headers...)
			if r.status != c.status {
				t.Fatalf("status %d, want %d: %s", r.status, c.status, r.body)
			}
			var body struct {
				Detail        json.RawMessage `json:"detail"`
				Code          string          `json:"code"`
				TransactionID string          `json:"transaction_id"`
				State         string          `json:"state"`
				NextAction    string          `json:"next_action"`
			}
			r.json(t, &body)
			code := body.Code
			if c.status == 422 {
				var items []kv.FieldError
				if err := json.Unmarshal(body.Detail, &items); err != nil || len(items) == 0 {
					t.Fatalf("422 body %s", r.body)
				}
				code = items[0].Type
				var loc []string
				for _, l := range items[0].Loc {
					loc = append(loc, l.(string))
				}
				if got := strings.Join(loc, "."); got != c.loc {
					t.Fatalf("loc %s, want %s: %s", got, c.loc, r.body)
				}
			}
			if code != c.code {
				t.Fatalf("code %q, want %q: %s", code, c.code, r.body)
			}
			if body.State != c.state || (c.state != "" && (body.TransactionID != c.agent.id || body.NextAction != kv.AccessState(c.state).NextAction())) {
				t.Fatalf("state %q next %q id %q, want %q: %s", body.State, body.NextAction, body.TransactionID, c.state, r.body)
			}
			if c.status == 401 && !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
				t.Fatalf("401 without WWW-Authenticate")
			}
			if r.header.Get("Cache-Control") != "no-store" {
				t.Fatal("an access answer may be cached")
			}
		})
	}
	// None of that disturbed the transactions: each carries on with its own proof.
	wantNext(t, fresh.step(200, "/v1/access/verify-email", `"token":"`+freshCode+`"`), "awaiting_workspace", "select_workspace")
	ready.issue(kv.NewV4().String(), `["studies:read"]`)
}

// TestAccessProofElsewhere: a proof is a clean 401 on the research API and MCP, as
// any unknown credential.
func TestAccessProofElsewhere(t *testing.T) {
	e := mustServe(t)
	proof := newAccessProof()
	r := e.do("GET", "/v1/api/me", "Bearer "+proof, "")
	if r.status != 401 || !bytes.Contains(r.body, []byte(`"code":"invalid_token"`)) || !strings.Contains(r.header.Get("WWW-Authenticate"), "/v1/api") {
		t.Fatalf("REST: %d %s", r.status, r.body)
	}
	r = e.do("POST", "/v1/mcp", "Bearer "+proof, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "Accept", acceptBoth)
	if r.status != 401 || !bytes.Contains(r.body, []byte(`"code":"invalid_token"`)) || !strings.Contains(r.header.Get("WWW-Authenticate"), "/v1/mcp") {
		t.Fatalf("MCP: %d %s", r.status, r.body)
	}
}

// TestAccessWrongCodes: four wrong codes leave fewer tries each time; the fifth ends
// the transaction (410), and then every step, the right code included, is 410.
func TestAccessWrongCodes(t *testing.T) {
	e, smtp := mustServeMail(t)
	for _, stage := range []string{"email", "mfa"} {
		t.Run("ErrFiveWrong_"+stage, func(t *testing.T) {
			g := newAccessAgent(t, e)
			code := g.start(smtp, "b@example.com")
			path, body := "/v1/access/verify-email", func(c string) string { return `"token":"` + c + `"` }
			if stage == "mfa" {
				// Org B requires two-step for this run: the code to get wrong is the challenge's.
				owner, _ := e.db.FindUserByEmail(t.Context(), "b@example.com")
				if _, err := e.db.SetRequireMFA(t.Context(), kv.RequireMFAInput{OrgID: e.orgB.ID, Actor: owner.ID, On: true}); err != nil {
					t.Fatal(err)
				}
				if _, err := e.db.SetTwoStepEmail(t.Context(), kv.TwoStepEmailInput{OrgID: e.orgB.ID, Actor: owner.ID, On: true}); err != nil {
					t.Fatal(err)
				}
				wantNext(t, g.step(200, "/v1/access/verify-email", `"token":"`+code+`"`), "awaiting_mfa", "verify_mfa")
				ch := g.step(200, "/v1/access/mfa/verify", `"method":"email"`)
				code = smtp.Next(t, "b@example.com").Code()
				path = "/v1/access/mfa/verify"
				body = func(c string) string {
					return `"challenge_id":"` + ch["challenge_id"].(string) + `","code":"` + c + `"`
				}
			}
			wrong := "000000"
			if code == wrong {
				wrong = "111111"
			}
			for left := 4; left >= 1; left-- {
				out := g.step(422, path, body(wrong))
				item := out["detail"].([]any)[0].(map[string]any)
				if item["type"] != "invalid_code" || item["ctx"].(map[string]any)["attempts_left"] != float64(left) || out["next_action"] == "none" {
					t.Fatalf("wrong code, %d left: %v", left, out)
				}
				if strings.Contains(item["msg"].(string), wrong) {
					t.Fatal("the refusal echoes the code")
				}
			}
			out := g.step(410, path, body(wrong))
			if out["code"] != "transaction_failed" || out["state"] != "failed" || out["next_action"] != "none" {
				t.Fatalf("fifth wrong code: %v", out)
			}
			if out := g.step(410, path, body(code)); out["code"] != "transaction_failed" {
				t.Fatalf("the right code after failure: %v", out)
			}
			g.step(410, "/v1/access/workspace", `"action":"list"`)
		})
	}
}

// TestAccessExpiry: a transaction answers until 30 minutes after it started; then
// every step is 410 transaction_expired with state expired.
func TestAccessExpiry(t *testing.T) {
	clock := &testClock{now: time.Now()}
	e, smtp := mustServeMail(t, withClock(clock))
	g := newAccessAgent(t, e)
	code := g.start(smtp, "a@example.com")
	clock.Advance(30*time.Minute - time.Second)
	wantNext(t, g.step(200, "/v1/access/verify-email", `"token":"`+code+`"`), "awaiting_workspace", "select_workspace")
	clock.Advance(time.Second)
	out := g.step(410, "/v1/access/workspace", `"action":"list"`)
	if out["code"] != "transaction_expired" || out["state"] != "expired" || out["next_action"] != "none" {
		t.Fatalf("after 30 minutes: %v", out)
	}
}

// TestAccessOneKeyPerTransaction: after the key, a new Idempotency-Key is 409 (a
// further key needs a new transaction) and the same one with another body is 409
// idempotency_key_reused; neither makes a key.
func TestAccessOneKeyPerTransaction(t *testing.T) {
	e, smtp := mustServeMail(t)
	g := newAccessAgent(t, e)
	code := g.start(smtp, "a@example.com")
	g.step(200, "/v1/access/verify-email", `"token":"`+code+`"`)
	g.step(200, "/v1/access/workspace", `"action":"select","org_id":"`+e.orgA.ID.String()+`"`)
	idem := kv.NewV4().String()
	key := g.issue(idem, `["studies:read"]`)
	out := g.step(409, "/v1/access/keys", `"name":"agent key","scopes":["studies:read"],"environment":"live","expires_in_days":90`, "Idempotency-Key", kv.NewV4().String())
	if out["code"] != "wrong_step" || out["state"] != "completed" || out["next_action"] != "none" {
		t.Fatalf("a second key: %v", out)
	}
	out = g.step(409, "/v1/access/keys", `"name":"other","scopes":["studies:read"],"environment":"live","expires_in_days":90`, "Idempotency-Key", idem)
	if out["code"] != "idempotency_key_reused" {
		t.Fatalf("same key, other body: %v", out)
	}
	out = g.step(409, "/v1/access/keys/"+key["key_id"].(string)+"/replace", "", "Idempotency-Key", idem)
	if out["code"] != "idempotency_key_reused" {
		t.Fatalf("the issuing key on replace: %v", out)
	}
	keys, _ := e.db.FindKeys(t.Context(), e.orgA.ID)
	if n := len(keys); n != 5 { // mustServe's four of Org A, and this one
		t.Fatalf("%d keys in Org A", n)
	}
}

// TestAccessLimits: transaction starts are limited per email and client address like
// the app's code requests (5 in 10 minutes), with the same answers for an address with
// and without an account; over the limit is 429 with Retry-After.
func TestAccessLimits(t *testing.T) {
	e, smtp := mustServeMail(t, withRateLimits(pipeline.DefaultRateLimits()))
	shape := func(out map[string]any) string {
		delete(out, "transaction_id")
		delete(out, "expires_at")
		raw, _ := json.Marshal(out)
		return string(raw)
	}
	for i := 0; i < pipeline.SignInRequestsPerClient; i++ {
		known := newAccessAgent(t, e)
		k := known.must(201, "/v1/access/transactions", `{"email":"a@example.com","client_name":"Test agent"}`)
		unknown := newAccessAgent(t, e)
		u := unknown.must(201, "/v1/access/transactions", `{"email":"nobody@example.com","client_name":"Test agent"}`)
		if shape(k) != shape(u) {
			t.Fatalf("answers differ: %v / %v", k, u)
		}
		// Both addresses get a code: the unknown one may become an account.
		if smtp.Next(t, "a@example.com").Code() == "" || smtp.Next(t, "nobody@example.com").Code() == "" {
			t.Fatal("no code mailed")
		}
	}
	r, out := newAccessAgent(t, e).post("/v1/access/transactions", `{"email":"a@example.com","client_name":"Test agent"}`)
	if r.status != 429 || out["code"] != "rate_limited" || r.header.Get("Retry-After") == "" {
		t.Fatalf("sixth start: %d %s", r.status, r.body)
	}
	if got := e.scrape()[`interviewd_rate_limit_refusals_total{surface="access"}`]; got != 1 {
		t.Fatalf("access refusals counted %v", got)
	}
}

// TestAccessAttemptLimits: code submissions count as the app's sign-in attempts (10
// per email and client address in 10 minutes), right or wrong, before the
// transaction's own 5 wrong codes; proofs that open nothing count against the address's
// failed-credential budget.
func TestAccessAttemptLimits(t *testing.T) {
	limits := pipeline.DefaultRateLimits()
	limits.FailedAuth = 3
	e, smtp := mustServeMail(t, withRateLimits(limits))
	for i := 0; i < 3; i++ { // three transactions, four wrong codes each: 12 attempts
		g := newAccessAgent(t, e)
		g.start(smtp, "a@example.com")
		for j := 0; j < 4; j++ {
			r, out := g.post("/v1/access/verify-email", `{"transaction_id":"`+g.id+`","token":"000000x"}`)
			want := 422
			if i*4+j >= pipeline.SignInAttemptsPerClient {
				want = 429
			}
			if r.status != want {
				t.Fatalf("attempt %d: %d, want %d: %v", i*4+j+1, r.status, want, out)
			}
			if want == 429 && (r.header.Get("Retry-After") == "" || out["next_action"] != "verify_email") {
				t.Fatalf("attempt over the limit: %v", out)
			}
		}
	}
	stranger := newAccessAgent(t, e)
	stranger.id = kv.NewV4().String()
	for i := 0; i < 3; i++ {
		if r, _ := stranger.post("/v1/access/verify-email", `{"transaction_id":"`+stranger.id+`","token":"123456"}`); r.status != 401 {
			t.Fatalf("unknown transaction %d: %d", i, r.status)
		}
	}
	if r, _ := stranger.post("/v1/access/verify-email", `{"transaction_id":"`+stranger.id+`","token":"123456"}`); r.status != 429 {
		t.Fatalf("past the failed-credential budget: %d", r.status)
	}
	// Malformed proofs and API keys count too; no credential at all does not.
	other := mustServe(t, withRateLimits(limits))
	for i, auth := range []string{"Bearer jmg_short", "Bearer " + other.keys["a_live"], "Bearer jmg_short"} {
		if r := other.do("POST", "/v1/access/transactions", auth, `{"email":"a@example.com","client_name":"x"}`); r.status != 401 {
			t.Fatalf("bad proof %d: %d", i, r.status)
		}
	}
	if r := other.do("POST", "/v1/access/transactions", "", `{"email":"a@example.com","client_name":"x"}`); r.status != 401 {
		t.Fatalf("no proof: %d", r.status)
	}
	if r := other.do("POST", "/v1/access/transactions", "Bearer jmg_short", `{}`); r.status != 429 {
		t.Fatalf("past the failed-credential budget: %d", r.status)
	}
}

// TestAccessLogsNoSecrets: the whole flow, logged at debug, never writes the proof,
// a code or the key's secret.
func TestAccessLogsNoSecrets(t *testing.T) {
	logs := &logBuffer{}
	e, smtp := mustServeMail(t, withLog(logs, zerolog.DebugLevel))
	g := newAccessAgent(t, e)
	code := g.start(smtp, "a@example.com")
	g.step(422, "/v1/access/verify-email", `"token":"`+strings.Repeat("9", 6)+`"`)
	g.step(200, "/v1/access/verify-email", `"token":"`+code+`"`)
	g.step(200, "/v1/access/workspace", `"action":"select","org_id":"`+e.orgA.ID.String()+`"`)
	key := g.issue(kv.NewV4().String(), `["studies:read"]`)
	secret := key["secret"].(string)
	if logs.String() == "" {
		t.Fatal("nothing was logged: the test would prove nothing")
	}
	for name, s := range map[string]string{"proof": g.proof, "proof body": g.proof[4:], "code": code, "secret": secret} {
		if strings.Contains(logs.String(), s) {
			t.Errorf("the log holds the %s", name)
		}
	}
}

// TestAccessKeyHammer: many simultaneous key requests on one transaction make one key.
// With one Idempotency-Key, one answer has the secret and the others replay it; with
// different ones, one succeeds and the others are 409.
func TestAccessKeyHammer(t *testing.T) {
	e, smtp := mustServeMail(t)
	for _, same := range []bool{true, false} {
		g := newAccessAgent(t, e)
		code := g.start(smtp, "a@example.com")
		g.step(200, "/v1/access/verify-email", `"token":"`+code+`"`)
		g.step(200, "/v1/access/workspace", `"action":"select","org_id":"`+e.orgA.ID.String()+`"`)
		idem := kv.NewV4().String()
		const n = 8
		var wg sync.WaitGroup
		results := make(chan response, n)
		for i := 0; i < n; i++ {
			key := idem
			if !same {
				key = kv.NewV4().String()
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, _ := g.post("/v1/access/keys", `{"transaction_id":"`+g.id+`","name":"k","scopes":["studies:read"],"environment":"live","expires_in_days":30}`, "Idempotency-Key", key)
				results <- r
			}()
		}
		wg.Wait()
		close(results)
		secrets, replays, conflicts, keyIDs := 0, 0, 0, map[string]bool{}
		for r := range results {
			var out map[string]any
			r.json(t, &out)
			switch {
			case r.status == 201 && out["secret"] != nil:
				secrets++
				keyIDs[out["key_id"].(string)] = true
			case r.status == 201:
				replays++
				keyIDs[out["key_id"].(string)] = true
			case r.status == 409:
				conflicts++
			default:
				t.Fatalf("%d %s", r.status, r.body)
			}
		}
		if secrets != 1 || len(keyIDs) != 1 || (same && replays != n-1) || (!same && conflicts != n-1) {
			t.Fatalf("same key %v: %d secrets, %d replays, %d conflicts, %d keys", same, secrets, replays, conflicts, len(keyIDs))
		}
	}
}
