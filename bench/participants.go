package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/valyala/fasthttp"
)

// The participants scenario: every worker is a participant going through whole
// interviews over the public participant API (POST /i/{token}/session, then POST
// /i/{token}/messages until the interview completes, then a new interview), with the
// server's own interviewer. Afterwards every interview is reopened with its session and
// the stored transcript must equal, message for message and in order, what the
// participant was shown: nothing lost, nothing reordered.

// maxParticipantLinks bounds the studies whose invite links participants spread over.
const maxParticipantLinks = 20

// participantConns is the scenario's concurrency: --participants, else --conns.
func participantConns(o options) int {
	if o.Participants > 0 {
		return o.Participants
	}
	return o.Conns
}

// shownMessage is one message as the participant API showed it.
type shownMessage struct {
	Speaker string `json:"speaker"`
	Text    string `json:"text"`
	At      string `json:"at"`
}

// participantAnswer is the body of both participant API answers.
type participantAnswer struct {
	State    string         `json:"state"` // session answers only
	Session  *string        `json:"session"`
	Status   string         `json:"status"`
	Messages []shownMessage `json:"messages"`
}

// benchInterview is one interview as its participant lived it.
type benchInterview struct {
	token    string
	session  string
	shown    []shownMessage
	sent     int  // requests sent (the first opens the session)
	prepared bool // a request is filled and not yet known to be sent
	done     bool // the server said completed (or failed)
	broken   bool // a request failed: what the server kept is unknown, so it is not checked
}

// participantsLoad is one run of the scenario: its links and, until verify, every
// interview its participants went through.
type participantsLoad struct {
	t      *target
	tokens []string
	mu     sync.Mutex
	people []*benchParticipant
	sealed bool // verified: later workers (the ceiling's) keep nothing
	// completed counts recorded interviews the server said were completed.
	completed atomic.Int64
}

// benchParticipant is one worker: a participant taking one interview after another.
type benchParticipant struct {
	load       *participantsLoad
	worker     int
	record     bool
	interviews []*benchInterview
	cur        *benchInterview
	answers    int
	ans        participantAnswer // reused decoding target
}

func setupParticipants(ctx context.Context, t *target) (workload, error) {
	l, err := newParticipantsLoad(ctx, t)
	if err != nil {
		return workload{}, err
	}
	return l.workload(), nil
}

// newParticipantsLoad reads the invite links of up to maxParticipantLinks of the
// target's studies. It returns an error when there are none or a link cannot be read.
func newParticipantsLoad(ctx context.Context, t *target) (*participantsLoad, error) {
	if len(t.studyIDs) == 0 {
		return nil, errors.New("participants: the target has no studies")
	}
	l := &participantsLoad{t: t}
	for _, id := range t.studyIDs[:min(len(t.studyIDs), maxParticipantLinks)] {
		token, err := inviteToken(ctx, t, id)
		if err != nil {
			return nil, fmt.Errorf("participants: %w", err)
		}
		l.tokens = append(l.tokens, token)
	}
	return l, nil
}

// workload runs the participants; the smoke check (and the ceiling's sample) is a
// session opened and one answer.
func (l *participantsLoad) workload() workload {
	return workload{newWorker: l.newWorker, sample: 2, verify: l.verify,
		enough: func() bool { return l.completed.Load() > 0 }}
}

// inviteToken returns the token of a study's invite link, read through the API. It
// returns an error for a failed request or an answer without a link.
func inviteToken(ctx context.Context, t *target, study string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	resp, err := apiGet(t, "/v1/api/studies/"+study+"/interview-link")
	if err != nil {
		return "", err
	}
	defer fasthttp.ReleaseResponse(resp)
	var link struct {
		URL string `json:"url"`
	}
	if err := json.Unmarshal(resp.Body(), &link); err != nil || resp.StatusCode() != fasthttp.StatusOK {
		return "", fmt.Errorf("invite link of study %s: status %d: %.200s", study, resp.StatusCode(), resp.Body())
	}
	i := strings.LastIndex(link.URL, "/i/")
	if i < 0 {
		return "", fmt.Errorf("invite link of study %s: %q has no /i/ token", study, link.URL)
	}
	return link.URL[i+len("/i/"):], nil
}

func (l *participantsLoad) newWorker(worker int) requestFunc {
	p := &benchParticipant{load: l, worker: worker, record: !l.sealed}
	if p.record {
		l.mu.Lock()
		l.people = append(l.people, p)
		l.mu.Unlock()
	}
	return p.next
}

