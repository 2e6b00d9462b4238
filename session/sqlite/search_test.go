package sqlite

import (
	"database/sql"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/session"
)

// addMessages inserts user messages into a session in one transaction (the
// FTS triggers run as in production) and returns their ids, oldest first.
func addMessages(t *testing.T, s *Store, sessionID string, contents ...string) []int64 {
	t.Helper()
	tx, err := s.db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var ids []int64
	for i, c := range contents {
		res, err := tx.Exec("INSERT INTO messages (session_id, role, content, status, created_at) VALUES (?, 'user', ?, 'complete', ?)", sessionID, c, i)
		if err != nil {
			t.Fatal(err)
		}
		id, _ := res.LastInsertId()
		ids = append(ids, id)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return ids
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

func TestSearchOldMostRelevantFirst(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	a, _ := s.Create(ctx, "rollouts")
	contents := []string{"Canary canary: why does the canary fail?"}
	for i := range 300 {
		contents = append(contents, weakMatch(i))
	}
	ids := addMessages(t, s, a.ID, contents...)
	// "canary" is spelled out from the vocabulary, "can" uses the prefix
	// index, "canáry" (not plain ASCII) is queried as a prefix.
	for _, q := range []string{"canary", "CANARY", "can", "canáry"} {
		hits, err := s.Search(ctx, q, 5)
		if err != nil || len(hits) != 5 {
			t.Fatalf("%q: %v %+v", q, err, hits)
		}
		if hits[0].MessageID != ids[0] || !strings.Contains(hits[0].Snippet, "«Canary» «canary»") {
			t.Errorf("%q: the oldest, most relevant message is not first: %+v", q, hits[0])
		}
		// The weak matches tie; the newer comes first.
		if hits[1].MessageID != ids[len(ids)-1] || hits[2].MessageID != ids[len(ids)-2] {
			t.Errorf("%q: ties not newest first: %v", q, messageIDs(hits))
		}
	}
}

func TestSearchWindow(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	a, _ := s.Create(ctx, "rollouts")
	contents := []string{"canary canary canary"}
	for i := range 60 {
		contents = append(contents, weakMatch(i))
	}
	contents = append(contents, "the canary, twice: canary") // the second best, recent
	ids := addMessages(t, s, a.ID, contents...)
	// 62 matches. A window of 100 ranks them all; a window of 50 only the
	// 50 most recent, so the oldest, best match is not found.
	hits, err := s.search(ctx, "canary", 3, 100)
	if err != nil || len(hits) != 3 || hits[0].MessageID != ids[0] || hits[1].MessageID != ids[len(ids)-1] {
		t.Fatalf("window 100: %v %v", err, messageIDs(hits))
	}
	hits, err = s.search(ctx, "canary", 3, 50)
	if err != nil || len(hits) != 3 || hits[0].MessageID != ids[len(ids)-1] || slices.Contains(messageIDs(hits), ids[0]) {
		t.Fatalf("window 50: %v %v", err, messageIDs(hits))
	}
	if session.SearchWindow < 1000 {
		t.Errorf("searchWindow %d: narrow queries must rank all their matches", session.SearchWindow)
	}
}

// TestSearchPrefixForms checks that every way of answering the trailing
// prefix (spelled out from the vocabulary, a prefix index, a plain FTS5
// prefix) finds exactly the messages the plain FTS5 prefix query finds.
func TestSearchPrefixForms(t *testing.T) {
	t.Parallel()
	s := openTest(t)
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
	}
	for i := range 20 { // more terms than are spelled out
		contents = append(contents, fmt.Sprintf("kubelet zeta%02d", i))
	}
	addMessages(t, s, a.ID, contents...)
	for _, q := range []string{
		"evict", "EVICT", "kubelet evict", "kubelet evicti", "kubelet ev", "kubelet e", "évict",
		"zeta", "zeta1", "kubelet zeta0", "deploy canary", "deploy-canary", "canary", "kub",
		"zulu", "nomatch", "kubelet nomatch",
	} {
		var want []int64
		rows, err := s.db.Query("SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? ORDER BY rowid", ftsQuery(q))
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
	if n := len(messageIDs(mustSearch(t, s, "evict"))); n != 5 {
		t.Errorf("evict: %d messages, want 5 (evicted, Eviction, évictions, evict, evictor)", n)
	}
	// A prefix that no message has still finds titles.
	if hits := mustSearch(t, s, "zul"); len(hits) != 1 || hits[0].MessageID != 0 || hits[0].Snippet != "«Zulu» rollout" {
		t.Errorf("zul: %+v", hits)
	}
	if hits := mustSearch(t, s, "zulu"); len(hits) != 1 || hits[0].MessageID != 0 {
		t.Errorf("zulu: %+v", hits)
	}
}

func mustSearch(t *testing.T, s *Store, q string) []session.Hit {
	t.Helper()
	hits, err := s.Search(ctx, q, 200)
	if err != nil {
		t.Fatalf("%q: %v", q, err)
	}
	return hits
}

// TestMigration0003 opens a database created with the schema before 0003
// (no prefix indexes, no vocabulary table) and checks that the upgrade keeps
// its search results and that the index follows later changes.
func TestMigration0003(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "ctxls.db")+"?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"migrations/0001_init.sql", "migrations/0002_context_added_by.sql"} {
		text, err := migrations.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(string(text)); err != nil {
			t.Fatal(f, err)
		}
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatal(q, err)
		}
	}
	exec("PRAGMA user_version = 2")
	for _, f := range []string{"f1", "f2"} {
		if err := os.MkdirAll(filepath.Join(dir, "sessions", f), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	exec("INSERT INTO sessions (id, title, title_source, created_at, updated_at, folder) VALUES ('s1', 'Canary rollout', 'user', 1, 1, 'f1'), ('s2', 'Login', 'user', 2, 2, 'f2')")
	contents := []string{
		"Why does the café ingress controller return 502?",
		"The canary deploy failed at 5% traffic",
		"Roll the canary back, then deploy again",
		"login redirect loops after the deploy",
		"nothing relevant",
		"canary canary canary",
	}
	for i, c := range contents {
		exec("INSERT INTO messages (session_id, role, content, status, created_at) VALUES (?, 'assistant', ?, 'complete', ?)", []string{"s1", "s2"}[i%2], c, i)
	}
	// Results with the old schema and the old query (bm25 over every match).
	queries := []string{"canary", "deploy canary", "deploy ca", "cafe contr", "ingress", "login redir", "d", "canary deploy"}
	old := map[string][]string{}
	for _, q := range queries {
		rows, err := db.Query(`SELECT m.id, snippet(messages_fts, 0, '«', '»', '…', 16) FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid
			WHERE messages_fts MATCH ? ORDER BY rank`, ftsQuery(q))
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id int64
			var snippet string
			rows.Scan(&id, &snippet)
			old[q] = append(old[q], fmt.Sprint(id, " ", snippet))
		}
		rows.Close()
		if len(old[q]) == 0 {
			t.Fatalf("%q matches nothing in the fixture", q)
		}
	}
	db.Close()

	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var version int
	var ddl string
	s.db.QueryRow("PRAGMA user_version").Scan(&version)
	s.db.QueryRow("SELECT sql FROM sqlite_master WHERE name = 'messages_fts'").Scan(&ddl)
	// Every migration from 0003 on was applied.
	all, _ := fs.Glob(migrations, "migrations/*.sql")
	if version != len(all) || version < 3 || !strings.Contains(ddl, "prefix = '1 2 3'") {
		t.Fatalf("version %d, %s", version, ddl)
	}
	if _, err := s.db.Exec("INSERT INTO messages_fts (messages_fts, rank) VALUES ('integrity-check', 1)"); err != nil {
		t.Fatalf("index does not match the messages: %v", err)
	}
	for _, q := range queries {
		var got []string
		for _, h := range mustSearch(t, s, q) {
			if h.MessageID != 0 {
				got = append(got, fmt.Sprint(h.MessageID, " ", h.Snippet))
			}
		}
		// Same messages and snippets; the order among equal scores may differ.
		want := slices.Clone(old[q])
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%q after the migration:\n%q\nbefore:\n%q", q, got, want)
		}
	}
	if hits := mustSearch(t, s, "canary"); hits[0].MessageID != 0 || hits[1].Snippet != "«canary» «canary» «canary»" {
		t.Errorf("canary: %+v", hits)
	}

	// The triggers feed the new index: insert, update, delete.
	m := &session.Message{SessionID: "s2", Role: session.RoleUser, Content: "the quokka deploy"}
	if err := s.AppendMessage(ctx, m); err != nil {
		t.Fatal(err)
	}
	if ids := messageIDs(mustSearch(t, s, "quok")); !slices.Equal(ids, []int64{m.ID}) {
		t.Errorf("new message: %v", ids)
	}
	if err := s.UpdateMessage(ctx, m.ID, "the wombat deploy", session.StatusComplete, nil); err != nil {
		t.Fatal(err)
	}
	if ids := messageIDs(mustSearch(t, s, "quokka")); len(ids) != 0 {
		t.Errorf("updated message still found by its old word: %v", ids)
	}
	if ids := messageIDs(mustSearch(t, s, "wombat")); !slices.Equal(ids, []int64{m.ID}) {
		t.Errorf("updated message: %v", ids)
	}
	if err := s.Delete(ctx, "s2"); err != nil {
		t.Fatal(err)
	}
	if ids := messageIDs(mustSearch(t, s, "wombat")); len(ids) != 0 {
		t.Errorf("deleted message still found: %v", ids)
	}
	if _, err := s.db.Exec("INSERT INTO messages_fts (messages_fts, rank) VALUES ('integrity-check', 1)"); err != nil {
		t.Fatalf("index does not match the messages: %v", err)
	}
}
