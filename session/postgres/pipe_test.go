package postgres

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/ctxls/ctxls/session"
	"github.com/jackc/pgx/v5"
)

// TestTurnStateReadsBeforeTheInsert: a turn's reads come back while its
// message is still being written (the turn's request goes out meanwhile),
// and Stored waits for the write. Here another transaction holds the
// session's row, so the insert (which touches the session) waits for it:
// TurnState returns all the same, with History and the session as they were,
// and Stored returns once the row is let go of, the message stored.
func TestTurnStateReadsBeforeTheInsert(t *testing.T) {
	t.Parallel()
	dsn := newPGDatabase(t)
	s, err := Open(ctx, filepath.Join(t.TempDir(), "data"), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ss, err := s.Create(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AppendMessage(ctx, &session.Message{SessionID: ss.ID, Role: session.RoleUser, Content: "first"}); err != nil {
		t.Fatal(err)
	}

	other, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	tx, err := other.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE", ss.ID); err != nil {
		t.Fatal(err)
	}

	user := &session.Message{SessionID: ss.ID, Role: session.RoleUser, Content: "second"}
	got := make(chan *session.TurnState, 1)
	failed := make(chan error, 1)
	go func() {
		st, err := s.TurnState(ctx, ss.ID, user, nil)
		if err != nil {
			failed <- err
			return
		}
		got <- st
	}()
	var st *session.TurnState
	select {
	case st = <-got:
	case err := <-failed:
		t.Fatal(err)
	case <-time.After(10 * time.Second):
		t.Fatal("TurnState waited for the message's insert, which waits for another transaction")
	}
	if st.Stored == nil {
		t.Fatal("TurnState returned with the message stored, yet its insert could not have run")
	}
	if len(st.History) != 1 || st.History[0].Content != "first" || st.Session.MessageCount != 1 {
		t.Errorf("read before the insert: history %+v, %d messages", st.History, st.Session.MessageCount)
	}
	stored := make(chan error, 1)
	go func() { stored <- st.Stored() }()
	select {
	case err := <-stored:
		t.Fatalf("Stored returned (%v) while the insert waits", err)
	case <-time.After(200 * time.Millisecond):
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-stored; err != nil {
		t.Fatal(err)
	}
	msgs, err := s.Messages(ctx, ss.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 || msgs[1].Content != "second" || msgs[1].ID != user.ID || user.ID == 0 {
		t.Errorf("after Stored: %+v (the turn's message has id %d)", msgs, user.ID)
	}
}
