package postgres

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/session"
)

// Search on PostgreSQL (search_messages in migrations/0006): what it
// finds is exactly what the plain full-text query matches, older buckets
// are read when, and only as far as, the window needs, and a person's
// search never counts what they may not read.

// openPGSearch opens a PostgreSQL store on a fresh database as the
// superuser, which may also move the message ids on (setval).
func openPGSearch(t *testing.T) *Store {
	t.Helper()
	s, err := Open(ctx, t.TempDir(), newPGDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// appendAll stores contents as user messages of session id and returns
// their ids, oldest first.
func appendAll(t *testing.T, s session.Store, id string, contents ...string) []int64 {
	t.Helper()
	var ids []int64
	for _, c := range contents {
		m := &session.Message{SessionID: id, Role: session.RoleUser, Content: c}
		if err := s.AppendMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.ID)
	}
	return ids
}

// skipIDs moves the messages' id sequence on, as if n messages had been
// written elsewhere meanwhile.
func skipIDs(t *testing.T, s *Store, n int) {
	t.Helper()
	if _, err := s.pool.Exec(ctx, "SELECT setval('messages_id_seq', nextval('messages_id_seq') + $1)", n); err != nil {
		t.Fatal(err)
	}
}

// TestPostgresSearchFindsWhatTheQueryMatches: for words, prefixes of one,
// two, three and more letters, accents and misses, the messages found are
// exactly those the plain tsquery (the last word a prefix) matches.
func TestPostgresSearchFindsWhatTheQueryMatches(t *testing.T) {
	t.Parallel()
	s := openPGSearch(t)
	a, _ := s.Create(ctx, "Zulu rollout")
	contents := []string{
		"the pod was evicted by the kubelet",
		"Eviction thresholds of the KUBELET",
		"kubelet: évictions under memory pressure",
		"evict it, said the kubelet",
		"an evictor is not a kubelet thing",
		"nothing to see here",
		"kubelet restarts",
		"deploy-canary and deploy_canary",
		"ev e k",
		"it's the café's canary",
	}
	for i := range 20 {
		contents = append(contents, fmt.Sprintf("kubelet zeta%02d", i))
	}
	appendAll(t, s, a.ID, contents...)
	for _, q := range []string{
		"evict", "EVICT", "kubelet evict", "kubelet evicti", "kubelet ev", "kubelet e", "évict",
		"zeta", "zeta1", "kubelet zeta0", "deploy canary", "deploy-canary", "canary", "kub", "k",
		"ev", "e", "cafe", "café's", "it s", "zulu", "nomatch", "kubelet nomatch", "zeta00 kubelet",
	} {
		var want []int64
		rows, err := s.pool.Query(ctx, "SELECT id FROM messages WHERE content_tsv @@ to_tsquery('ctxls', $1) ORDER BY id", tsQuery(searchWords(q)))
		if err != nil {
			t.Fatal(q, err)
		}
		for rows.Next() {
			var id int64
			rows.Scan(&id)
			want = append(want, id)
		}
		rows.Close()
		hits, err := s.Search(ctx, q, 200)
		if err != nil {
			t.Fatalf("%q: %v", q, err)
		}
		got := messageIDs(hits)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%q: messages %v, want %v", q, got, want)
		}
		for _, h := range hits {
			if !strings.Contains(h.Snippet, "«") {
				t.Errorf("%q: snippet without a match: %+v", q, h)
			}
		}
	}
	if n := len(messageIDs(mustFind(t, s, "evict"))); n != 5 {
		t.Errorf("evict: %d messages, want 5 (evicted, Eviction, évictions, evict, evictor)", n)
	}
	if n := len(messageIDs(mustFind(t, s, "e"))); n != 6 {
		t.Errorf("e: %d messages, want 6", n)
	}
}

func mustFind(t *testing.T, s session.Store, q string) []session.Hit {
	t.Helper()
	hits, err := s.Search(ctx, q, 200)
	if err != nil {
		t.Fatalf("%q: %v", q, err)
	}
	return hits
}

