package access

import (
	"strconv"
	"strings"

	"interviewd/kv"
	"interviewd/server/pipeline"
)

// accessOpenAPIVersion is the account access API's info.version.
const accessOpenAPIVersion = "1.0.0"

// accessFlow is the document's description: the order of the steps, the states and
// what every answer carries, so an agent need not guess.
const accessFlow = `Get an API key for a person without a browser.

1. Make a proof: "jmg_" followed by 32 random bytes in base64url without padding (43 characters). Keep it secret; send it as Authorization: Bearer <proof> on every call of the transaction. Only its SHA-256 is stored; a different proof on a later step is 401 and leaves the transaction as it was.
2. POST /v1/access/transactions {email, client_name}: a 6-digit code is emailed to the person.
3. POST /v1/access/verify-email {transaction_id, token}.
4. When next_action is verify_mfa: POST /v1/access/mfa/verify {transaction_id, method} for a challenge, then {transaction_id, challenge_id, code}.
5. POST /v1/access/workspace {transaction_id, action: list}, then select, accept_invitation or create.
6. POST /v1/access/keys with an Idempotency-Key UUID: the key's secret is in that answer only.

Every answer, refusals included once the proof has opened the transaction, carries transaction_id, state and next_action. States: awaiting_email (next_action verify_email), awaiting_mfa (verify_mfa), awaiting_workspace (select_workspace), awaiting_key (issue_key), completed (none: the key was issued or replaced; replays of that request still answer), failed (none: five wrong codes), expired (none: transactions last 30 minutes). A step called out of order is 409 wrong_step with the next_action that is due; a failed or expired transaction is 410 transaction_failed / transaction_expired: start a new one.

Codes: emailed codes work for the transaction's life, two-step challenges for 10 minutes; five wrong codes in all end the transaction. Transaction starts and code attempts are limited per email address and client address (429 with Retry-After); the answers are the same whether or not the address has an account. API keys and OAuth tokens are refused here; a proof is refused everywhere else.`

