package kv

import (
	"context"
	"crypto/sha256"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"
)

// storedHead reads a conversation head from the store itself, past the cache.
func storedHead(tb testing.TB, db *DB, token, session string) (Conversation, error) {
	tb.Helper()
	var out Conversation
	err := db.view(context.Background(), func(tx Tx) error {
		var err error
		out, err = db.readConversation(tx, token, session, sha256.Sum256([]byte(session)), true)
		return err
	})
	return out, err
}

// sameHead fails tb unless the head FindConversationHead answers (cached or not) is
// the one stored, or both fail with the same code.
func sameHead(tb testing.TB, db *DB, token, session string) Conversation {
	tb.Helper()
	got, gotErr := db.FindConversationHead(context.Background(), token, session)
	want, wantErr := storedHead(tb, db, token, session)
	if ErrorCode(gotErr) != ErrorCode(wantErr) || (gotErr == nil) != (wantErr == nil) {
		tb.Fatalf("head of %s: %v, stored: %v", session, gotErr, wantErr)
	}
	if !reflect.DeepEqual(got, want) {
		tb.Fatalf("head of %s:\n got    %+v\n stored %+v", session, got, want)
	}
	return got
}

func cachedHeads(db *DB) int {
	if db.cache.conversations == nil {
		return 0
	}
	return db.cache.conversations.len()
}