// TestPostgresSearchAcrossBuckets spreads messages over far apart ids (a
// bucket is 1,000 ids): a rare word in the very first message is found
// past the 64 buckets the index is asked for by name, and the window holds
// the newest matches, reaching back over a gap of 50 buckets for the rest
// of them and no further.
func TestPostgresSearchAcrossBuckets(t *testing.T) {
	t.Parallel()
	s := openPGSearch(t)
	a, _ := s.Create(ctx, "rollouts")
	first := appendAll(t, s, a.ID, "the kubelet evicted everything once")[0]
	skipIDs(t, s, 150_000)
	older := appendAll(t, s, a.ID, "canary canary canary: the best match, and old")
	for i := range 29 {
		older = append(older, appendAll(t, s, a.ID, weakMatch(i))...)
	}
	skipIDs(t, s, 50_000)
	var newer []int64
	for i := range 30 {
		newer = append(newer, appendAll(t, s, a.ID, weakMatch(100+i))...)
	}

	if hits := mustFind(t, s, "kubelet evi"); len(hits) != 1 || hits[0].MessageID != first {
		t.Errorf("kubelet evi: %+v, want message %d", hits, first)
	}
	// 60 matches. A window of 100 ranks them all: the old best match first.
	hits, err := s.search(ctx, "canary", 3, 100)
	if err != nil || len(hits) != 3 || hits[0].MessageID != older[0] {
		t.Fatalf("window 100: %v %v, want %d first", err, messageIDs(hits), older[0])
	}
	// A window of 40: the 30 newer and the 10 newest of the older, so the
	// best match is left out and the weak ones tie, the newest first.
	hits, err = s.search(ctx, "canary", 50, 40)
	if err != nil {
		t.Fatal(err)
	}
	got := messageIDs(hits)
	want := append(slices.Clone(older[20:]), newer...)
	slices.Reverse(want)
	if !slices.Equal(got, want) {
		t.Errorf("window 40: %v, want %v", got, want)
	}
	// A short last word, through the index's prefixes.
	if hits, err := s.search(ctx, "rollout ca", 50, 40); err != nil || len(hits) != 40 {
		t.Errorf("rollout ca: %d hits %v", len(hits), err)
	}
}

// TestPostgresSearchCountsOnlyWhatThePersonReads: alice's newer private
// messages match bob's words too, and fill more than a window, 20 buckets
// after his; bob's own older ones are still found, and none of hers.
func TestPostgresSearchCountsOnlyWhatThePersonReads(t *testing.T) {
	t.Parallel()
	c := pgPeople(t)
	alice, bob := openPG(t, c, "alice"), openPG(t, c, "bob")
	mine, _ := bob.Create(ctx, "bob's")
	own := appendAll(t, bob, mine.ID, "deploy the canary", "the canary deploy failed", "deploy again")
	if out, err := c.Psql(t, "", "postgres", "SELECT setval('messages_id_seq', nextval('messages_id_seq') + 20000)"); err != nil {
		t.Fatal(err, out)
	}
	hers, _ := alice.Create(ctx, "alice's")
	for i := range 60 {
		appendAll(t, alice, hers.ID, fmt.Sprintf("deploy %d, private", i))
	}
	hits, err := bob.search(ctx, "deploy", 20, 50)
	if err != nil {
		t.Fatal(err)
	}
	got := messageIDs(hits)
	slices.Sort(got)
	if !slices.Equal(got, own) {
		t.Errorf("bob finds %v, want his own %v", got, own)
	}
	if hits, err := alice.search(ctx, "deploy", 200, 50); err != nil || len(hits) != 50 {
		t.Errorf("alice finds %d of her 60 with a window of 50: %v", len(hits), err)
	}
}

func messageIDs(hits []session.Hit) []int64 {
	var ids []int64
	for _, h := range hits {
		if h.MessageID != 0 {
			ids = append(ids, h.MessageID)
		}
	}
	return ids
}

// weakMatch is a long message that mentions canary once: a weak bm25 match.
func weakMatch(i int) string {
	return fmt.Sprintf("note %d: the rollout went through the usual steps, checks and dashboards, "+
		"and then the canary stage, with metrics and alerts and logs and a long review afterwards", i)
}
