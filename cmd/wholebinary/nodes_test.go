package wholebinary

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"interviewd/kv"
	"interviewd/kv/pgtest"
	"interviewd/moderator/chattest"
)

// The several-node suite: three real interviewd processes on loopback over one
// PostgreSQL database, a client spreading its requests over them, and one node killed
// with SIGKILL in the middle of the load. Afterwards, through the surviving nodes:
// every acknowledged write is there and replays identically, every acknowledged job
// has finished (those the dead node was running were taken over once their lease ran
// out), each participant's acknowledged answers are in order, and the credits of a live
// study were spent exactly once per interview, across nodes. One simulation is held at
// node 1's model, so it is provably running under node 1's lease when node 1 dies, and
// must be finished by another node.

// spread hands out the base URLs of the live nodes in turn.
type spread struct {
	mu    sync.Mutex
	bases []string
	n     int
}

func (s *spread) next() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	return s.bases[s.n%len(s.bases)]
}

// drop stops sending requests to base (its node died).
func (s *spread) drop(base string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, b := range s.bases {
		if b == base {
			s.bases = append(s.bases[:i:i], s.bases[i+1:]...)
			return
		}
	}
}

func TestThreeNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("several-node suite skipped in -short mode (it builds and kills the real binary)")
	}
	url := pgtest.URL(t)
	bin := buildCrashBinary(t)
	datas := []string{t.TempDir(), t.TempDir(), t.TempDir()}
	var org struct {
		OrgID string `json:"org_id"`
	}
	crashAdmin(t, bin, &org, "setup", "--data", datas[0], "--store", url, "--org", "Nodes Research", "--email", "nodes@example.test")
	var key struct {
		Secret string `json:"secret"`
	}
	crashAdmin(t, bin, &key, "keys", "create", "--data", datas[1], "--store", url, "--org", org.OrgID, "--name", "nodes", "--env", "live",
		"--scopes", strings.Join(kv.AllScopes, ","))
	const credits = 10
	var balance struct {
		Credits int `json:"credits"`
	}
	crashAdmin(t, bin, &balance, "credits", "add", "--data", datas[2], "--store", url, "--org", org.OrgID, "--amount", fmt.Sprint(credits))

	// Node 1 talks to a model that answers everything at once but the long simulation's
	// participant (it carries heldPersona): that simulation stays running on node 1, at
	// the model, until node 1 is killed. The other nodes run the built-in engine.
	model := chattest.NewHolding(t, heldPersona)
	nodes := make([]*crashProcess, 3)
	var wg sync.WaitGroup
	for i := range nodes {
		args := []string{"--store", url, "--job-lease", "2s"}
		if i == 1 {
			args = append(args, "--model-url", model.URL+"/v1", "--model", "holding")
		}
		wg.Go(func() { nodes[i] = startCrashBinary(t, bin, datas[i], args...) })
	}
	wg.Wait()
	store := storeReader(t, url)
	all := &spread{}
	for _, n := range nodes {
		all.bases = append(all.bases, n.url)
	}
	c := &crashClient{key: key.Secret, http: &http.Client{Timeout: 60 * time.Second}, nodes: all}
	studyID := c.mustAuthor(t, "Learn how small teams plan their week and which tools they abandon.")
	liveID := c.mustAuthor(t, "Learn why people switch banks, for a live study.")

	// Credits: more live interviews started at once, across the nodes, than there are
	// credits; exactly one per credit starts.
	if status, raw := c.mustCall(t, "PUT", "/v1/api/studies/"+liveID+"/mode", `{"mode":"live"}`); status != 200 {
		t.Fatalf("go live: %d %s", status, raw)
	}
	status, raw := c.mustCall(t, "GET", "/v1/api/studies/"+liveID+"/interview-link", "")
	var link struct {
		URL string `json:"url"`
	}
	if status != 200 {
		t.Fatalf("interview link: %d %s", status, raw)
	}
	crashDecode(t, raw, &link)
	token := link.URL[strings.LastIndex(link.URL, "/i/")+3:]
	const starts = 3 * credits
	var started, unavailable atomic.Int32
	for range starts {
		wg.Go(func() {
			status, raw, err := c.call(context.Background(), "POST", "/i/"+token+"/session", "")
			if err != nil {
				t.Errorf("open live link: %v", err)
				return
			}
			var s struct {
				State   string  `json:"state"`
				Session *string `json:"session"`
			}
			if status != 200 || json.Unmarshal(raw, &s) != nil {
				t.Errorf("open live link: %d %s", status, raw)
				return
			}
			switch {
			case s.State == "open" && s.Session != nil:
				started.Add(1)
			case s.State == "unavailable":
				unavailable.Add(1)
			default:
				t.Errorf("open live link: %s", raw)
			}
		})
	}
	wg.Wait()
	crashAdmin(t, bin, &balance, "credits", "show", "--data", datas[0], "--store", url, "--org", org.OrgID)
	if started.Load() != credits || unavailable.Load() != starts-credits || balance.Credits != 0 {
		t.Fatalf("%d live interviews started, %d refused, %d credits left; want %d, %d, 0",
			started.Load(), unavailable.Load(), balance.Credits, credits, starts-credits)
	}

	// Load over all three nodes; node 1 dies in the middle of it.
	ledger := &crashLedger{}
	ctx, stopLoad := context.WithCancel(context.Background())
	var load sync.WaitGroup
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 3))
	for i := range 6 {
		seed := rng.Uint64()
		load.Go(func() {
			// A worker whose request died with the node starts over on the others.
			for n := 0; ctx.Err() == nil; n++ {
				c.load(ctx, rand.New(rand.NewPCG(seed, uint64(n))), ledger, studyID, fmt.Sprintf("w%d-%d", i, n))
			}
		})
	}
	crashWait(t, nodes[0], "acknowledged writes before the kill", func() bool { return ledger.acks() >= 40 })
	// A long simulation started on node 1, provably in flight there when it dies: its
	// participant's first request is held at the model and node 1 holds its lease.
	var simJob ackedJob
	var owner string
	held := false
	for n := 0; owner == ""; n++ {
		if n == 5 {
			t.Fatalf("none of %d simulations started on node 1 was run by it", n)
		}
		simJob = startHeldSimulation(t, ledger, &crashClient{base: nodes[1].url, key: key.Secret, http: c.http}, studyID, n)
		owner = waitHeldOn(t, store, nodes[1], org.OrgID, kv.JobSimulation, simJob.id, func() bool {
			select {
			case <-model.Held:
				held = true
			default:
			}
			return held
		})
	}
	var simState struct {
		Status string `json:"status"`
	}
	crashWait(t, nodes[0], "the held simulation shown running", func() bool {
		status, raw := c.mustCall(t, "GET", crashJobPath(simJob), "")
		crashDecode(t, raw, &simState)
		return status == 200 && simState.Status == "running"
	})
	nodes[1].kill(t)
	all.drop(nodes[1].url)
	killedAt := ledger.acks()
	crashWait(t, nodes[0], "acknowledged writes after the kill", func() bool { return ledger.acks() >= killedAt+40 })
	stopLoad()
	load.Wait()
	links, sessions, messages, jobs := ledger.counts()
	t.Logf("acknowledged: %d links, %d sessions, %d answers, %d jobs (%d before the kill)", links, sessions, messages, jobs, killedAt)

	c.verify(t, ledger, true)
	c.waitJobs(t, ledger)
	// The simulation node 1 was running was finished by another node, on its own engine.
	checkTakenOver(t, store, org.OrgID, kv.JobSimulation, simJob.id, owner, kv.SimulationCompleted)
	status, raw = c.mustCall(t, "GET", crashJobPath(simJob), "")
	crashDecode(t, raw, &simState)
	if status != 200 || simState.Status != "completed" {
		t.Fatalf("the killed node's simulation ended %d %s: %s", status, simState.Status, raw)
	}
	taken := strings.Count(nodes[0].logs.String(), "resuming job left unfinished") +
		strings.Count(nodes[2].logs.String(), "resuming job left unfinished")
	t.Logf("jobs taken over from the killed node: %d", taken)
	if taken == 0 {
		t.Fatal("no surviving node logged resuming a job, yet the held simulation finished elsewhere")
	}
}