// newSession returns a fresh session secret to open an interview with. The server may
// answer with a session of its own, which the participant then uses (see read).
func newSession() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// next reads the answer to the participant's previous request and fills its next one:
// opening a new interview when the last one ended (or broke), else the next answer.
// A request counts as sent once next is called again (the driver calls it after every
// request, and once more at the end with a request it never sends).
func (p *benchParticipant) next(req *fasthttp.Request, last *fasthttp.Response) {
	if iv := p.cur; iv != nil && iv.prepared {
		iv.prepared = false
		iv.sent++
		if last == nil {
			iv.broken = true
		} else {
			p.read(iv, last)
		}
	}
	if p.cur == nil || p.cur.done || p.cur.broken {
		n := len(p.interviews)
		p.cur = &benchInterview{token: p.load.tokens[(p.worker+n)%len(p.load.tokens)], session: newSession()}
		if p.record {
			p.interviews = append(p.interviews, p.cur)
		}
	}
	iv := p.cur
	req.Header.SetMethod(fasthttp.MethodPost)
	req.Header.Set("X-Interview-Session", iv.session)
	req.Header.SetContentType("application/json")
	if iv.sent == 0 {
		req.SetRequestURI(p.load.t.baseURL + "/i/" + iv.token + "/session")
		req.SetBodyString("{}")
	} else {
		p.answers++
		req.SetRequestURI(p.load.t.baseURL + "/i/" + iv.token + "/messages")
		req.SetBodyString(fmt.Sprintf(`{"text":"Answer %d from participant %d: we keep the rota on paper and it changes every week."}`, p.answers, p.worker))
	}
	iv.prepared = true
}

// read takes in one answer. Against the ceiling the answer is always the same message
// turn (no state, status in_progress), so a participant simply keeps answering.
func (p *benchParticipant) read(iv *benchInterview, resp *fasthttp.Response) {
	if resp.StatusCode() != fasthttp.StatusOK {
		iv.broken = true
		return
	}
	p.ans = participantAnswer{Messages: p.ans.Messages[:0]}
	if err := json.Unmarshal(resp.Body(), &p.ans); err != nil || (p.ans.State != "" && p.ans.State != "open") {
		iv.broken = true
		return
	}
	if p.ans.Session != nil && *p.ans.Session != "" {
		iv.session = *p.ans.Session // the server issues the session: keep what it says
	}
	if p.record {
		iv.shown = append(iv.shown, p.ans.Messages...)
	}
	iv.done = p.ans.Status == "completed" || p.ans.Status == "failed"
	if p.record && p.ans.Status == "completed" {
		p.load.completed.Add(1)
	}
}

// verify reopens every interview with its session and compares the stored transcript
// with what the participant was shown. It returns the counts: interviews checked and
// completed, messages shown, messages lost (shown but not kept, or kept but never
// shown), interviews whose messages were reordered, interviews not checked because a
// request failed. It returns an error when an interview cannot be reopened.
func (l *participantsLoad) verify(ctx context.Context) ([]figure, error) {
	l.mu.Lock()
	l.sealed = true
	var all []*benchInterview
	for _, p := range l.people {
		for _, iv := range p.interviews {
			if iv.sent > 0 {
				all = append(all, iv)
			}
		}
	}
	l.mu.Unlock()
	var (
		mu                                         sync.Mutex
		checked, completed, shown, lost, reordered int
		broken                                     int
		firstErr                                   error
		wg                                         sync.WaitGroup
	)
	work := make(chan *benchInterview)
	for range 16 {
		wg.Go(func() {
			hc := newClient(l.t.addr, l.t.tls)
			defer hc.CloseIdleConnections()
			for iv := range work {
				stored, err := reopen(hc, l.t, iv)
				mu.Lock()
				switch {
				case err != nil:
					firstErr = cmpOr(firstErr, err)
				default:
					checked++
					shown += len(iv.shown)
					missing := differences(iv.shown, stored)
					lost += missing
					if missing == 0 && !sameOrder(iv.shown, stored) {
						reordered++
					}
					if iv.done {
						completed++
					}
				}
				mu.Unlock()
			}
		})
	}
	for _, iv := range all {
		if iv.broken {
			broken++
			continue
		}
		select {
		case work <- iv:
		case <-ctx.Done():
		}
	}
	close(work)
	wg.Wait()
	if err := cmpOr(ctx.Err(), firstErr); err != nil {
		return nil, err
	}
	return []figure{
		{"interviews", checked}, {"completed", completed}, {"messages", shown},
		{"lost", lost}, {"reordered", reordered}, {"unchecked", broken},
	}, nil
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// reopen returns the transcript the server keeps for iv, opened with its session.
func reopen(hc *fasthttp.HostClient, t *target, iv *benchInterview) ([]shownMessage, error) {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(fasthttp.MethodPost)
	req.SetRequestURI(t.baseURL + "/i/" + iv.token + "/session")
	req.Header.Set("X-Interview-Session", iv.session)
	if err := hc.Do(req, resp); err != nil {
		return nil, fmt.Errorf("reopen an interview: %w", err)
	}
	var a participantAnswer
	if err := json.Unmarshal(resp.Body(), &a); err != nil || resp.StatusCode() != fasthttp.StatusOK || a.State != "open" {
		return nil, fmt.Errorf("reopen an interview: status %d: %.200s", resp.StatusCode(), resp.Body())
	}
	return a.Messages, nil
}

// differences counts the messages in one list and not the other (as multisets).
func differences(a, b []shownMessage) int {
	count := make(map[shownMessage]int, len(a))
	for _, m := range a {
		count[m]++
	}
	for _, m := range b {
		count[m]--
	}
	n := 0
	for _, c := range count {
		if c < 0 {
			c = -c
		}
		n += c
	}
	return n
}

func sameOrder(a, b []shownMessage) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
