package server

import (
	"slices"
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"interviewd/kv"
	"interviewd/server/participant"
	"interviewd/server/pipeline"
)

// TestBrokenChunkedBodyIs400: a chunked body whose framing is broken is the client's
// mistake on every surface that reads a body: 400 in that surface's shape, never 500.
func TestBrokenChunkedBodyIs400(t *testing.T) {
	e := mustServe(t)
	st := e.mustStudy(e.orgA.ID, kv.EnvLive, "Chunks")
	p := e.participant(st.LinkToken)
	p.open()
	key := e.keys["a_live"]
	broken := "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nZZZ\r\nabc\r\n0\r\n\r\n"
	cases := []struct {
		name, path, headers string
		jsonRPC             bool
	}{
		{"CreateStudy", "/v1/api/studies", "Authorization: Bearer " + key + "\r\n", false},
		{"CreateStudyIdempotent", "/v1/api/studies", "Authorization: Bearer " + key + "\r\nIdempotency-Key: chunk-1\r\n", false},
		{"Refine", "/v1/api/studies/" + st.ID.String() + ":refine", "Authorization: Bearer " + key + "\r\n", false},
		{"Export", "/v1/api/exports", "Authorization: Bearer " + key + "\r\n", false},
		{"MCP", "/v1/mcp", "Authorization: Bearer " + key + "\r\nAccept: application/json, text/event-stream\r\n", true},
		{"ParticipantMessage", "/i/" + st.LinkToken + "/messages", participant.HeaderSession + ": " + p.session + "\r\n", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := e.rawExchange("POST " + c.path + " HTTP/1.1\r\nHost: x\r\n" + c.headers + broken)
			if resp == nil {
				t.Fatal("no response")
			}
			if resp.StatusCode() != 400 || len(resp.Header.Peek("X-Request-Id")) == 0 || !resp.ConnectionClose() {
				t.Fatalf("status %d (close %v, request id %q): %s", resp.StatusCode(), resp.ConnectionClose(), resp.Header.Peek("X-Request-Id"), resp.Body())
			}
			if c.jsonRPC {
				var out struct {
					JSONRPC string             `json:"jsonrpc"`
					Error   struct{ Code int } `json:"error"`
				}
				if json.Unmarshal(resp.Body(), &out) != nil || out.JSONRPC != "2.0" || out.Error.Code != -32700 {
					t.Fatalf("not a JSON-RPC parse error: %s", resp.Body())
				}
				return
			}
			var out pipeline.ErrorBody
			if json.Unmarshal(resp.Body(), &out) != nil || out.Code != "malformed_body" || out.Detail == "" {
				t.Fatalf("not {detail, code: malformed_body}: %s", resp.Body())
			}
		})
	}
}

// TestUploadFileBadBase64: content that is not base64 is the caller's mistake, named.
func TestUploadFileBadBase64(t *testing.T) {
	e := mustServe(t)
	for _, content := range []string{"aGVsbG8", "!!!", "aGVs bG8=", "aGVsbG8=="} {
		t.Run(content, func(t *testing.T) {
			args, _ := json.Marshal(map[string]string{"filename": "a.txt", "content_base64": content})
			body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"upload_file","arguments":` + string(args) + `}}`
			r := e.do("POST", "/v1/mcp", "a_live", body, "Accept", acceptBoth)
			var out struct {
				Result struct {
					IsError           bool `json:"isError"`
					StructuredContent struct {
						Code   string `json:"code"`
						Detail string `json:"detail"`
					} `json:"structuredContent"`
				} `json:"result"`
			}
			r.json(t, &out)
			sc := out.Result.StructuredContent
			if !out.Result.IsError || sc.Code != "validation_error" || !strings.Contains(sc.Detail, "content_base64") {
				t.Fatalf("%s", r.body)
			}
		})
	}
	t.Run("OK", func(t *testing.T) {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"upload_file","arguments":{"filename":"a.txt","content_base64":"aGVsbG8="}}}`
		r := e.do("POST", "/v1/mcp", "a_live", body, "Accept", acceptBoth)
		if !strings.Contains(string(r.body), `"byte_size":5`) {
			t.Fatalf("%s", r.body)
		}
	})
}