// heldPersona marks the long simulation's participant requests for the holding model.
const heldPersona = "HELD-AT-THE-MODEL: a planner who keeps every list on paper."

// startHeldSimulation starts a 200-turn simulation whose participant is heldPersona on
// c's node and records it as acknowledged. A 429 (the organisation's simulations are all
// busy with the load's) is retried with a new key until one starts.
func startHeldSimulation(t *testing.T, l *crashLedger, c *crashClient, studyID string, try int) ackedJob {
	t.Helper()
	deadline := time.Now().Add(crashDeadline)
	for n := 0; ; n++ {
		w := ackedWrite{path: "/v1/api/studies/" + studyID + ":simulate", key: fmt.Sprintf("held-simulation-%d-%d", try, n),
			body: fmt.Sprintf(`{"max_turns":200,"persona":%q}`, heldPersona)}
		status, raw, err := c.call(context.Background(), "POST", w.path, w.body, "Idempotency-Key", w.key)
		if err != nil {
			t.Fatalf("start the held simulation: %v", err)
		}
		if status/100 == 2 {
			var handle struct {
				JobID string `json:"job_id"`
			}
			crashDecode(t, raw, &handle)
			w.answer = raw
			j := ackedJob{kind: "simulation", id: handle.JobID, write: w}
			l.addJob(j)
			return j
		}
		if status != http.StatusTooManyRequests || time.Now().After(deadline) {
			t.Fatalf("start the held simulation: %d %s", status, raw)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
