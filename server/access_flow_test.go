package server

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"interviewd/kv"
	"interviewd/mail/smtptest"
	"interviewd/sms"
	"interviewd/sms/smstest"
)

// accessAgent is an agent going through the account access API with its own proof.
type accessAgent struct {
	t     *testing.T
	e     *testEnv
	proof string
	id    string // the transaction id, once started
}

func newAccessProof() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return "jmg_" + base64.RawURLEncoding.EncodeToString(b[:])
}

func newAccessAgent(t *testing.T, e *testEnv) *accessAgent {
	return &accessAgent{t: t, e: e, proof: newAccessProof()}
}

// post sends body to path with the agent's proof; headers are name, value pairs.
func (g *accessAgent) post(path, body string, headers ...string) (response, map[string]any) {
	g.t.Helper()
	r := g.e.do("POST", path, "Bearer "+g.proof, body, headers...)
	var out map[string]any
	if len(r.body) > 0 {
		r.json(g.t, &out)
	}
	return r, out
}

// must posts and fails the test unless the status is want.
func (g *accessAgent) must(want int, path, body string, headers ...string) map[string]any {
	g.t.Helper()
	r, out := g.post(path, body, headers...)
	if r.status != want {
		g.t.Fatalf("POST %s: %d, want %d: %s", path, r.status, want, r.body)
	}
	if _, ok := out["transaction_id"]; !ok {
		g.t.Fatalf("POST %s: no transaction_id: %s", path, r.body)
	}
	return out
}

// start begins a transaction for email and returns the emailed code.
func (g *accessAgent) start(smtp *smtptest.Server, email string) string {
	g.t.Helper()
	out := g.must(201, "/v1/access/transactions", `{"email":"`+email+`","client_name":"Test agent"}`)
	if out["state"] != "awaiting_email" || out["next_action"] != "verify_email" || out["client_name"] != "Test agent" || out["expires_at"] == nil {
		g.t.Fatalf("start: %v", out)
	}
	g.id = out["transaction_id"].(string)
	msg := smtp.Next(g.t, email)
	if !strings.Contains(msg.Text, `"Test agent"`) {
		g.t.Fatalf("the message does not name the client: %s", msg.Text)
	}
	return msg.Code()
}

// step posts a step with the transaction id and the fields of extra (a JSON object's
// members, without braces).
func (g *accessAgent) step(want int, path, extra string, headers ...string) map[string]any {
	g.t.Helper()
	body := `{"transaction_id":"` + g.id + `"`
	if extra != "" {
		body += "," + extra
	}
	return g.must(want, path, body+"}", headers...)
}

func wantNext(t *testing.T, out map[string]any, state, next string) {
	t.Helper()
	if out["state"] != state || out["next_action"] != next {
		t.Fatalf("state %v next_action %v, want %s %s: %v", out["state"], out["next_action"], state, next, out)
	}
}

// issue issues a key and returns its answer.
func (g *accessAgent) issue(idem, scopes string) map[string]any {
	g.t.Helper()
	return g.step(201, "/v1/access/keys", `"name":"agent key","scopes":`+scopes+`,"environment":"live","expires_in_days":90`, "Idempotency-Key", idem)
}

