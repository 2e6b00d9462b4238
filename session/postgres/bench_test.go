package postgres

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/ctxls/ctxls/session"
	"github.com/ctxls/ctxls/session/sqlite"
	"github.com/ctxls/ctxls/session/storetest"
	"github.com/jackc/pgx/v5"
)

// The PostgreSQL store's figures beside the SQLite store's (bench_test.go):
// the same fixtures, written straight into the database. The server does
// the work in its own processes, so these report wall time (ns/op) only:
// reportCPU would count this process alone.
//
// The store connects as a person's role, as people use it: through
// Row-Level Security, which decides which plans a query may have (the
// schema's owner, who bypasses it, would measure another database).

// benchRole is the role the benchmarks' stores connect as.
const benchRole = "ctxls_bench"

func openBenchPG(b *testing.B) *Store {
	b.Helper()
	db := newPGDatabaseNamed(b)
	c := pgShared.cluster
	if _, err := c.Psql(b, "", "postgres", `DO $$ BEGIN CREATE ROLE `+benchRole+` LOGIN IN ROLE ctxls_user;
		EXCEPTION WHEN duplicate_object THEN NULL; END $$`); err != nil {
		b.Fatal(err)
	}
	s, err := Open(ctx, b.TempDir(), c.DSN(benchRole, db))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// admin runs fn on a connection to the store's database as the tables'
// owner: loading fixtures with COPY (which Row-Level Security refuses a
// person's role) and ANALYZE.
func admin(b *testing.B, s *Store, fn func(conn *pgx.Conn) error) {
	b.Helper()
	conn, err := pgx.Connect(ctx, pgShared.cluster.DSN("", s.pool.Config().ConnConfig.Database))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := fn(conn); err != nil {
		b.Fatal(err)
	}
}

// settle settles the database after a load, as autovacuum and the
// checkpointer would before long: the planner's statistics, the
// visibility map, and the load's pages written out, so that neither runs
// during the measurement (on two cores, a checkpoint of a 200 MB load
// doubled the search times).
func settle(b *testing.B, s *Store) {
	b.Helper()
	admin(b, s, func(conn *pgx.Conn) error {
		for _, q := range []string{"VACUUM ANALYZE", "CHECKPOINT"} {
			if _, err := conn.Exec(ctx, q); err != nil {
				return err
			}
		}
		return nil
	})
}

// copyRows loads rows into table with COPY; sessions are the bench role's.
func copyRows(b *testing.B, s *Store, table string, columns []string, rows [][]any) {
	b.Helper()
	if table == "sessions" {
		columns = append(columns, "owner")
		for i := range rows {
			rows[i] = append(rows[i], benchRole)
		}
	}
	admin(b, s, func(conn *pgx.Conn) error {
		_, err := conn.CopyFrom(ctx, pgx.Identifier{table}, columns, pgx.CopyFromRows(rows))
		return err
	})
}

func BenchmarkPostgresList10kSessions(b *testing.B) {
	s := openBenchPG(b)
	n := size(10000, 200)
	rows := make([][]any, 0, n)
	for i := range n {
		rows = append(rows, []any{fmt.Sprintf("id%06d", i), fmt.Sprintf("session %d", i), "user", int64(i), int64(i), fmt.Sprintf("f%06d", i)})
	}
	copyRows(b, s, "sessions", []string{"id", "title", "title_source", "created_at", "updated_at", "folder"}, rows)
	settle(b, s)
	for b.Loop() {
		if list, _, err := s.List(ctx, session.ListOptions{}); err != nil || len(list) != 50 {
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
	storetest.SearchFixture(n, func(id, title string, created, updated int64) {
		sessions = append(sessions, []any{id, title, "auto", created, updated, id})
	}, func(id, role, content string, created int64) {
		messages = append(messages, []any{id, role, content, "complete", created})
	})
	copyRows(b, s, "sessions", []string{"id", "title", "title_source", "created_at", "updated_at", "folder"}, sessions)
	copyRows(b, s, "messages", []string{"session_id", "role", "content", "status", "created_at"}, messages)
	settle(b, s)
	for _, q := range []struct{ name, query string }{
		{"broad", storetest.FixtureBroadQuery},
		{"narrow", storetest.FixtureNarrowQuery},
		{"typing", storetest.FixtureTypingQuery},
	} {
		var matches int
		if err := s.pool.QueryRow(ctx, "SELECT count(*) FROM messages WHERE content_tsv @@ to_tsquery('ctxls', $1)", tsQuery(searchWords(q.query))).Scan(&matches); err != nil || (matches == 0 && !testing.Short()) {
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

// BenchmarkAppendMessage is the store's write path of a turn: a message
// stored (with its session's activity) in one transaction, from 1 and
// from 8 goroutines (sessions of their own, as 8 editors' turns), on each
// store. docs/scaling.md takes its write rates from these.
func BenchmarkAppendMessage(b *testing.B) {
	for _, backend := range []string{"sqlite", "postgres"} {
		for _, writers := range []int{1, 8} {
			b.Run(fmt.Sprintf("%s/writers=%d", backend, writers), func(b *testing.B) {
				var s session.Store
				if backend == "sqlite" {
					st, err := sqlite.Open(b.TempDir())
					if err != nil {
						b.Fatal(err)
					}
					b.Cleanup(func() { st.Close() })
					s = st
				} else {
					s = openBenchPG(b)
				}
				ids := make([]string, writers)
				for i := range ids {
					ss, err := s.Create(ctx, "")
					if err != nil {
						b.Fatal(err)
					}
					ids[i] = ss.ID
				}
				// RunParallel starts parallelism × GOMAXPROCS (2) goroutines:
				// writers of them, each with a session of its own.
				var n atomic.Int32
				b.SetParallelism(max(1, writers/2))
				b.ResetTimer() // not the database's creation
				b.RunParallel(func(pb *testing.PB) {
					i := int(n.Add(1)-1) % writers
					for pb.Next() {
						if err := s.AppendMessage(ctx, &session.Message{SessionID: ids[i], Role: session.RoleUser, Content: "a question of a few words"}); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		}
	}
}

// fixture sizes shrink with -short (bench/run --short, CI).
func size(full, short int) int {
	if testing.Short() {
		return short
	}
	return full
}
