package session

import (
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
)

// The PostgreSQL store's figures beside the SQLite store's (bench_test.go):
// the same fixtures, written straight into the database. The server does
// the work in its own processes, so these report wall time (ns/op) only:
// reportCPU would count this process alone.

func openBenchPG(b *testing.B) *Postgres {
	b.Helper()
	s, err := OpenPostgres(ctx, b.TempDir(), newPGDatabase(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// copyRows loads rows into table with COPY.
func copyRows(b *testing.B, s *Postgres, table string, columns []string, rows [][]any) {
	b.Helper()
	if _, err := s.pool.CopyFrom(ctx, pgx.Identifier{table}, columns, pgx.CopyFromRows(rows)); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkPostgresList10kSessions(b *testing.B) {
	s := openBenchPG(b)
	n := size(10000, 200)
	rows := make([][]any, 0, n)
	for i := range n {
		rows = append(rows, []any{fmt.Sprintf("id%06d", i), fmt.Sprintf("session %d", i), "user", int64(i), int64(i), fmt.Sprintf("f%06d", i)})
	}
	copyRows(b, s, "sessions", []string{"id", "title", "title_source", "created_at", "updated_at", "folder"}, rows)
	s.pool.Exec(ctx, "ANALYZE")
	for b.Loop() {
		if list, _, err := s.List(ctx, ListOptions{}); err != nil || len(list) != 50 {
			b.Fatal(err)
		}
	}
}

// BenchmarkPostgresSearch100kMessages is BenchmarkSearch100kMessages on
// PostgreSQL: the same 100,000 messages and queries.
func BenchmarkPostgresSearch100kMessages(b *testing.B) {
	s := openBenchPG(b)
	n := size(100000, 2000)
	var sessions, messages [][]any
	searchFixture(n, func(id, title string, created, updated int64) {
		sessions = append(sessions, []any{id, title, "auto", created, updated, id})
	}, func(id, role, content string, created int64) {
		messages = append(messages, []any{id, role, content, "complete", created})
	})
	copyRows(b, s, "sessions", []string{"id", "title", "title_source", "created_at", "updated_at", "folder"}, sessions)
	copyRows(b, s, "messages", []string{"session_id", "role", "content", "status", "created_at"}, messages)
	s.pool.Exec(ctx, "ANALYZE")
	for _, q := range []struct{ name, query string }{
		{"broad", fixtureBroadQuery},
		{"narrow", fixtureNarrowQuery},
		{"typing", fixtureTypingQuery},
	} {
		var matches int
		if err := s.pool.QueryRow(ctx, "SELECT count(*) FROM messages WHERE content_tsv @@ to_tsquery('ctxls', $1)", tsQuery(q.query)).Scan(&matches); err != nil || (matches == 0 && !testing.Short()) {
			b.Fatal(q.query, matches, err)
		}
		b.Run(q.name, func(b *testing.B) {
			for b.Loop() {
				if hits, err := s.Search(ctx, q.query, 20); err != nil || len(hits) != min(20, matches) {
					b.Fatal(err, len(hits))
				}
			}
			b.ReportMetric(float64(matches)*100/float64(n), "%matched")
		})
	}
}

func BenchmarkPostgresResume1000Messages(b *testing.B) {
	s := openBenchPG(b)
	sess, _ := s.Create(ctx, "long")
	rows := make([][]any, 0, 1000)
	for i := range 1000 {
		rows = append(rows, []any{sess.ID, "assistant", fmt.Sprintf("answer %d: %0200d", i, i), "complete", int64(i)})
	}
	copyRows(b, s, "messages", []string{"session_id", "role", "content", "status", "created_at"}, rows)
	s.SetContext(ctx, sess.ID, "ports", []string{"8080"}, "")
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
