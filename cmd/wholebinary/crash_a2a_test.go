package wholebinary

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"interviewd/kv"
)

// The crash suite's A2A case: the real binary, under concurrent A2A writers (link
// creations on the fast path and through the SDK's binding, studies authored from plain
// text, reads), is killed with SIGKILL the moment enough answers have arrived, and
// restarted on the same data folder. An answered message's task is committed with its
// effect before the answer, so after every restart each answered task is found by
// GetTask, its link (the effect) opens, and the message sent again with its messageId is
// answered with the same task.

// a2aCrashMaxCycles bounds the case's kill and restart cycles (-crash.cycles, at most
// this).
const a2aCrashMaxCycles = 8

func TestCrashA2ATasks(t *testing.T) {
	if testing.Short() {
		t.Skip("crash suite skipped in -short mode (it builds and kills the real binary)")
	}
	seed := *crashSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	cycles := min(*crashCycles, a2aCrashMaxCycles)
	t.Logf("A2A crash case: seed %d, %d cycles (reproduce with -crash.seed=%d)", seed, cycles, seed)
	rng := rand.New(rand.NewPCG(seed, 0xa2a))

	bin := buildCrashBinary(t)
	data := t.TempDir()
	var org struct {
		OrgID string `json:"org_id"`
	}
	crashAdmin(t, bin, &org, "setup", "--data", data, "--org", "Crash Agents", "--email", "agents@example.test")
	var key struct {
		Secret string `json:"secret"`
	}
	crashAdmin(t, bin, &key, "keys", "create", "--data", data, "--org", org.OrgID, "--name", "agent", "--env", "live",
		"--scopes", strings.Join(kv.AllScopes, ","))
	c := &crashClient{key: key.Secret, http: &http.Client{Timeout: 60 * time.Second}}
	srv := startCrashBinary(t, bin, data)
	c.base = srv.url
	studyID := c.mustAuthor(t, "Learn how agents book meeting rooms and which rooms they avoid.")
	ledger := &a2aLedger{}

	for cycle := 1; cycle <= cycles; cycle++ {
		waitAcks := 5 + rng.IntN(40)
		cycleStart := time.Now()
		ctx, stopLoad := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		before := ledger.count()
		for i := range 4 {
			ws := rng.Uint64()
			wg.Add(1)
			go func() {
				defer wg.Done()
				c.a2aLoad(ctx, rand.New(rand.NewPCG(ws, uint64(i))), ledger, studyID, fmt.Sprintf("c%dw%d", cycle, i))
			}()
		}
		// No extra delay: the kill lands right behind an answer, while the writers'
		// next messages are on their way.
		crashWait(t, srv, "answered A2A messages", func() bool { return ledger.count()-before >= waitAcks })
		srv.kill(t)
		stopLoad()
		wg.Wait()
		mustCheckBolt(t, filepath.Join(data, kv.FileName))

		killed := time.Now()
		srv = startCrashBinary(t, bin, data)
		c.base = srv.url
		restarted := time.Now()
		n := c.a2aVerify(t, ledger, false)
		t.Logf("cycle %d: killed after %d answers; verified %d tasks (load %v, restart %v, verify %v)", cycle, waitAcks, n,
			killed.Sub(cycleStart).Round(time.Millisecond), restarted.Sub(killed).Round(time.Millisecond), time.Since(restarted).Round(time.Millisecond))
	}
	n := c.a2aVerify(t, ledger, true)
	links := ledger.links()
	t.Logf("A2A crash case: %d cycles; every one of %d answered tasks found and resent (%d links)", cycles, n, links)
	if cycles > 0 && (n == 0 || links == 0) {
		t.Fatalf("the load answered too little to prove anything: %d tasks, %d links", n, links)
	}
	srv.stop(t)
	mustCheckBolt(t, filepath.Join(data, kv.FileName))
}

// a2aLedger records every message the server answered with a task.
type a2aLedger struct {
	mu       sync.Mutex
	tasks    []answeredMessage
	verified int
}

// answeredMessage is a message the server answered: its JSON-RPC body (sent again
// as it was) and the task it made; link is the participant link a link task minted.
type answeredMessage struct {
	body, taskID, link string
}

func (l *a2aLedger) add(m answeredMessage) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.tasks = append(l.tasks, m)
}

func (l *a2aLedger) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.tasks)
}

func (l *a2aLedger) links() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, m := range l.tasks {
		if m.link != "" {
			n++
		}
	}
	return n
}

// a2aMessage is a SendMessage JSON-RPC body.
func a2aMessage(messageID, parts, config string) string {
	params := fmt.Sprintf(`{"message":{"messageId":%q,"role":"ROLE_USER","parts":%s}`, messageID, parts)
	if config != "" {
		params += `,"configuration":` + config
	}
	return `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":` + params + `}}`
}

