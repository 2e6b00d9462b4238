package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/internal/pgtest"
)

// setup starts a cluster, runs Init and makes two people's roles.
func setup(t *testing.T) *pgtest.Cluster {
	t.Helper()
	c := pgtest.Start(t)
	applied, err := Init(context.Background(), c.DSN("", "postgres"))
	if err != nil || len(applied) != pgSchemaVersion() {
		t.Fatalf("Init: %v %v", applied, err)
	}
	// What docs/scaling.md will tell an administrator to run per person.
	for _, role := range []string{"alice", "bob"} {
		if out, err := c.Psql(t, "", "postgres", "CREATE ROLE "+role+" LOGIN IN ROLE ctxls_user"); err != nil {
			t.Fatalf("create role %s: %v %s", role, err, out)
		}
	}
	return c
}

func TestInitIsIdempotent(t *testing.T) {
	t.Parallel()
	c := setup(t)
	applied, err := Init(context.Background(), c.DSN("", "postgres"))
	if err != nil || len(applied) != 0 {
		t.Errorf("second Init: %v %v", applied, err)
	}
	if _, err := Init(context.Background(), c.DSN("alice", "postgres")); err == nil {
		t.Error("Init as a role that may not create tables succeeded")
	}
}

// TestRowLevelSecurity: through plain SQL, a role never reads or writes
// another role's private sessions, their messages, context or files; a
// team session is readable and writable by the team, and only its owner
// deletes it or changes its visibility.
func TestRowLevelSecurity(t *testing.T) {
	t.Parallel()
	c := setup(t)
	sql := func(role, q string) (string, error) { return c.Psql(t, role, "postgres", q) }
	must := func(role, q string) string {
		t.Helper()
		out, err := sql(role, q)
		if err != nil {
			t.Fatalf("%s: %s: %v\n%s", role, q, err, out)
		}
		return out
	}
	denied := func(role, q string) {
		t.Helper()
		if out, err := sql(role, q); err == nil {
			t.Errorf("%s was allowed: %s\n%s", role, q, out)
		}
	}
	must("alice", `INSERT INTO sessions (id, title, title_source, created_at, updated_at, folder) VALUES ('s1', 'Alice private', 'user', 1, 1, 'f1');
		INSERT INTO messages (session_id, role, content, status, created_at) VALUES ('s1', 'user', 'secret plan', 'complete', 1);
		INSERT INTO context_items (session_id, set_name, position, item) VALUES ('s1', 'files', 0, '/a/x.go');
		INSERT INTO files (session_id, subdir, name, content, updated_at) VALUES ('s1', 'sources', 'a.txt', 'data', 1);`)
	if got := must("alice", "SELECT owner, visibility FROM sessions"); got != "alice|private" {
		t.Errorf("alice's session: %q", got)
	}
	for _, table := range []string{"sessions", "messages", "context_items", "files"} {
		if got := must("bob", "SELECT count(*) FROM "+table); got != "0" {
			t.Errorf("bob sees %s rows of alice's private session in %s", got, table)
		}
	}
	denied("bob", `INSERT INTO messages (session_id, role, content, status, created_at) VALUES ('s1', 'user', 'injected', 'complete', 2)`)
	must("bob", `UPDATE sessions SET title = 'hijacked' WHERE id = 's1'`) // matches no visible row
	must("bob", `DELETE FROM messages WHERE session_id = 's1'`)
	denied("bob", `INSERT INTO sessions (id, owner, title, title_source, created_at, updated_at, folder) VALUES ('s2', 'alice', 'forged', 'user', 1, 1, 'f2')`)
	denied("bob", `SELECT share('s1', 'team')`)
	if got := must("alice", "SELECT title, (SELECT count(*) FROM messages) FROM sessions"); got != "Alice private|1" {
		t.Errorf("after bob's attempts alice has %q", got)
	}

	must("alice", `SELECT share('s1', 'team')`)
	if got := must("bob", "SELECT title, visibility FROM sessions"); got != "Alice private|team" {
		t.Errorf("bob sees the team session as %q", got)
	}
	must("bob", `INSERT INTO messages (session_id, role, content, status, created_at) VALUES ('s1', 'user', 'from bob', 'complete', 3)`)
	if got := must("alice", "SELECT string_agg(content, ',' ORDER BY id) FROM messages"); got != "secret plan,from bob" {
		t.Errorf("messages: %q", got)
	}
	denied("bob", `UPDATE sessions SET visibility = 'private' WHERE id = 's1'`)
	denied("bob", `UPDATE sessions SET owner = 'bob' WHERE id = 's1'`)
	denied("bob", `SELECT share('s1', 'private')`)
	must("bob", `DELETE FROM sessions WHERE id = 's1'`) // not his: deletes nothing
	if got := must("alice", "SELECT count(*) FROM sessions"); got != "1" {
		t.Errorf("bob deleted alice's team session")
	}
	if out, err := sql("alice", `SELECT share('s1', 'public')`); err == nil || !strings.Contains(out, "private or team") {
		t.Errorf("a bad visibility: %v %s", err, out)
	}
	must("alice", `DELETE FROM sessions WHERE id = 's1'`)
	if got := must("alice", "SELECT count(*) FROM messages"); got != "0" {
		t.Errorf("messages outlived their session: %s", got)
	}
}