// useKey checks that secret works on the REST API and over MCP, in org.
func useKey(t *testing.T, e *testEnv, secret, orgName string) {
	t.Helper()
	r := e.do("GET", "/v1/api/me", secret, "")
	var me map[string]any
	r.json(t, &me)
	if r.status != 200 || me["org_name"] != orgName || me["credential_type"] != "api_key" {
		t.Fatalf("/v1/api/me: %d %s", r.status, r.body)
	}
	call := decodeRPC(t, e.do("POST", "/v1/mcp", secret, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"whoami"}}`,
		"Accept", acceptBoth, "Mcp-Protocol-Version", "2025-06-18"))
	if sc, _ := call.Result["structuredContent"].(map[string]any); call.Error != nil || sc["org_name"] != orgName {
		t.Fatalf("MCP whoami: %+v", call)
	}
}

// TestAccessNewPersonEndToEnd: a new address gets its account when the code is read
// back, creates a starter workspace and a key that works on REST and MCP; a replay
// returns the key without its secret; a second transaction replaces the secret and the
// old one stops working at once.
func TestAccessNewPersonEndToEnd(t *testing.T) {
	e, smtp := mustServeMail(t)
	g := newAccessAgent(t, e)
	code := g.start(smtp, "new.person@example.com")
	if _, err := e.db.FindUserByEmail(context.Background(), "new.person@example.com"); kv.ErrorCode(err) != kv.ENOTFOUND {
		t.Fatalf("an account exists before the code was read back: %v", err)
	}
	out := g.step(200, "/v1/access/verify-email", `"token":"`+code+`"`)
	wantNext(t, out, "awaiting_workspace", "select_workspace")
	out = g.step(200, "/v1/access/workspace", `"action":"list"`)
	if ws, _ := out["workspaces"].([]any); ws == nil || len(ws) != 0 {
		t.Fatalf("a new person's workspaces: %v", out)
	}
	out = g.step(200, "/v1/access/workspace", `"action":"create","name":"Starter research"`)
	wantNext(t, out, "awaiting_key", "issue_key")
	ws := out["workspace"].(map[string]any)
	if ws["role"] != "owner" || ws["name"] != "Starter research" {
		t.Fatalf("created workspace %v", ws)
	}
	idem := kv.NewV4().String()
	key := g.issue(idem, `["studies:read","studies:write","agent:run"]`)
	wantNext(t, key, "completed", "none")
	secret, _ := key["secret"].(string)
	if !strings.HasPrefix(secret, "jsk_live_") || key["environment"] != "live" || key["expires_at"] == nil {
		t.Fatalf("key %v", key)
	}
	if got := key["scopes"].([]any); len(got) != 3 || got[0] != "agent:run" {
		t.Fatalf("scopes %v", got)
	}
	useKey(t, e, secret, "Starter research")

	// The same request again: the same key, no secret, nothing new.
	r, again := g.post("/v1/access/keys", `{"transaction_id":"`+g.id+`","name":"agent key","scopes":["studies:read","studies:write","agent:run"],"environment":"live","expires_in_days":90}`,
		"Idempotency-Key", idem)
	if r.status != 201 || again["secret"] != nil || again["key_id"] != key["key_id"] || r.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay: %d %s", r.status, r.body)
	}
	if _, ok := again["secret"]; !ok {
		t.Fatal("a replay leaves secret out instead of null")
	}
	orgID, _ := kv.ParseID(ws["org_id"].(string))
	keys, _ := e.db.FindKeys(context.Background(), orgID)
	if len(keys) != 1 {
		t.Fatalf("%d keys after a replay", len(keys))
	}

	// A new transaction replaces the secret.
	g2 := newAccessAgent(t, e)
	code = g2.start(smtp, "new.person@example.com")
	wantNext(t, g2.step(200, "/v1/access/verify-email", `"token":"`+code+`"`), "awaiting_workspace", "select_workspace")
	wantNext(t, g2.step(200, "/v1/access/workspace", `"action":"select","org_id":"`+ws["org_id"].(string)+`"`), "awaiting_key", "issue_key")
	rep := g2.step(200, "/v1/access/keys/"+key["key_id"].(string)+"/replace", "", "Idempotency-Key", kv.NewV4().String())
	newSecret, _ := rep["secret"].(string)
	if newSecret == "" || newSecret == secret || rep["key_id"] != key["key_id"] || rep["name"] != "agent key" || rep["expires_at"] != key["expires_at"] {
		t.Fatalf("replace: %v", rep)
	}
	if r := e.do("GET", "/v1/api/me", secret, ""); r.status != 401 {
		t.Fatalf("the old secret after replace: %d", r.status)
	}
	useKey(t, e, newSecret, "Starter research")
}

// mustAccessTOTP turns an authenticator on for email's account and returns its secret.
func mustAccessTOTP(t *testing.T, e *testEnv, email string) string {
	t.Helper()
	ctx := context.Background()
	sess := e.mustAppSessionDue(email)
	setup, err := e.db.BeginTOTP(ctx, sess.token)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(setup.URL)
	secret := u.Query().Get("secret")
	code, err := totp.GenerateCode(secret, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.ConfirmTOTP(ctx, sess.token, code); err != nil {
		t.Fatal(err)
	}
	return secret
}

// TestAccessExistingPersonWithTOTP: a person with an authenticator must pass it
// before choosing a workspace; the key belongs to them in their organisation.
func TestAccessExistingPersonWithTOTP(t *testing.T) {
	e, smtp := mustServeMail(t)
	secret := mustAccessTOTP(t, e, "a@example.com")
	g := newAccessAgent(t, e)
	code := g.start(smtp, "a@example.com")
	out := g.step(200, "/v1/access/verify-email", `"token":"`+code+`"`)
	wantNext(t, out, "awaiting_mfa", "verify_mfa")
	// Not email: org A does not accept codes by email as a second step, and the
	// transaction's first step already came from the mailbox.
	if m := out["mfa_methods"].([]any); len(m) != 1 || m[0] != "totp" {
		t.Fatalf("methods %v", m)
	}
	// The workspace step is not open yet: 409 naming the step due.
	r, refused := g.post("/v1/access/workspace", `{"transaction_id":"`+g.id+`","action":"list"}`)
	if r.status != 409 || refused["code"] != "wrong_step" || refused["next_action"] != "verify_mfa" {
		t.Fatalf("workspace before two-step: %d %s", r.status, r.body)
	}
	// sms is not offered without a provider: 422 naming the methods that are.
	r, refused = g.post("/v1/access/mfa/verify", `{"transaction_id":"`+g.id+`","method":"sms"}`)
	if r.status != 422 || !strings.Contains(string(r.body), "can use: totp.") || refused["next_action"] != "verify_mfa" {
		t.Fatalf("sms without a provider: %d %s", r.status, r.body)
	}
	ch := g.step(200, "/v1/access/mfa/verify", `"method":"totp"`)
	// The code of the next step: the one of this step was spent turning TOTP on.
	totpCode, _ := totp.GenerateCode(secret, time.Now().Add(30*time.Second))
	out = g.step(200, "/v1/access/mfa/verify", `"challenge_id":"`+ch["challenge_id"].(string)+`","code":"`+totpCode+`"`)
	wantNext(t, out, "awaiting_workspace", "select_workspace")
	out = g.step(200, "/v1/access/workspace", `"action":"list"`)
	list := out["workspaces"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["org_id"] != e.orgA.ID.String() {
		t.Fatalf("workspaces %v", out)
	}
	wantNext(t, g.step(200, "/v1/access/workspace", `"action":"select","org_id":"`+e.orgA.ID.String()+`"`), "awaiting_key", "issue_key")
	key := g.issue(kv.NewV4().String(), `["export:read"]`)
	useKey(t, e, key["secret"].(string), "Org A")
}

// TestAccessRequireMFAWorkspace: a person without an authenticator in an organisation
// that requires two-step passes it by email (and by text message when a provider is
// configured and they have a number) before the key.
func TestAccessRequireMFAWorkspace(t *testing.T) {
	fake := smstest.Start(t)
	sender, err := sms.New(fake.URL)
	if err != nil {
		t.Fatal(err)
	}
	e, smtp := mustServeMail(t, withSMS(sender))
	ctx := context.Background()
	owner, _ := e.db.FindUserByEmail(ctx, "a@example.com")
	if _, err := e.db.SetRequireMFA(ctx, kv.RequireMFAInput{OrgID: e.orgA.ID, Actor: owner.ID, On: true}); err != nil {
		t.Fatal(err)
	}
	m, err := e.db.AddMember(ctx, e.orgA.ID, "member@example.com", kv.RoleMember)
	if err != nil {
		t.Fatal(err)
	}

	// A code by email passes only where the organisation accepts it: the mailbox
	// already gave the first step.
	t.Run("Refused_emailNotAccepted", func(t *testing.T) {
		g := newAccessAgent(t, e)
		code := g.start(smtp, "member@example.com")
		out := g.step(200, "/v1/access/verify-email", `"token":"`+code+`"`)
		wantNext(t, out, "awaiting_mfa", "verify_mfa")
		if ms, ok := out["mfa_methods"]; ok {
			t.Fatalf("methods offered with no second step the organisation accepts: %v", ms)
		}
		r, refused := g.post("/v1/access/mfa/verify", `{"transaction_id":"`+g.id+`","method":"email"}`)
		if r.status != 422 || !strings.Contains(string(r.body), "set up an authenticator app") || refused["next_action"] != "verify_mfa" {
			t.Fatalf("email challenge, not accepted: %d %s", r.status, r.body)
		}
	})
	if _, err := e.db.SetTwoStepEmail(ctx, kv.TwoStepEmailInput{OrgID: e.orgA.ID, Actor: owner.ID, On: true}); err != nil {
		t.Fatal(err)
	}

	t.Run("OK_email", func(t *testing.T) {
		g := newAccessAgent(t, e)
		code := g.start(smtp, "member@example.com")
		out := g.step(200, "/v1/access/verify-email", `"token":"`+code+`"`)
		wantNext(t, out, "awaiting_mfa", "verify_mfa")
		if ms := out["mfa_methods"].([]any); len(ms) != 1 || ms[0] != "email" {
			t.Fatalf("methods without a phone: %v", ms)
		}
		ch := g.step(200, "/v1/access/mfa/verify", `"method":"email"`)
		if ch["method"] != "email" || ch["challenge_expires_at"] == nil {
			t.Fatalf("challenge %v", ch)
		}
		mfa := smtp.Next(t, "member@example.com").Code()
		wantNext(t, g.step(200, "/v1/access/mfa/verify", `"challenge_id":"`+ch["challenge_id"].(string)+`","code":"`+mfa+`"`),
			"awaiting_workspace", "select_workspace")
		wantNext(t, g.step(200, "/v1/access/workspace", `"action":"select","org_id":"`+e.orgA.ID.String()+`"`), "awaiting_key", "issue_key")
		// A member cannot hold export:read.
		r, refused := g.post("/v1/access/keys", `{"transaction_id":"`+g.id+`","name":"k","scopes":["export:read"],"environment":"live","expires_in_days":null}`,
			"Idempotency-Key", kv.NewV4().String())
		if r.status != 403 || refused["code"] != "role_forbids_scope" || refused["next_action"] != "issue_key" {
			t.Fatalf("member asking for export:read: %d %s", r.status, r.body)
		}
		key := g.step(201, "/v1/access/keys", `"name":"k","scopes":["studies:read"],"environment":"test","expires_in_days":null`, "Idempotency-Key", kv.NewV4().String())
		if key["expires_at"] != nil || !strings.HasPrefix(key["secret"].(string), "jsk_test_") {
			t.Fatalf("key %v", key)
		}
		useKey(t, e, key["secret"].(string), "Org A")
	})

	t.Run("OK_sms", func(t *testing.T) {
		if _, err := e.db.SetUserPhone(ctx, m.ID, "+447700900123"); err != nil {
			t.Fatal(err)
		}
		g := newAccessAgent(t, e)
		code := g.start(smtp, "member@example.com")
		out := g.step(200, "/v1/access/verify-email", `"token":"`+code+`"`)
		if ms := out["mfa_methods"].([]any); len(ms) != 2 || ms[0] != "sms" {
			t.Fatalf("methods with a phone and a provider: %v", ms)
		}
		ch := g.step(200, "/v1/access/mfa/verify", `"method":"sms"`)
		msg := fake.Next(t, "+447700900123")
		wantNext(t, g.step(200, "/v1/access/mfa/verify", `"challenge_id":"`+ch["challenge_id"].(string)+`","code":"`+msg.Code()+`"`),
			"awaiting_workspace", "select_workspace")
	})
}

// TestAccessAcceptInvitationRequiringMFA: a workspace that requires two-step, chosen by a
// person who had no reason to pass it before (an invitation accepted during the
// transaction), sends the transaction back to verify_mfa.
func TestAccessAcceptInvitationRequiringMFA(t *testing.T) {
	e, smtp := mustServeMail(t)
	ctx := context.Background()
	owner, _ := e.db.FindUserByEmail(ctx, "b@example.com")
	if _, err := e.db.SetRequireMFA(ctx, kv.RequireMFAInput{OrgID: e.orgB.ID, Actor: owner.ID, On: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.SetTwoStepEmail(ctx, kv.TwoStepEmailInput{OrgID: e.orgB.ID, Actor: owner.ID, On: true}); err != nil {
		t.Fatal(err)
	}
	inv, _, err := e.db.CreateInvitation(ctx, kv.InvitationInput{OrgID: e.orgB.ID, Actor: owner.ID, Email: "invitee@example.com", Role: kv.RoleAdmin})
	if err != nil {
		t.Fatal(err)
	}
	g := newAccessAgent(t, e)
	code := g.start(smtp, "invitee@example.com")
	wantNext(t, g.step(200, "/v1/access/verify-email", `"token":"`+code+`"`), "awaiting_workspace", "select_workspace")
	out := g.step(200, "/v1/access/workspace", `"action":"list"`)
	invs := out["invitations"].([]any)
	if len(invs) != 1 || invs[0].(map[string]any)["invitation_id"] != inv.ID.String() || invs[0].(map[string]any)["org_name"] != "Org B" {
		t.Fatalf("invitations %v", out)
	}
	// Someone else's invitation, or one that does not exist, is 404.
	if r, _ := g.post("/v1/access/workspace", `{"transaction_id":"`+g.id+`","action":"accept_invitation","invitation_id":"`+kv.NewV4().String()+`"}`); r.status != 404 {
		t.Fatalf("unknown invitation: %d %s", r.status, r.body)
	}
	out = g.step(200, "/v1/access/workspace", `"action":"accept_invitation","invitation_id":"`+inv.ID.String()+`"`)
	wantNext(t, out, "awaiting_mfa", "verify_mfa")
	if ws := out["workspace"].(map[string]any); ws["role"] != "admin" || ws["require_mfa"] != true {
		t.Fatalf("workspace %v", ws)
	}
	r, refused := g.post("/v1/access/keys", `{"transaction_id":"`+g.id+`","name":"k","scopes":["studies:read"],"environment":"live","expires_in_days":30}`,
		"Idempotency-Key", kv.NewV4().String())
	if r.status != 409 || refused["next_action"] != "verify_mfa" {
		t.Fatalf("a key before two-step: %d %s", r.status, r.body)
	}
	ch := g.step(200, "/v1/access/mfa/verify", `"method":"email"`)
	mfa := smtp.Next(t, "invitee@example.com").Code()
	wantNext(t, g.step(200, "/v1/access/mfa/verify", `"challenge_id":"`+ch["challenge_id"].(string)+`","code":"`+mfa+`"`), "awaiting_key", "issue_key")
	key := g.issue(kv.NewV4().String(), `["studies:golive","export:read"]`)
	useKey(t, e, key["secret"].(string), "Org B")
}