// a2aTaskAnswer is what the checks read of a JSON-RPC answer holding a task.
type a2aTaskAnswer struct {
	Result *struct {
		Task *struct {
			ID        string `json:"id"`
			Artifacts []struct {
				ArtifactID string `json:"artifactId"`
				Parts      []struct {
					Data json.RawMessage `json:"data"`
				} `json:"parts"`
			} `json:"artifacts"`
		} `json:"task"`
		// GetTask answers with the task itself.
		ID string `json:"id"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// sendA2A posts body to the A2A endpoint; a transport failure is err (the server died).
func (c *crashClient) sendA2A(ctx context.Context, body string) (a2aTaskAnswer, int, []byte, error) {
	var a a2aTaskAnswer
	status, raw, err := c.call(ctx, "POST", "/v1/a2a", body)
	if err != nil {
		return a, 0, nil, err
	}
	if status == 200 {
		_ = json.Unmarshal(raw, &a)
	}
	return a, status, raw, nil
}

// a2aLoad sends messages until ctx ends or the server goes away, recording every one
// answered with a task.
func (c *crashClient) a2aLoad(ctx context.Context, rng *rand.Rand, l *a2aLedger, studyID, tag string) {
	study := fmt.Sprintf(`"study_id":%q`, studyID)
	for n := 0; ctx.Err() == nil; n++ {
		id := fmt.Sprintf("%s-%d", tag, n)
		var parts, config string
		link := false
		switch r := rng.IntN(10); {
		case r < 4: // the fast path
			parts, link = fmt.Sprintf(`[{"data":{"skill":"create_participant_link","arguments":{%s,"context":{"ref":%q}}}}]`, study, id), true
		case r < 6: // the SDK's binding (a configuration leaves the fast path)
			parts, link = fmt.Sprintf(`[{"data":{"skill":"create_participant_link","arguments":{%s,"audience":"person","context":{"ref":%q}}}}]`, study, id), true
			config = `{"returnImmediately":true}`
		case r < 7: // a background job, from plain text
			parts = fmt.Sprintf(`[{"text":"Create a study about how people in %s choose a dentist"}]`, id)
			config = `{"returnImmediately":true}`
		case r < 9:
			parts = fmt.Sprintf(`[{"data":{"skill":"get_study","arguments":{%s}}}]`, study)
		default:
			parts, config = `[{"data":{"skill":"whoami"}}]`, `{"historyLength":1}`
		}
		body := a2aMessage(id, parts, config)
		a, status, _, err := c.sendA2A(ctx, body)
		if err != nil {
			return
		}
		if status != 200 || a.Result == nil || a.Result.Task == nil {
			continue // refused: not an answered task
		}
		m := answeredMessage{body: body, taskID: a.Result.Task.ID}
		if link {
			m.link = linkOfTask(a)
		}
		l.add(m)
	}
}

// linkOfTask returns the participant link URL in a link task's result artifact.
func linkOfTask(a a2aTaskAnswer) string {
	for _, art := range a.Result.Task.Artifacts {
		if art.ArtifactID != "result" || len(art.Parts) == 0 {
			continue
		}
		var link struct {
			URL string `json:"url"`
		}
		if json.Unmarshal(art.Parts[0].Data, &link) == nil {
			return link.URL
		}
	}
	return ""
}

// a2aVerify checks, on the restarted server, every answered message since the last
// check (or all of them): GetTask finds its task, a link task's link opens, and the
// message sent again is answered with the same task. It returns how many it checked.
func (c *crashClient) a2aVerify(t *testing.T, l *a2aLedger, all bool) int {
	t.Helper()
	l.mu.Lock()
	tasks := l.tasks[l.verified:]
	if all {
		tasks = l.tasks
	}
	l.verified = len(l.tasks)
	tasks = append([]answeredMessage(nil), tasks...)
	l.mu.Unlock()

	for _, m := range tasks {
		get := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":%q}}`, m.taskID)
		a, status, raw, err := c.sendA2A(context.Background(), get)
		if err != nil {
			t.Fatalf("GetTask %s: %v", m.taskID, err)
		}
		if status != 200 || a.Error != nil || a.Result == nil || a.Result.ID != m.taskID {
			t.Fatalf("answered task %s is gone after the restart: %d %s", m.taskID, status, raw)
		}
		if m.link != "" {
			token := m.link[strings.LastIndex(m.link, "/i/")+3:]
			if status, raw := c.mustCall(t, "GET", "/i/"+token, ""); status != 200 {
				t.Fatalf("the link of answered task %s is gone after the restart: %d %s", m.taskID, status, logTail(string(raw), 3))
			}
		}
		a, status, raw, err = c.sendA2A(context.Background(), m.body)
		if err != nil {
			t.Fatalf("resend of task %s's message: %v", m.taskID, err)
		}
		if status != 200 || a.Result == nil || a.Result.Task == nil || a.Result.Task.ID != m.taskID {
			t.Fatalf("the message of answered task %s, sent again after the restart, was answered: %d %s", m.taskID, status, raw)
		}
	}
	return len(tasks)
}
