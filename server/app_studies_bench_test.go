package server

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"interviewd/kv"
	"interviewd/server/app"
)

// benchAppSession signs the organisation's owner (b@example.com) in to live data.
func benchAppSession(b *testing.B, db *kv.DB, org kv.ID) string {
	b.Helper()
	ctx := context.Background()
	code, err := db.RequestSignInCode(ctx, "b@example.com", "")
	if err != nil {
		b.Fatal(err)
	}
	start, err := db.SignIn(ctx, kv.SignInInput{Email: "b@example.com", Code: code.Code})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := db.ChooseWorkspace(ctx, kv.WorkspaceInput{Token: start.Token, OrgID: org, Environment: kv.EnvLive}); err != nil {
		b.Fatal(err)
	}
	return start.Token
}

// benchInterview makes a completed live interview with n messages of study st.
func benchInterview(b *testing.B, db *kv.DB, st kv.Study, n int) kv.ID {
	b.Helper()
	ctx := context.Background()
	p := st.Partition()
	if _, err := db.SetStudyMode(ctx, p, st.ID, kv.ModeLive); err != nil {
		b.Fatal(err)
	}
	if _, err := db.AddCredits(ctx, p.Org, 1); err != nil {
		b.Fatal(err)
	}
	session := "bench-participant-session-0123456789abcdef0123"
	opened, err := db.OpenLink(ctx, st.LinkToken, session)
	if err != nil || opened.Interview == nil {
		b.Fatalf("open: %+v %v", opened, err)
	}
	iv := *opened.Interview
	for turn := 0; turn < n/2; turn++ {
		at := iv.StartedAt.Add(time.Duration(turn) * 50 * time.Second)
		status := kv.InterviewInProgress
		if turn == n/2-1 {
			status = kv.InterviewCompleted
		}
		msgs := []kv.Message{
			{Speaker: kv.SpeakerInterviewer, Text: fmt.Sprintf("Question %d: tell me about the last time the rota changed at short notice. What happened next?", turn+1), At: at},
			{Speaker: kv.SpeakerParticipant, Text: fmt.Sprintf("Answer %d: the ward manager swapped two night shifts, so I rang round the bank staff & updated the <paper> chart.", turn+1), At: at.Add(35 * time.Second)},
		}
		if iv, err = db.AppendTurn(ctx, p, iv.ID, kv.Turn{Session: session, ExpectLen: iv.TranscriptLen, Messages: msgs, Status: status}); err != nil {
			b.Fatal(err)
		}
	}
	return iv.ID
}

func benchAppRequest(b *testing.B, h fasthttp.RequestHandler, session, uri string) {
	var c fasthttp.RequestCtx
	c.Request.Header.SetMethod("GET")
	c.Request.SetRequestURI(uri)
	c.Request.Header.SetCookie(app.SessionCookie, session)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.Response.Reset()
		h(&c)
		if c.Response.StatusCode() != 200 {
			b.Fatalf("status %d %s", c.Response.StatusCode(), c.Response.Body())
		}
	}
}

// BenchmarkAppStudiesPage renders the studies list page (25 studies) for a signed-in
// owner, through the app surface with the access log on.
func BenchmarkAppStudiesPage(b *testing.B) {
	srv, _, studies := benchServer(b, 60)
	session := benchAppSession(b, srv.DB, studies[0].OrgID)
	benchAppRequest(b, srv.Handler(), session, "/app/studies")
}

// BenchmarkAppTranscriptPage renders the transcript page of a 60-message interview.
func BenchmarkAppTranscriptPage(b *testing.B) {
	srv, _, studies := benchServer(b, 3)
	session := benchAppSession(b, srv.DB, studies[0].OrgID)
	iv := benchInterview(b, srv.DB, studies[1], 60)
	benchAppRequest(b, srv.Handler(), session, "/app/interviews/"+iv.String())
}