// TestConversationCacheFollowsWrites: after every kind of write that changes what a
// turn reads (its own turns, a turn from elsewhere, a rewritten link, a new session of
// the interview, the interview erased), the head a turn reads is the stored one, on
// both engines; on bbolt a turn's own commit keeps the entry, so the next turn reads
// nothing.
func TestConversationCacheFollowsWrites(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	db := mustOpenDB(t, (&fixedClock{now: t0}).Now)
	ctx := context.Background()
	org := mustOrg(t, db, "convcache")
	p := Partition{Org: org.ID, Env: EnvTest}
	st := mustStudy(t, db, p, "Cached")
	if _, err := db.OpenLink(ctx, st.LinkToken, "s1"); err != nil {
		t.Fatal(err)
	}
	turn := func(n int, text string) Turn {
		at := t0.Add(time.Duration(n+1) * time.Minute)
		return Turn{Session: "s1", ExpectLen: n, Status: InterviewInProgress,
			Messages: []Message{msg(SpeakerParticipant, text, at), msg(SpeakerInterviewer, "Next?", at)}}
	}

	conv := sameHead(t, db, st.LinkToken, "s1")
	if !testPostgres && cachedHeads(db) != 1 {
		t.Fatalf("%d heads cached after the first read", cachedHeads(db))
	}
	for i := range 3 {
		if _, err := db.AppendTurnTo(ctx, &conv, turn(conv.Interview.TranscriptLen, fmt.Sprint("A", i))); err != nil {
			t.Fatal(err)
		}
		if !testPostgres {
			id := convID(st.LinkToken, "s1")
			if !db.cache.conversations.holds(id, conv.record) {
				t.Fatalf("turn %d: the cache does not hold the record the turn committed", i)
			}
		}
		got := sameHead(t, db, st.LinkToken, "s1")
		if got.Interview.TranscriptLen != 2*(i+1) {
			t.Fatalf("turn %d: head has %d messages", i, got.Interview.TranscriptLen)
		}
		cur, err := db.CurrentConversation(ctx, st.LinkToken, "s1", conv)
		if err != nil || !reflect.DeepEqual(cur, conv) {
			t.Fatalf("turn %d: current %+v %v", i, cur.Interview, err)
		}
	}

	// A turn through the other entry point is described too.
	if _, err := db.AppendTurn(ctx, p, conv.Interview.ID, turn(6, "elsewhere")); err != nil {
		t.Fatal(err)
	}
	if got := sameHead(t, db, st.LinkToken, "s1"); got.Interview.TranscriptLen != 8 {
		t.Fatalf("after AppendTurn: %d messages", got.Interview.TranscriptLen)
	}
	// The stale reading is no longer current: CurrentConversation reads again.
	cur, err := db.CurrentConversation(ctx, st.LinkToken, "s1", conv)
	if err != nil || cur.Interview.TranscriptLen != 8 {
		t.Fatalf("current after a turn from elsewhere: %+v %v", cur.Interview, err)
	}

	// A write no code path announces: the link rewritten in place.
	err = db.update(ctx, func(tx Tx) error {
		var l Link
		if _, err := getJSON(tx.Bucket(bucketLinks), []byte(st.LinkToken), &l); err != nil {
			return err
		}
		l.Note = "rewritten"
		return putJSON(tx.Bucket(bucketLinks), []byte(st.LinkToken), l)
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := sameHead(t, db, st.LinkToken, "s1"); got.Link.Note != "rewritten" {
		t.Fatalf("link note %q after the rewrite", got.Link.Note)
	}

	// The session removed: the cached head must not let it in.
	hash := sha256.Sum256([]byte("s1"))
	err = db.update(ctx, func(tx Tx) error {
		return tx.Bucket(bucketSessions).Delete(interviewSessionKey(conv.Interview.ID, hash))
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.FindConversationHead(ctx, st.LinkToken, "s1"); ErrorCode(err) != EUNAUTHORIZED {
		t.Fatalf("removed session: %v", err)
	}
	sameHead(t, db, st.LinkToken, "s1")

	// Erased: gone, whatever was cached.
	if _, err := db.OpenLink(ctx, st.LinkToken, "s2"); err != nil {
		t.Fatal(err)
	}
	second := sameHead(t, db, st.LinkToken, "s2")
	if _, err := db.EraseInterview(ctx, second.Interview.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.FindConversationHead(ctx, st.LinkToken, "s2"); err == nil {
		t.Fatal("an erased interview's head is still found")
	}
	sameHead(t, db, st.LinkToken, "s2")
}

// TestConversationCacheRefusesStaleReads covers the cache's own rules: a read that began
// before a commit wrote one of its keys is not cached; a turn's described record
// replaces the entry's interview only when no other of its keys was written with it.
func TestConversationCacheRefusesStaleReads(t *testing.T) {
	conv := Conversation{Link: Link{Note: "n"}, Interview: Interview{TranscriptLen: 1}, record: []byte("r1")}
	keys := []string{"links\x00t", "sessions\x00s", "interviews\x00i"}

	t.Run("StaleReadNotCached", func(t *testing.T) {
		c := newConversationCache()
		gen := c.generation()
		c.committed([]string{"sessions\x00s"}, nil)
		c.put("id", conv, keys, "interviews\x00i", gen)
		if c.len() != 0 {
			t.Fatal("a read from before a commit that wrote its session was cached")
		}
		c.put("id", conv, keys, "interviews\x00i", c.generation())
		if c.len() != 1 {
			t.Fatal("a read from after the commit was not cached")
		}
	})

	t.Run("UnrelatedWriteKeepsEntry", func(t *testing.T) {
		c := newConversationCache()
		gen := c.generation()
		c.committed([]string{"links\x00other"}, nil)
		c.put("id", conv, keys, "interviews\x00i", gen)
		c.committed([]string{"interviews\x00other"}, nil)
		if _, ok := c.get("id"); !ok {
			t.Fatal("writes to other keys dropped the entry")
		}
	})

	t.Run("DescribedTurnUpdatesInPlace", func(t *testing.T) {
		c := newConversationCache()
		c.put("id", conv, keys, "interviews\x00i", c.generation())
		next := Interview{TranscriptLen: 3}
		c.committed([]string{"interviews\x00i"}, map[string]writtenInterview{"interviews\x00i": {iv: next, record: []byte("r2")}})
		got, ok := c.get("id")
		if !ok || got.Interview.TranscriptLen != 3 || string(got.record) != "r2" || got.Link.Note != "n" {
			t.Fatalf("%v %+v", ok, got)
		}
	})

	t.Run("DescribedTurnWithAnotherWriteDrops", func(t *testing.T) {
		c := newConversationCache()
		c.put("id", conv, keys, "interviews\x00i", c.generation())
		c.committed([]string{"interviews\x00i", "links\x00t"}, map[string]writtenInterview{"interviews\x00i": {iv: Interview{}, record: []byte("r2")}})
		if _, ok := c.get("id"); ok {
			t.Fatal("an entry whose link was rewritten in the turn's commit survived")
		}
	})

	t.Run("UndescribedRewriteDrops", func(t *testing.T) {
		c := newConversationCache()
		c.put("id", conv, keys, "interviews\x00i", c.generation())
		c.committed([]string{"interviews\x00i"}, nil)
		if _, ok := c.get("id"); ok {
			t.Fatal("an interview rewritten without a description kept its entry")
		}
	})

	t.Run("StampsOverflowRefusesOlderReads", func(t *testing.T) {
		c := newConversationCache()
		gen := c.generation()
		many := make([]string, convStampsMax)
		for i := range many {
			many[i] = fmt.Sprint("x\x00", i)
		}
		c.committed(many, nil)
		c.committed([]string{"y\x001"}, nil) // drops the stamps
		c.put("id", conv, keys, "interviews\x00i", gen)
		if c.len() != 0 {
			t.Fatal("a read older than the dropped stamps was cached")
		}
	})

	t.Run("DependencyListsStayBounded", func(t *testing.T) {
		c := newConversationCache()
		for i := range 40 * conversationCacheMax / len(keys) {
			c.put("id", conv, keys, "interviews\x00i", c.generation())
			if i%2 == 0 {
				c.committed([]string{"sessions\x00s"}, nil)
			}
		}
		c.mu.RLock()
		n := len(c.deps["links\x00t"])
		c.mu.RUnlock()
		if n > 16*conversationCacheMax {
			t.Fatalf("the link's dependency list holds %d entries", n)
		}
	})

	t.Run("ReadOfAnUnloggedBucketIsNotCacheable", func(t *testing.T) {
		db := mustOpenDB(t, nil)
		for _, tc := range []struct {
			bucket []byte
			want   bool
		}{{bucketTranscripts, true}, {bucketInterviews, false}} {
			var rec recordingTx
			err := db.view(context.Background(), func(tx Tx) error {
				rec = recordingTx{Tx: tx}
				rec.Bucket(tc.bucket).Get([]byte("k"))
				return nil
			})
			if err != nil || rec.uncacheable != tc.want {
				t.Fatalf("read of %s: uncacheable %v, want %v (%v)", tc.bucket, rec.uncacheable, tc.want, err)
			}
		}
	})

	t.Run("WriteLogLastWriteWins", func(t *testing.T) {
		boltOnly(t)
		db := mustOpenDB(t, nil)
		var log *writeLog
		err := db.update(context.Background(), func(tx Tx) error {
			b := tx.Bucket(bucketInterviews)
			if err := b.Put([]byte("k"), []byte("one")); err != nil {
				return err
			}
			throughInterview(tx, []byte("k"), Interview{TranscriptLen: 1}, []byte("one"))
			if err := b.Put([]byte("k"), []byte("two")); err != nil { // another writer of the group
				return err
			}
			log = tx.(*loggingTx).log
			return b.Delete([]byte("k"))
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(log.through) != 0 || len(log.written) != 3 {
			t.Fatalf("log %+v: a record rewritten after its description must not stay described", log)
		}
	})
}

// TestConversationCacheUnderConcurrentTurns: participants taking turns on their own
// interviews while others read their heads and a writer rewrites the link: every head
// read afterwards is the stored one, and no read saw a record older than the turns its
// own participant had finished. Run with -race.
func TestConversationCacheUnderConcurrentTurns(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	db := mustOpenDB(t, (&fixedClock{now: t0}).Now)
	ctx := context.Background()
	org := mustOrg(t, db, "convrace")
	p := Partition{Org: org.ID, Env: EnvTest}
	st := mustStudy(t, db, p, "Race")
	const people, turns = 6, 12
	var wg sync.WaitGroup
	errs := make(chan error, people+1)
	for n := range people {
		session := fmt.Sprint("session-", n)
		if _, err := db.OpenLink(ctx, st.LinkToken, session); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			for i := range turns {
				conv, err := db.FindConversationHead(ctx, st.LinkToken, session)
				if err != nil {
					errs <- err
					return
				}
				if conv.Interview.TranscriptLen != 2*i {
					errs <- fmt.Errorf("%s turn %d: read %d messages", session, i, conv.Interview.TranscriptLen)
					return
				}
				at := t0.Add(time.Duration(i+1) * time.Minute)
				_, err = db.AppendTurnTo(ctx, &conv, Turn{Session: session, ExpectLen: 2 * i, Status: InterviewInProgress,
					Messages: []Message{msg(SpeakerParticipant, "a", at), msg(SpeakerInterviewer, "q", at)}})
				if err != nil {
					errs <- fmt.Errorf("%s turn %d: %w", session, i, err)
					return
				}
			}
		})
	}
	wg.Go(func() {
		for i := range 20 {
			err := db.update(ctx, func(tx Tx) error {
				var l Link
				if _, err := getJSON(tx.Bucket(bucketLinks), []byte(st.LinkToken), &l); err != nil {
					return err
				}
				l.Note = fmt.Sprint("note ", i)
				return putJSON(tx.Bucket(bucketLinks), []byte(st.LinkToken), l)
			})
			if err != nil {
				errs <- err
				return
			}
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for n := range people {
		got := sameHead(t, db, st.LinkToken, fmt.Sprint("session-", n))
		if got.Interview.TranscriptLen != 2*turns || got.Link.Note != "note 19" {
			t.Fatalf("person %d: %d messages, note %q", n, got.Interview.TranscriptLen, got.Link.Note)
		}
	}
}

// TestConversationKeysAreWhatTheReadReads: the keys a writer names for a conversation
// it caches (conversationKeys) are exactly those the read of that conversation reads,
// for the study's invite link, a group link and a person link.
func TestConversationKeysAreWhatTheReadReads(t *testing.T) {
	boltOnly(t)
	db := mustOpenDB(t, nil)
	ctx := context.Background()
	org := mustOrg(t, db, "keys")
	p := Partition{Org: org.ID, Env: EnvTest}
	st := mustStudy(t, db, p, "Keys")
	tokens := map[string]string{"invite": st.LinkToken}
	for _, audience := range []string{AudienceGroup, AudiencePerson} {
		l, _, err := db.CreateParticipantLink(ctx, p, st.ID, LinkRequest{Audience: audience, Context: map[string]string{"a": "b"}}, "tok-"+audience, nil)
		if err != nil {
			t.Fatal(err)
		}
		tokens[audience] = l.Token
	}
	for name, token := range tokens {
		if _, err := db.OpenLink(ctx, token, "s-"+name); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		hash := sha256.Sum256([]byte("s-" + name))
		var (
			rec  recordingTx
			conv Conversation
		)
		err := db.view(ctx, func(tx Tx) error {
			rec = recordingTx{Tx: tx}
			var err error
			conv, err = db.readConversation(&rec, token, "s-"+name, hash, true)
			return err
		})
		if err != nil || rec.uncacheable {
			t.Fatalf("%s: %v (uncacheable %v)", name, err, rec.uncacheable)
		}
		if got := conversationKeys(token, hash, conv); !reflect.DeepEqual(got, rec.keys) {
			t.Fatalf("%s: conversationKeys %q\nthe read read    %q", name, got, rec.keys)
		}
	}
}

// TestConversationCachedWhenOpened: a link's opening caches the conversation its
// session then reads, exactly as stored, for the study's invite link, a group link
// and a person link; a write to one of its keys in the same commit, after the opening,
// keeps it out of the cache.
func TestConversationCachedWhenOpened(t *testing.T) {
	boltOnly(t)
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	db := mustOpenDB(t, (&fixedClock{now: t0}).Now)
	ctx := context.Background()
	org := mustOrg(t, db, "opened")
	p := Partition{Org: org.ID, Env: EnvTest}
	st := mustStudy(t, db, p, "Opened")
	opening := func(brief Brief, iv Interview, l Link) Turn {
		return Turn{Status: InterviewInProgress, Script: []byte(`{"phase":"verbatim"}`),
			Messages: []Message{msg(SpeakerInterviewer, "Hello", t0), msg(SpeakerInterviewer, *brief.Title, t0)}}
	}
	tokens := map[string]string{"invite": st.LinkToken}
	for _, audience := range []string{AudienceGroup, AudiencePerson} {
		l, _, err := db.CreateParticipantLink(ctx, p, st.ID, LinkRequest{Audience: audience, Context: map[string]string{"team": "ops"}, Note: "n"}, "open-"+audience, nil)
		if err != nil {
			t.Fatal(err)
		}
		tokens[audience] = l.Token
	}
	for name, token := range tokens {
		opened, err := db.ResumeLinkOpening(ctx, token, "", "fresh-"+name, opening)
		if err != nil || !opened.Started {
			t.Fatalf("%s: %+v %v", name, opened, err)
		}
		cached, ok := db.cache.conversations.get(convID(token, opened.Session))
		if !ok {
			t.Fatalf("%s: the opening cached nothing", name)
		}
		stored, err := storedHead(t, db, token, opened.Session)
		if err != nil || !reflect.DeepEqual(cached, stored) {
			t.Fatalf("%s: cached %+v\nstored %+v (%v)", name, cached, stored, err)
		}
	}

	// A later writer of the same commit rewrites the link after the opening was noted.
	err := db.update(ctx, func(tx Tx) error {
		var l Link
		if _, err := getJSON(tx.Bucket(bucketLinks), []byte(st.LinkToken), &l); err != nil {
			return err
		}
		conv := Conversation{Link: l, Interview: Interview{ID: NewV4(), OrgID: org.ID, Env: EnvTest, StudyID: st.ID, DesignVersion: 1}, record: []byte("{}")}
		if err := tx.Bucket(bucketInterviews).Put(p.key(conv.Interview.ID), conv.record); err != nil {
			return err
		}
		cacheOnCommit(tx, st.LinkToken, "late", sha256.Sum256([]byte("late")), conv)
		l.Note = "changed after"
		return putJSON(tx.Bucket(bucketLinks), []byte(st.LinkToken), l)
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := db.cache.conversations.get(convID(st.LinkToken, "late")); ok {
		t.Fatal("a conversation whose link was rewritten later in its commit was cached")
	}
}
