package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"interviewd/kv"
)

// The web app's research pages under load: the studies list (its first page, 25
// studies with mode badges) and the transcript page of a 60-message interview, each
// rendered whole by the real server for a signed-in owner, through the session
// authenticator, the app's headers and the access log.

// transcriptMessages is the length of the transcript the app_transcript scenario reads.
const transcriptMessages = 60

// appSessionCookie is the app's session cookie (server/app_surface.go).
const appSessionCookie = "interviewd_session"

// errSkipped is a setup's answer when the scenario cannot run against this target.
var errSkipped = errors.New("skipped")

// appPages is what both app scenarios need from the target, made once.
type appPages struct {
	once      sync.Once
	err       error
	session   string // the session token the app_* requests carry
	interview string // the 60-message interview's id
}

// prepare signs the organisation's owner in and seeds the interview, in-process; a
// remote target needs --app-session and --app-interview.
func (a *appPages) prepare(ctx context.Context, t *target) error {
	a.once.Do(func() {
		switch {
		case t.appSession != "":
			a.session, a.interview = t.appSession, t.appInterview
		case t.db == nil:
			a.err = errSkipped
		default:
			a.session, a.interview, a.err = seedAppPages(ctx, t.db, t.org, t.ownerEmail)
		}
	})
	return a.err
}

// seedAppPages signs email in to org's live data (the code the store hands out is the
// one the email would carry) and makes a live study with one completed interview of
// transcriptMessages messages, as a participant would leave it. It returns the session
// token and the interview's id.
func seedAppPages(ctx context.Context, db *kv.DB, org kv.ID, email string) (session, interview string, err error) {
	code, err := db.RequestSignInCode(ctx, email, "")
	if err != nil {
		return "", "", fmt.Errorf("sign-in code: %w", err)
	}
	start, err := db.SignIn(ctx, kv.SignInInput{Email: email, Code: code.Code, UserAgent: "interviewd-bench", IP: "127.0.0.1"})
	if err != nil {
		return "", "", fmt.Errorf("sign in: %w", err)
	}
	if _, err := db.ChooseWorkspace(ctx, kv.WorkspaceInput{Token: start.Token, OrgID: org, Environment: kv.EnvLive}); err != nil {
		return "", "", fmt.Errorf("choose workspace: %w", err)
	}
	p := kv.Partition{Org: org, Env: kv.EnvLive}
	st, err := db.CreateStudy(ctx, kv.StudyInput{Partition: p, Brief: briefFor(7), Guidance: "Seeded by the load-test suite."})
	if err != nil {
		return "", "", err
	}
	if _, err := db.SetStudyMode(ctx, p, st.ID, kv.ModeLive); err != nil {
		return "", "", err
	}
	if _, err := db.AddCredits(ctx, org, 1); err != nil {
		return "", "", err
	}
	participant := newSession()
	opened, err := db.OpenLink(ctx, st.LinkToken, participant)
	if err != nil {
		return "", "", err
	}
	if opened.Interview == nil {
		return "", "", fmt.Errorf("opening the seeded study's link started no interview (state %s)", opened.State)
	}
	iv := *opened.Interview
	at := iv.StartedAt
	for turn := 0; turn < transcriptMessages/2; turn++ {
		status := kv.InterviewInProgress
		if turn == transcriptMessages/2-1 {
			status = kv.InterviewCompleted
		}
		q := at.Add(time.Duration(turn) * 50 * time.Second)
		msgs := []kv.Message{
			{Speaker: kv.SpeakerInterviewer, Text: fmt.Sprintf("Question %d: tell me about the last time the rota changed at short notice. What happened next, and who decided?", turn+1), At: q},
			{Speaker: kv.SpeakerParticipant, Text: fmt.Sprintf("Answer %d: our ward manager swapped two night shifts on the Friday, so I rang round the bank staff, updated the paper chart and sent a photo to the group chat — it took most of my break & nobody confirmed until Sunday.", turn+1), At: q.Add(35 * time.Second)},
		}
		if iv, err = db.AppendTurn(ctx, p, iv.ID, kv.Turn{Session: participant, ExpectLen: iv.TranscriptLen, Messages: msgs, Status: status}); err != nil {
			return "", "", fmt.Errorf("seed turn %d: %w", turn, err)
		}
	}
	return start.Token, iv.ID.String(), nil
}

// appRequest makes req a signed-in GET of uri. The cookie is replaced, not added:
// fasthttp appends every Cookie header set on a reused request to its cookie list.
func appRequest(req *fasthttp.Request, uri, session string) {
	req.Header.SetMethod(fasthttp.MethodGet)
	req.SetRequestURI(uri)
	req.Header.DelAllCookies()
	req.Header.SetCookie(appSessionCookie, session)
}

// setupAppStudies renders the studies list page.
func setupAppStudies(ctx context.Context, t *target) (workload, error) {
	if err := t.app.prepare(ctx, t); err != nil {
		return workload{}, err
	}
	uri, cookie := t.baseURL+"/app/studies", t.app.session
	return workload{newWorker: func(int) requestFunc {
		return func(req *fasthttp.Request, _ *fasthttp.Response) { appRequest(req, uri, cookie) }
	}}, nil
}

// setupAppTranscript renders the transcript page of the 60-message interview: the
// permalink every interview carries.
func setupAppTranscript(ctx context.Context, t *target) (workload, error) {
	if err := t.app.prepare(ctx, t); err != nil {
		return workload{}, err
	}
	if t.app.interview == "" {
		return workload{}, errors.New("app_transcript: --app-interview names no interview")
	}
	uri, cookie := t.baseURL+"/app/interviews/"+t.app.interview, t.app.session
	return workload{newWorker: func(int) requestFunc {
		return func(req *fasthttp.Request, _ *fasthttp.Response) { appRequest(req, uri, cookie) }
	}}, nil
}
