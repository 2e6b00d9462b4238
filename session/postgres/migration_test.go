package postgres

import (
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/session"
	"github.com/jackc/pgx/v5"
)

// TestMigration0011 takes a database at schema 0010 holding messages of
// every status it knew, has Init apply 0011 (status "cancelled") alone,
// and checks that every row is kept as it was and a cancelled answer is
// stored.
func TestMigration0011(t *testing.T) {
	t.Parallel()
	name := newPGDatabaseBare(t)
	dsn := pgShared.cluster.DSN("", name)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := conn.Exec(ctx, q, args...); err != nil {
			t.Fatal(q, err)
		}
	}
	names, _ := fs.Glob(pgMigrations, "migrations/*.sql")
	slices.Sort(names)
	exec("CREATE TABLE ctxls_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())")
	pgShared.initMu.Lock()
	for _, n := range names {
		base := strings.TrimPrefix(n, "migrations/")
		if base >= "0011" {
			break
		}
		text, _ := pgMigrations.ReadFile(n)
		if _, err := conn.Exec(ctx, string(text)); err != nil {
			pgShared.initMu.Unlock()
			t.Fatal(base, err)
		}
		exec("INSERT INTO ctxls_migrations (name) VALUES ($1)", base)
	}
	pgShared.initMu.Unlock()
	exec("INSERT INTO sessions (id, title, title_source, created_at, updated_at, folder) VALUES ('s1', 'Old', 'user', 1, 1, 'f1')")
	statuses := []string{"complete", "interrupted", "error", "declined", "complete"}
	for i, st := range statuses {
		role := []string{"user", "assistant", "assistant", "tool", "user"}[i]
		exec(`INSERT INTO messages (session_id, role, content, status, created_at, prompt_tokens, completion_tokens, cached_tokens, model)
			VALUES ('s1', $1, $2, $3, $4, $5, $6, $7, 'm1')`, role, "message about zebras "+st, st, 10+i, 100+i, i, 50+i)
	}
	if _, err := conn.Exec(ctx, "UPDATE messages SET status = 'cancelled' WHERE status = 'interrupted'"); err == nil {
		t.Fatal("schema 0010 took status cancelled")
	}

	pgShared.initMu.Lock()
	applied, err := Init(ctx, dsn)
	pgShared.initMu.Unlock()
	var later []string // 0011 and every migration after it
	for _, n := range names {
		if base := strings.TrimPrefix(n, "migrations/"); base >= "0011" {
			later = append(later, base)
		}
	}
	if err != nil || len(later) < 1 || later[0] != "0011_message_cancelled.sql" || !slices.Equal(applied, later) {
		t.Fatalf("Init on a database at 0010: %v %v", applied, err)
	}
	s, err := Open(ctx, filepath.Join(t.TempDir(), "data"), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	msgs, err := s.Messages(ctx, "s1")
	if err != nil || len(msgs) != len(statuses) {
		t.Fatalf("messages after the migration: %+v %v", msgs, err)
	}
	for i, st := range statuses {
		m := msgs[i]
		if string(m.Status) != st || m.Content != "message about zebras "+st || m.Model != "m1" || m.Usage == nil || m.Usage.CachedTokens != 50+i || m.Usage.CompletionTokens != i {
			t.Errorf("message %d after the migration: %+v (usage %+v)", i, m, m.Usage)
		}
	}
	if hits, err := s.Search(ctx, "zebras", 10); err != nil || len(hits) != len(statuses) {
		t.Errorf("search after the migration: %d hits %v", len(hits), err)
	}
	a := &session.Message{SessionID: "s1", Role: session.RoleAssistant, Content: "okapis", Status: session.StatusStreaming}
	if err := s.AppendMessage(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateMessage(ctx, a.ID, "okapis sleep", session.StatusCancelled, nil); err != nil {
		t.Fatalf("storing a cancelled answer: %v", err)
	}
	if msgs, _ := s.Messages(ctx, "s1"); len(msgs) != len(statuses)+1 || msgs[len(msgs)-1].Status != session.StatusCancelled {
		t.Errorf("after storing a cancelled answer: %+v", msgs)
	}
}
