package sqlite

import (
	"context"
	"fmt"
	"testing"

	"github.com/ctxls/ctxls/session"
	"github.com/ctxls/ctxls/session/storetest"
)

// fixture sizes shrink with -short (bench/run --short, CI).
func size(full, short int) int {
	if testing.Short() {
		return short
	}
	return full
}

func BenchmarkList10kSessions(b *testing.B) {
	s := openTest(b)
	ctx := context.Background()
	n := size(10000, 200)
	// Rows in one transaction (folders are not needed to list).
	tx, _ := s.db.Begin()
	for i := range n {
		tx.Exec("INSERT INTO sessions (id, title, title_source, created_at, updated_at, folder) VALUES (?, ?, 'user', ?, ?, ?)",
			fmt.Sprintf("id%06d", i), fmt.Sprintf("session %d", i), i, i, fmt.Sprintf("f%06d", i))
	}
	tx.Commit()
	for b.Loop() {
		if list, _, err := s.List(ctx, session.ListOptions{}); err != nil || len(list) != 50 {
			b.Fatal(err)
		}
	}
}

// BenchmarkSearch100kMessages searches a store shaped like a long-used one
// (see fillSearchFixture: 100,000 messages of about 70 words in 2,000
// sessions), with queries as users type them: all words must match, the last
// as a prefix. "broad" matches 10% of the messages, "narrow" 0.06%, "typing"
// ends with a two-letter prefix (19%). The fixture is built once and shared
// by the three (1-4 minutes, most of it FTS indexing; -short: 2,000
// messages). cpu-ms/op is the process's CPU time per search: on a shared
// machine it is steadier than ns/op.
func BenchmarkSearch100kMessages(b *testing.B) {
	s := openTest(b)
	ctx := context.Background()
	n := size(100000, 2000)
	fillSearchFixture(b, s, n)
	for _, q := range []struct{ name, query string }{
		{"broad", storetest.FixtureBroadQuery},
		{"narrow", storetest.FixtureNarrowQuery},
		{"typing", storetest.FixtureTypingQuery},
	} {
		var matches int
		if err := s.db.QueryRow("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ?", ftsQuery(q.query)).Scan(&matches); err != nil || (matches == 0 && !testing.Short()) {
			b.Fatal(q.query, matches, err)
		}
		b.Run(q.name, func(b *testing.B) {
			reportCPU(b)
			for b.Loop() {
				if hits, err := s.Search(ctx, q.query, 20); err != nil || len(hits) != min(20, matches) {
					b.Fatal(err, len(hits))
				}
			}
			b.ReportMetric(float64(matches)*100/float64(n), "%matched")
		})
	}
}

func BenchmarkResume1000Messages(b *testing.B) {
	s := openTest(b)
	ctx := context.Background()
	sess, _ := s.Create(ctx, "long")
	tx, _ := s.db.Begin()
	for i := range 1000 {
		tx.Exec("INSERT INTO messages (session_id, role, content, status, created_at) VALUES (?, 'assistant', ?, 'complete', ?)", sess.ID, fmt.Sprintf("answer %d: %0200d", i, i), i)
	}
	tx.Commit()
	s.UpdateContext(ctx, sess.ID, "ports", []string{"8080"}, "", session.AddedByUser, nil)
	for b.Loop() {
		if _, err := s.Get(ctx, sess.ID); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Context(ctx, sess.ID); err != nil {
			b.Fatal(err)
		}
		if msgs, err := s.Messages(ctx, sess.ID); err != nil || len(msgs) != 1000 {
			b.Fatal(err)
		}
	}
}