// TestParticipantSessionIsMinted: the server mints sessions. A well-formed session it
// never issued (or issued for another link) is not adopted: opening gets a fresh one,
// and answering with it is 401. A session it issued resumes its own interview.
func TestParticipantSessionIsMinted(t *testing.T) {
	e := mustServe(t)
	brief := plainBrief("Sessions", "Q1?", "Q2?")
	st := e.studyWith(e.orgA.ID, kv.EnvTest, kv.ModeTest, brief)
	other := e.studyWith(e.orgA.ID, kv.EnvTest, kv.ModeTest, brief)
	person := e.linkFor(st, kv.AudiencePerson, nil, "")
	personToken := person[strings.LastIndexByte(person, '/')+1:]
	stranger := e.participant(other.LinkToken)
	stranger.open()

	for _, c := range []struct{ name, token, chosen string }{
		{"GroupMadeUp", st.LinkToken, participant.NewSessionSecret()},
		{"GroupFromAnotherLink", st.LinkToken, stranger.session},
		{"PersonMadeUp", personToken, participant.NewSessionSecret()},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := e.participant(c.token)
			p.session = c.chosen
			out, _ := p.open()
			if out.Session == nil || *out.Session == c.chosen {
				t.Fatalf("the chosen session was adopted: %+v", out)
			}
			if r := e.do("POST", "/i/"+c.token+"/messages", "", `{"text":"hi"}`, participant.HeaderSession, c.chosen); r.status != 401 {
				t.Fatalf("answering with the chosen session: %d %s", r.status, r.body)
			}
			// The minted one works, and resumes the same interview.
			again := e.participant(c.token)
			again.session = *out.Session
			resumed, _ := again.open()
			if resumed.Session == nil || *resumed.Session != *out.Session || len(resumed.Messages) != len(out.Messages) {
				t.Fatalf("the minted session did not resume: %+v", resumed)
			}
			if r := again.say("An answer", ""); r.status != 200 {
				t.Fatalf("answering with the minted session: %d %s", r.status, r.body)
			}
		})
	}
	// A person link's second device gets its own minted session for the same interview.
	t.Run("PersonSecondDevice", func(t *testing.T) {
		a, b := e.participant(personToken), e.participant(personToken)
		a.open()
		b.session = participant.NewSessionSecret()
		chosen := b.session
		b.open()
		if b.session == chosen || b.session == a.session {
			t.Fatal("the second device was not given its own minted session")
		}
		if n := len(e.interviewsOf(st)); n != 3 { // the group link's two, the person link's one
			t.Fatalf("%d interviews, want 3", n)
		}
	})
}

