package kv

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"interviewd/kv/internal/pgengine"
	"interviewd/kv/pgtest"
)

// Several nodes on one PostgreSQL database: each node is its own *DB (its own pool,
// clock reading, ID source and caches) on the same URL, as separate interviewd
// processes are. These run in the PostgreSQL round only: bbolt has one node by design.

// openNodes opens n stores on one fresh database, concurrently (the schema lock makes
// the first migrate and the others wait).
func openNodes(t *testing.T, n int) []*DB {
	t.Helper()
	if !testPostgres {
		t.Skip("several nodes need a shared store (the PostgreSQL round)")
	}
	url := pgtest.URL(t)
	nodes := make([]*DB, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range nodes {
		wg.Go(func() { nodes[i], errs[i] = Open(t.TempDir(), Options{Store: url}) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("node %d: %v", i, err)
		}
		t.Cleanup(func() { _ = nodes[i].Close() })
	}
	return nodes
}

// Opening concurrently migrates once; every node shares the signing secret.
func TestNodes_OneMigrationOneSecret(t *testing.T) {
	nodes := openNodes(t, 4)
	for i, n := range nodes[1:] {
		if string(n.Secret()) != string(nodes[0].Secret()) {
			t.Fatalf("node %d has its own secret", i+1)
		}
	}
	var versions, rows int
	err := nodes[0].pg.Pool().QueryRow(context.Background(),
		`SELECT count(*), count(DISTINCT version) FROM interviewd_schema`).Scan(&rows, &versions)
	if err != nil || rows != pgengine.SchemaVersion() || versions != pgengine.SchemaVersion() {
		t.Fatalf("schema rows %d (%d versions), want %d: %v", rows, versions, pgengine.SchemaVersion(), err)
	}
}

// A page's cursor from one node continues on another: same order, same rows.
func TestNodes_KeysetPagingAcrossNodes(t *testing.T) {
	nodes := openNodes(t, 2)
	a := nodes[0]
	ctx := context.Background()
	p := Partition{Org: mustOrg(t, a, "paging").ID, Env: EnvLive}
	for i := range 7 {
		mustStudy(t, nodes[i%2], p, fmt.Sprint("s", i))
	}
	var viaA, viaMixed []ID
	cursor := ""
	for {
		pg, err := a.FindStudies(ctx, StudyFilter{Partition: p, Limit: 3, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range pg.Items {
			viaA = append(viaA, s.ID)
		}
		if cursor = pg.Next; cursor == "" {
			break
		}
	}
	for i := 0; ; i++ {
		pg, err := nodes[i%2].FindStudies(ctx, StudyFilter{Partition: p, Limit: 3, Cursor: cursor})
		if err != nil {
			t.Fatalf("page %d on node %d: %v", i, i%2, err)
		}
		for _, s := range pg.Items {
			viaMixed = append(viaMixed, s.ID)
		}
		if cursor = pg.Next; cursor == "" {
			break
		}
	}
	if fmt.Sprint(viaA) != fmt.Sprint(viaMixed) || len(viaA) != 7 {
		t.Fatalf("pages differ across nodes:\n%v\n%v", viaA, viaMixed)
	}
}

// A key claimed on one node is in flight on every other; of many concurrent claims
// across nodes exactly one wins.
func TestNodes_IdempotencyInFlight(t *testing.T) {
	nodes := openNodes(t, 3)
	ctx := context.Background()
	p := Partition{Org: mustOrg(t, nodes[0], "idem").ID, Env: EnvLive}
	fp := [32]byte{1}
	if out, _, err := nodes[0].ClaimIdem(ctx, p, "k1", fp); err != nil || out != IdemClaimed {
		t.Fatalf("first claim %v %v", out, err)
	}
	if out, _, err := nodes[1].ClaimIdem(ctx, p, "k1", fp); err != nil || out != IdemInFlight {
		t.Fatalf("claim on another node %v %v, want in flight", out, err)
	}
	const racers = 30
	outs := make([]IdemOutcome, racers)
	errs := make([]error, racers)
	var wg sync.WaitGroup
	for i := range racers {
		wg.Go(func() { outs[i], _, errs[i] = nodes[i%3].ClaimIdem(ctx, p, "k2", fp) })
	}
	wg.Wait()
	claimed := 0
	for i := range racers {
		if errs[i] != nil {
			t.Fatalf("claim %d: %v", i, errs[i])
		}
		switch outs[i] {
		case IdemClaimed:
			claimed++
		case IdemInFlight:
		default:
			t.Fatalf("claim %d: outcome %v", i, outs[i])
		}
	}
	if claimed != 1 {
		t.Fatalf("%d concurrent claims won, want 1", claimed)
	}
}

// 50 live interviews started at once across 3 nodes on 10 credits: exactly 10 start,
// the balance ends at 0, never below.
func TestNodes_CreditsExact(t *testing.T) {
	nodes := openNodes(t, 3)
	ctx := context.Background()
	org, _, err := nodes[0].CreateOrg(ctx, OrgInput{Name: "Credits", Email: "c@example.com", Credits: 10})
	if err != nil {
		t.Fatal(err)
	}
	p := Partition{Org: org.ID, Env: EnvLive}
	st := mustStudy(t, nodes[0], p, "Live")
	if _, err := nodes[1].SetStudyMode(ctx, p, st.ID, ModeLive); err != nil {
		t.Fatal(err)
	}
	const starts = 50
	got := make([]Opened, starts)
	errs := make([]error, starts)
	var wg sync.WaitGroup
	for i := range starts {
		wg.Go(func() { got[i], errs[i] = nodes[i%3].OpenLink(ctx, st.LinkToken, fmt.Sprint("session-", i)) })
	}
	wg.Wait()
	started, unavailable := 0, 0
	for i := range starts {
		switch {
		case errs[i] != nil:
			t.Fatalf("start %d: %v", i, errs[i])
		case got[i].Started:
			started++
		case got[i].State == LinkUnavailable:
			unavailable++
		}
	}
	o, err := nodes[2].FindOrgByID(ctx, org.ID)
	if err != nil {
		t.Fatal(err)
	}
	page, err := nodes[1].FindInterviews(ctx, InterviewFilter{Partition: p, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if started != 10 || unavailable != 40 || o.Credits != 0 || len(page.Items) != 10 {
		t.Fatalf("started %d, unavailable %d, credits left %d, interviews stored %d; want 10, 40, 0, 10",
			started, unavailable, o.Credits, len(page.Items))
	}
}

// Turns sent to different nodes for one interview never interleave: each is appended
// whole after the one it was based on, or refused.
func TestNodes_TurnsNeverInterleave(t *testing.T) {
	nodes := openNodes(t, 3)
	ctx := context.Background()
	p := Partition{Org: mustOrg(t, nodes[0], "turns").ID, Env: EnvTest}
	st := mustStudy(t, nodes[0], p, "Turns")
	opened, err := nodes[1].OpenLink(ctx, st.LinkToken, "sess")
	if err != nil || opened.Interview == nil {
		t.Fatal(opened, err)
	}
	id := opened.Interview.ID
	// Rounds of racing turns, each based on the length the previous round left.
	length := 0
	for round := range 5 {
		const racers = 9
		errs := make([]error, racers)
		var wg sync.WaitGroup
		for i := range racers {
			wg.Go(func() {
				_, errs[i] = nodes[i%3].AppendTurn(ctx, p, id, Turn{Session: "sess", ExpectLen: length, Status: InterviewInProgress,
					Messages: []Message{msg(SpeakerInterviewer, fmt.Sprintf("r%d q%d", round, i), time.Now()),
						msg(SpeakerParticipant, fmt.Sprintf("r%d a%d", round, i), time.Now())}})
			})
		}
		wg.Wait()
		won := 0
		for i, err := range errs {
			switch {
			case err == nil:
				won++
			case ErrorCode(err) != ECONFLICT:
				t.Fatalf("round %d turn %d: %v", round, i, err)
			}
		}
		if won != 1 {
			t.Fatalf("round %d: %d turns appended, want 1", round, won)
		}
		length += 2
	}
	tr, err := nodes[2].FindTranscript(ctx, p, id)
	if err != nil || len(tr) != length {
		t.Fatalf("transcript %d messages, want %d: %v", len(tr), length, err)
	}
	for i := 0; i < len(tr); i += 2 {
		var q, a string
		fmt.Sscanf(tr[i].Text, "%s %s", new(string), &q)
		fmt.Sscanf(tr[i+1].Text, "%s %s", new(string), &a)
		if tr[i].Text[:3] != tr[i+1].Text[:3] || q[1:] != a[1:] {
			t.Fatalf("messages %d and %d come from different turns: %q, %q", i, i+1, tr[i].Text, tr[i+1].Text)
		}
	}
}

// A key revoked on one node is refused by every node at once: no node answers from a
// cache the revocation did not reach.
func TestNodes_RevokedKeyRefusedEverywhere(t *testing.T) {
	nodes := openNodes(t, 3)
	ctx := context.Background()
	org := mustOrg(t, nodes[0], "revoke")
	k, secret, err := nodes[0].CreateKey(ctx, KeyInput{OrgID: org.ID, Name: "ci", Environment: EnvLive, Scopes: []string{"studies:read"}})
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range nodes {
		for range 3 { // warm anything a node might keep
			if _, err := n.Authenticate(ctx, secret); err != nil {
				t.Fatalf("node %d before revocation: %v", i, err)
			}
		}
	}
	if _, err := nodes[1].RevokeKey(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	for i, n := range nodes {
		if _, err := n.Authenticate(ctx, secret); ErrorCode(err) != EUNAUTHORIZED {
			t.Fatalf("node %d after revocation on node 1: %v, want EUNAUTHORIZED", i, err)
		}
	}
}

// The per-organisation simulation limit holds across nodes: of many simulations
// requested at once on three nodes, exactly the limit are recorded.
func TestNodes_SimulationLimit(t *testing.T) {
	nodes := openNodes(t, 3)
	ctx := context.Background()
	p := Partition{Org: mustOrg(t, nodes[0], "sims").ID, Env: EnvTest}
	st := mustStudy(t, nodes[0], p, "Sim")
	const tries = 12
	errs := make([]error, tries)
	var wg sync.WaitGroup
	for i := range tries {
		wg.Go(func() {
			_, errs[i] = nodes[i%3].CreateSimulationJob(ctx, SimulationInput{Partition: p, JobID: NewV4(), StudyID: st.ID, MaxTurns: 3, Limit: 3}, nil)
		})
	}
	wg.Wait()
	made := 0
	for i, err := range errs {
		switch {
		case err == nil:
			made++
		case ErrorCode(err) != ELIMIT:
			t.Fatalf("simulation %d: %v", i, err)
		}
	}
	if made != 3 {
		t.Fatalf("%d simulations recorded across nodes, want 3", made)
	}
}

// A job leased by one node cannot be claimed by another until the lease runs out or is
// given up.
func TestNodes_JobLease(t *testing.T) {
	nodes := openNodes(t, 2)
	ctx := context.Background()
	p := Partition{Org: mustOrg(t, nodes[0], "lease").ID, Env: EnvLive}
	j, err := nodes[0].CreateAuthoringJob(ctx, AuthoringInput{Partition: p, JobID: NewV4(), ThreadID: NewV4(), Guidance: "g"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nodes[0].ClaimJob(ctx, p, j.ID, "a", time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, err := nodes[1].ClaimJob(ctx, p, j.ID, "b", time.Hour); ErrorCode(err) != ECONFLICT {
		t.Fatalf("claim of a leased job: %v, want ECONFLICT", err)
	}
	if got, _ := nodes[1].FindClaimableJobs(ctx, time.Hour); len(got) != 0 {
		t.Fatalf("a leased job is claimable: %+v", got)
	}
	if err := nodes[1].RenewJobLease(ctx, p, j.ID, "b", time.Hour); ErrorCode(err) != ECONFLICT {
		t.Fatalf("renewal by a node without the lease: %v", err)
	}
	if err := nodes[0].ReleaseJobLease(ctx, p, j.ID, "a"); err != nil {
		t.Fatal(err)
	}
	if got, _ := nodes[1].FindClaimableJobs(ctx, time.Hour); len(got) != 1 {
		t.Fatalf("a released job is not claimable: %+v", got)
	}
	got, err := nodes[1].ClaimJob(ctx, p, j.ID, "b", time.Hour)
	if err != nil || got.LeaseOwner != "b" || got.Attempts != 2 {
		t.Fatalf("claim after release %+v %v", got, err)
	}
	if err := nodes[0].RenewJobLease(ctx, p, j.ID, "a", time.Hour); ErrorCode(err) != ECONFLICT {
		t.Fatalf("renewal of a lost lease: %v", err)
	}
	// An ended job leaves the index of unfinished jobs the sweeps read.
	if err := nodes[1].FailJob(ctx, p, j.ID, AuthoringFailed, "gave up"); err != nil {
		t.Fatal(err)
	}
	open := 0
	_ = nodes[0].view(ctx, func(tx Tx) error {
		return tx.Bucket(bucketJobsOpen).ForEach(func(_, _ []byte) error { open++; return nil })
	})
	if open != 0 {
		t.Fatalf("%d jobs indexed as unfinished after the last one ended", open)
	}
}