// accessOpenAPI generates the account access API's OpenAPI 3.1 document from its
// route table.
func (s *API) accessOpenAPI(table []*accessRoute) pipeline.Schema {
	g := &pipeline.SchemaGen{Components: pipeline.Schema{}}
	errRef := g.Named("AccessError", pipeline.Schema{"type": "object", "required": []any{"detail", "code"},
		"properties": pipeline.Schema{
			"detail":         pipeline.Schema{"type": "string"},
			"code":           pipeline.Schema{"type": "string"},
			"transaction_id": pipeline.Schema{"type": "string", "format": "uuid", "description": "Present once the proof opened the transaction."},
			"state":          pipeline.Schema{"type": "string", "description": "Present once the proof opened the transaction."},
			"next_action":    pipeline.Schema{"type": "string", "description": "Present once the proof opened the transaction: the step due."},
		}})
	item := g.Named("ValidationError", pipeline.Schema{
		"type": "object", "required": []any{"loc", "msg", "type"},
		"properties": pipeline.Schema{
			"loc":  pipeline.Schema{"type": "array", "items": pipeline.Schema{"type": []any{"string", "integer"}}},
			"msg":  pipeline.Schema{"type": "string"},
			"type": pipeline.Schema{"type": "string"},
			"ctx":  pipeline.Schema{"type": "object"},
		}})
	validation := g.Named("AccessValidationError", pipeline.Schema{"type": "object", "required": []any{"detail"},
		"properties": pipeline.Schema{
			"detail":         pipeline.Schema{"type": "array", "items": item},
			"transaction_id": pipeline.Schema{"type": "string", "format": "uuid"},
			"state":          pipeline.Schema{"type": "string"},
			"next_action":    pipeline.Schema{"type": "string"},
		}})
	refusal := func(desc string) pipeline.Schema {
		return pipeline.Schema{"description": desc, "content": pipeline.Schema{"application/json": pipeline.Schema{"schema": errRef}}}
	}
	paths := pipeline.Schema{}
	for _, rt := range table {
		in := g.InputSchema(rt.plan, pipeline.SrcBody)
		accessSchemaFixups(in)
		op := pipeline.Schema{
			"operationId": rt.OperationID,
			"summary":     rt.Summary,
			"description": rt.Description,
			"requestBody": pipeline.Schema{"required": true, "content": pipeline.Schema{"application/json": pipeline.Schema{
				"schema": g.Named(accessComponent(rt.In.Name()), in)}}},
		}
		var params []any
		if rt.PathParam != "" {
			params = append(params, pipeline.Schema{"name": rt.PathParam, "in": "path", "required": true, "schema": pipeline.Schema{"type": "string", "format": "uuid"}})
		}
		if rt.Idempotent {
			params = append(params, pipeline.Schema{"name": "Idempotency-Key", "in": "header", "required": true,
				"description": "A new UUID per request; send the same one to retry: the answer is replayed with secret null.",
				"schema":      pipeline.Schema{"type": "string", "format": "uuid"}})
		}
		if params != nil {
			op["parameters"] = params
		}
		responses := pipeline.Schema{
			strconv.Itoa(rt.Status): pipeline.Schema{"description": rt.Summary, "content": pipeline.Schema{"application/json": pipeline.Schema{
				"schema": g.Named(accessComponent(rt.Out.Name()), g.TypeSchema(rt.Out))}}},
			"401": refusal("Missing or malformed proof, or not this transaction's proof (an unknown transaction reads the same)."),
			"409": refusal("wrong_step: the transaction is waiting for another step (next_action says which)."),
			"410": refusal("transaction_expired or transaction_failed: start a new transaction."),
			"422": pipeline.Schema{"description": "Validation failure, or a wrong code (type invalid_code, ctx.attempts_left).",
				"content": pipeline.Schema{"application/json": pipeline.Schema{"schema": validation}}},
			"429": refusal("Too many attempts; see Retry-After."),
		}
		if rt.Path == "/v1/access/transactions" {
			delete(responses, "409")
			delete(responses, "410")
			responses["401"] = refusal("Missing or malformed proof.")
		}
		if rt.Idempotent {
			responses["409"] = refusal("wrong_step: the transaction is waiting for another step, or has issued its key (a further key needs a new transaction); idempotency_key_reused: this Idempotency-Key was sent with another request.")
		}
		for status, desc := range rt.Refusals {
			responses[strconv.Itoa(status)] = refusal(desc)
		}
		op["responses"] = responses
		item, _ := paths[rt.Path].(pipeline.Schema)
		if item == nil {
			item = pipeline.Schema{}
			paths[rt.Path] = item
		}
		item[strings.ToLower(rt.Method)] = op
	}
	return pipeline.Schema{
		"openapi": "3.1.0",
		"info": pipeline.Schema{
			"title":       "interviewd account access API",
			"version":     accessOpenAPIVersion,
			"description": accessFlow,
		},
		"servers":  []any{pipeline.Schema{"url": s.BaseURL}},
		"security": []any{pipeline.Schema{"AccessProof": []any{}}},
		"paths":    paths,
		"components": pipeline.Schema{
			"securitySchemes": pipeline.Schema{"AccessProof": pipeline.Schema{"type": "http", "scheme": "bearer",
				"description": "The transaction's proof: jmg_ followed by 32 random bytes in base64url (43 characters), made by the caller."}},
			"schemas": g.Components,
		},
	}
}

// accessComponent names a wire type's component: accessKeyIn → AccessKeyIn.
func accessComponent(goName string) string {
	return strings.ToUpper(goName[:1]) + goName[1:]
}

// accessSchemaFixups adds what struct tags cannot say: the scope and expiry choices
// of a key request.
func accessSchemaFixups(in pipeline.Schema) {
	props, _ := in["properties"].(pipeline.Schema)
	if sc, ok := props["scopes"].(pipeline.Schema); ok {
		enum := make([]any, len(kv.AllScopes))
		for i, s := range kv.AllScopes {
			enum[i] = s
		}
		sc["items"] = pipeline.Schema{"type": "string", "enum": enum}
		sc["minItems"] = 1
	}
	if exp, ok := props["expires_in_days"].(pipeline.Schema); ok {
		enum := []any{}
		for _, d := range kv.KeyExpiryDays {
			enum = append(enum, d)
		}
		exp["enum"] = append(enum, nil)
	}
}