// TestTextInputsRefuseNULAndBadUTF8: one rule on every text input, on every surface.
func TestTextInputsRefuseNULAndBadUTF8(t *testing.T) {
	e := mustServe(t)
	st := e.mustStudy(e.orgA.ID, kv.EnvLive, "Text")
	p := e.participant(st.LinkToken)
	p.open()
	bad := map[string]string{"NUL": `a\u0000b`, "InvalidUTF8": "a\xffb", "Overlong": "a\xc0\xafb"}
	for name, text := range bad {
		wantType := `"type":"string_unicode"`
		if name == "NUL" {
			wantType = `"type":"null_character"`
		}
		t.Run("Participant"+name, func(t *testing.T) {
			r := e.do("POST", "/i/"+st.LinkToken+"/messages", "", `{"text":"`+text+`"}`, p.headers()...)
			if r.status != 422 || !strings.Contains(string(r.body), wantType) {
				t.Fatalf("%d %s", r.status, r.body)
			}
		})
		t.Run("Guidance"+name, func(t *testing.T) {
			r := e.do("POST", "/v1/api/studies", "a_live", `{"guidance":"`+text+`"}`)
			if r.status != 422 || !strings.Contains(string(r.body), wantType) {
				t.Fatalf("%d %s", r.status, r.body)
			}
		})
		t.Run("LinkNote"+name, func(t *testing.T) {
			r := e.do("POST", "/v1/api/studies/"+st.ID.String()+"/participant-links", "a_live", `{"note":"`+text+`"}`)
			if r.status != 422 || !strings.Contains(string(r.body), `"type":"`) {
				t.Fatalf("%d %s", r.status, r.body)
			}
		})
		t.Run("LinkContextKey"+name, func(t *testing.T) {
			r := e.do("POST", "/v1/api/studies/"+st.ID.String()+"/participant-links", "a_live", `{"context":{"`+text+`":"v"}}`)
			if r.status != 422 || !strings.Contains(string(r.body), `"loc":["body","context"`) {
				t.Fatalf("%d %s", r.status, r.body)
			}
		})
		t.Run("MCPPersona"+name, func(t *testing.T) {
			body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"simulate_study","arguments":{"study_id":"` + st.ID.String() + `","persona":"` + text + `"}}}`
			r := e.do("POST", "/v1/mcp", "a_live", body, "Accept", acceptBoth)
			if name == "NUL" {
				if !strings.Contains(string(r.body), `"isError":true`) || !strings.Contains(string(r.body), "validation_error") {
					t.Fatalf("%d %s", r.status, r.body)
				}
				return
			}
			// Invalid UTF-8 anywhere in the message: refused before any decoder can
			// replace the bytes, as a tool result when the fast path took the call.
			if !strings.Contains(string(r.body), "validation_error") && r.status != 400 {
				t.Fatalf("%d %s", r.status, r.body)
			}
		})
	}
	// Nothing of the refused answers was stored.
	for _, iv := range e.interviewsOf(st) {
		conv, err := e.db.FindConversation(t.Context(), st.LinkToken, p.session)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range conv.Transcript {
			if strings.ContainsAny(m.Text, "\x00\ufffd") {
				t.Fatalf("interview %s stored %q", iv.ID, m.Text)
			}
		}
	}
}

// TestTextInputsRefuseLoneSurrogates: a \u escape of half a UTF-16 surrogate pair is
// ASCII on the wire but no character; decoding would store U+FFFD, so it is refused
// like invalid UTF-8, while a whole pair (an emoji) is text like any other.
func TestTextInputsRefuseLoneSurrogates(t *testing.T) {
	e := mustServe(t)
	st := e.mustStudy(e.orgA.ID, kv.EnvLive, "Text")
	p := e.participant(st.LinkToken)
	p.open()
	bad := map[string]string{
		"High":           `a\ud800b`,
		"Low":            `a\udc00b`,
		"HighAtEnd":      `a\uD83D`,
		"HighThenHigh":   `\ud83d\ud83d`,
		"LowThenHigh":    `\ude00\ud83d`,
		"AfterBackslash": `\\\udfff`,
	}
	for name, text := range bad {
		t.Run("Participant"+name, func(t *testing.T) {
			r := e.do("POST", "/i/"+st.LinkToken+"/messages", "", `{"text":"`+text+`"}`, p.headers()...)
			if r.status != 422 || !strings.Contains(string(r.body), `"type":"string_unicode"`) {
				t.Fatalf("%d %s", r.status, r.body)
			}
		})
		t.Run("Guidance"+name, func(t *testing.T) {
			r := e.do("POST", "/v1/api/studies", "a_live", `{"guidance":"`+text+`"}`)
			if r.status != 422 || !strings.Contains(string(r.body), `"type":"string_unicode"`) || !strings.Contains(string(r.body), `"loc":["body","guidance"]`) {
				t.Fatalf("%d %s", r.status, r.body)
			}
		})
		t.Run("LinkContextKey"+name, func(t *testing.T) {
			r := e.do("POST", "/v1/api/studies/"+st.ID.String()+"/participant-links", "a_live", `{"context":{"`+text+`":"v"}}`)
			if r.status != 422 || !strings.Contains(string(r.body), `"type":"string_unicode"`) {
				t.Fatalf("%d %s", r.status, r.body)
			}
		})
	}
	// A whole pair, and an escaped backslash before a "u", are sound text.
	const smile = "\U0001F600"
	r := e.do("POST", "/v1/api/studies/"+st.ID.String()+"/participant-links", "a_live", `{"note":"\ud83d\ude00 \\ud800"}`)
	if r.status != 200 { // the note is not echoed: the stored text is checked on the message below
		t.Fatalf("link note with a pair: %d %s", r.status, r.body)
	}
	r = e.do("POST", "/i/"+st.LinkToken+"/messages", "", `{"text":"\uD83D\uDE00 \\ud800 ok"}`, p.headers()...)
	if r.status != 200 {
		t.Fatalf("message with a pair: %d %s", r.status, r.body)
	}
	conv, err := e.db.FindConversation(t.Context(), st.LinkToken, p.session)
	if err != nil {
		t.Fatal(err)
	}
	var said []string
	for _, m := range conv.Transcript {
		if strings.ContainsRune(m.Text, '\ufffd') {
			t.Fatalf("stored %q", m.Text)
		}
		said = append(said, m.Text)
	}
	if !slices.Contains(said, smile+` \ud800 ok`) {
		t.Fatalf("transcript %q lacks the message with the pair", said)
	}
}
