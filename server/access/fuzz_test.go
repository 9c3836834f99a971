package access

import (
	"reflect"
	"testing"
	"unicode/utf8"

	"interviewd/kv"
	"interviewd/server/pipeline"
)

// FuzzAccessDecoders feeds every access step's decoder the same bodies: none may
// panic, and a body one accepts holds what its validation promises.
func FuzzAccessDecoders(f *testing.F) {
	id := kv.NewV4().String()
	for _, seed := range []string{
		`{"email":"a@example.com","client_name":"agent"}`,
		`{"transaction_id":"` + id + `","token":"123 456"}`,
		`{"transaction_id":"` + id + `","method":"totp"}`,
		`{"transaction_id":"` + id + `","challenge_id":"` + id + `","code":"123456"}`,
		`{"transaction_id":"` + id + `","action":"select","org_id":"` + id + `"}`,
		`{"transaction_id":"` + id + `","action":"create","name":"W"}`,
		`{"transaction_id":"` + id + `","name":"k","scopes":["studies:read"],"environment":"live","expires_in_days":null}`,
		`{"transaction_id":"` + id + `","name":"k","scopes":["studies:read"],"environment":"live","expires_in_days":1e2}`,
		`{"transaction_id":null}`, `[]`, `{"a":"\ud800"}`, "{\"token\":\"\x00\"}", ``,
	} {
		f.Add([]byte(seed))
	}
	table := (&API{}).Routes()
	for _, rt := range table {
		rt.plan = pipeline.PlanInput(rt.In)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, rt := range table {
			in := reflect.New(rt.In).Interface()
			if err := rt.plan.BindArgs(in, body); err != nil {
				if ae := pipeline.ToAPIError(err); ae.Status != 422 || len(ae.Fields) == 0 {
					t.Fatalf("%s: refusal %d %+v", rt.OperationID, ae.Status, ae)
				}
				continue
			}
			switch v := in.(type) {
			case *accessMFAIn:
				request, submit := v.Method != "", v.ChallengeID != nil && v.Code != ""
				if request == submit || (request && v.ChallengeID != nil) {
					t.Fatalf("mfa body not exactly one form accepted: %+v", v)
				}
			case *accessWorkspaceIn:
				ok := map[string]bool{"list": v.OrgID == nil && v.InvitationID == nil && v.Name == "",
					"select": v.OrgID != nil, "accept_invitation": v.InvitationID != nil, "create": v.Name != ""}
				if !ok[v.Action] {
					t.Fatalf("workspace body accepted: %+v", v)
				}
			case *accessKeyIn:
				if n := utf8.RuneCountInString(v.Name); (v.Environment != "test" && v.Environment != "live") || n == 0 || n > 100 {
					t.Fatalf("key body accepted: %+v", v)
				}
			}
		}
	})
}
