package sqlite

import (
	"context"
	"database/sql"
	"testing"

	"github.com/ctxls/ctxls/session"
)

// TestKeptStatements: a connection prepares a query once and runs it
// again from what it kept; the same query run while its rows are still
// open (nested, in one transaction) gets a statement of its own; scripts
// of several statements run as before; closing the store closes them all.
func TestKeptStatements(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	ss, _ := s.Create(ctx, "kept")
	for _, c := range []string{"one", "two", "three"} {
		if err := s.AppendMessage(ctx, &session.Message{SessionID: ss.ID, Role: session.RoleUser, Content: c}); err != nil {
			t.Fatal(err)
		}
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	kept := func() (n int, ok bool) {
		conn.Raw(func(dc any) error {
			var k *keptConn
			if k, ok = dc.(*keptConn); ok {
				n = len(k.stmts)
			}
			return nil
		})
		return n, ok
	}
	const q = "SELECT content FROM messages WHERE session_id = ? ORDER BY id"
	before, ok := kept()
	if !ok {
		t.Fatal("the store's connections are not keptConn")
	}
	read := func(q interface {
		QueryContext(context.Context, string, ...any) (*sql.Rows, error)
	}, inner func()) []string {
		rows, err := q.QueryContext(ctx, "SELECT content FROM messages WHERE session_id = ? ORDER BY id", ss.ID)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var c string
			rows.Scan(&c)
			out = append(out, c)
			if inner != nil && len(out) == 1 {
				inner()
			}
		}
		return out
	}
	for range 3 {
		rows, err := conn.QueryContext(ctx, q, ss.ID)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for rows.Next() {
			n++
		}
		rows.Close()
		if n != 3 {
			t.Fatalf("%d rows", n)
		}
	}
	if after, _ := kept(); after != before+1 {
		t.Errorf("kept statements %d → %d after running one query three times", before, after)
	}

	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var nested []string
	outer := read(tx, func() { nested = read(tx, nil) })
	if len(outer) != 3 || len(nested) != 3 || outer[2] != "three" || nested[0] != "one" {
		t.Errorf("nested reads: %v inside %v", nested, outer)
	}
	if _, err := tx.Exec("UPDATE messages SET content = content WHERE session_id = ?; UPDATE sessions SET title = title WHERE id = ?", ss.ID, ss.ID); err != nil {
		t.Errorf("a script: %v", err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := read(conn, nil); len(got) != 3 {
		t.Errorf("after the transaction: %v", got)
	}
}
