package storetest

import (
	"errors"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/session"
)

func init() {
	tests = append(tests, struct {
		name string
		fn   func(t *testing.T, e *Env)
	}{"EditLog", withStore(testEditLog)})
}

// testEditLog: the model's changes to files are kept per session, oldest
// first, exactly as recorded; marked undone and back; refused for an
// unknown session or a change of another session; gone with their session.
func testEditLog(t *testing.T, s Store) {
	l, ok := s.(session.EditLog)
	if !ok {
		t.Fatalf("%T keeps no edit log", s)
	}
	a, err := s.Create(ctx, "Edited")
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Create(ctx, "Other")
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("ünïcode line\n", 5000)
	recs := []*session.FileEdit{
		{SessionID: a.ID, Turn: 7, Path: "/w/main.go", Start: 12, Removed: "old", Inserted: "new", BeforeHash: session.TextHash("x old"), AfterHash: session.TextHash("x new")},
		{SessionID: a.ID, Turn: 7, Path: "/w/new.go", Created: true, Inserted: big, BeforeHash: session.TextHash(""), AfterHash: session.TextHash(big), OnDisk: true},
		{SessionID: b.ID, Turn: 3, Path: "/w/b.go", Start: 0, Removed: "a", Inserted: ""},
		{SessionID: a.ID, Turn: 9, Path: "/w/main.go", Start: 1 << 20, Removed: "", Inserted: "tail 🙂"},
	}
	for _, c := range recs {
		if err := l.RecordEdit(ctx, c); err != nil {
			t.Fatal(err)
		}
		if c.ID == 0 || c.CreatedAt.IsZero() {
			t.Fatalf("recorded without id or time: %+v", c)
		}
	}
	got, err := l.Edits(ctx, a.ID)
	if err != nil || len(got) != 3 {
		t.Fatalf("Edits: %d %v", len(got), err)
	}
	for i, want := range []*session.FileEdit{recs[0], recs[1], recs[3]} {
		g := got[i]
		if g.ID != want.ID || g.Turn != want.Turn || g.Path != want.Path || g.Created != want.Created || g.Start != want.Start ||
			g.Removed != want.Removed || g.Inserted != want.Inserted || g.BeforeHash != want.BeforeHash || g.AfterHash != want.AfterHash ||
			g.OnDisk != want.OnDisk || g.Undone || g.SessionID != a.ID {
			t.Errorf("change %d read back as %+v, want %+v", i, g, *want)
		}
	}

	if err := l.SetUndone(ctx, a.ID, []int64{recs[0].ID, recs[1].ID, recs[0].ID}, true, "undid main.go"); err != nil {
		t.Fatal(err)
	}
	got, _ = l.Edits(ctx, a.ID)
	if !got[0].Undone || !got[1].Undone || got[2].Undone || got[0].ToggledAt.IsZero() || !got[2].ToggledAt.IsZero() {
		t.Errorf("after SetUndone: %+v", got)
	}
	notes := func(want ...string) {
		t.Helper()
		ss, err := s.Get(ctx, a.ID)
		if err != nil || strings.Join(ss.Meta.EditNotes, "|") != strings.Join(want, "|") {
			t.Errorf("the session's edit notes: %q %v, want %q", ss.Meta.EditNotes, err, want)
		}
	}
	notes("undid main.go")
	if err := l.SetUndone(ctx, a.ID, nil, false, "a note alone"); err != nil {
		t.Fatal(err)
	}
	notes("undid main.go", "a note alone")
	// A change of another session: refused, nothing marked.
	if err := l.SetUndone(ctx, a.ID, []int64{recs[3].ID, recs[2].ID}, true, "never"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("SetUndone of another session's change: %v", err)
	}
	if got, _ = l.Edits(ctx, a.ID); got[2].Undone {
		t.Error("a refused SetUndone marked a change")
	}
	notes("undid main.go", "a note alone") // nor noted
	if err := l.SetUndone(ctx, a.ID, []int64{recs[1].ID}, false, "redid new.go"); err != nil {
		t.Fatal(err)
	}
	if got, _ = l.Edits(ctx, a.ID); !got[0].Undone || got[1].Undone || got[1].ToggledAt.Before(got[0].ToggledAt) {
		t.Errorf("after redo: %+v", got)
	}
	if err := l.TakeEditNotes(ctx, a.ID, 2); err != nil {
		t.Fatal(err)
	}
	notes("redid new.go")
	if err := l.TakeEditNotes(ctx, a.ID, 5); err != nil {
		t.Fatal(err)
	}
	notes()

	for _, err := range []error{
		l.RecordEdit(ctx, &session.FileEdit{SessionID: "nosuchsession", Path: "/w/x"}),
		func() error { _, err := l.Edits(ctx, "nosuchsession"); return err }(),
		l.SetUndone(ctx, "nosuchsession", []int64{recs[0].ID}, true, ""),
		l.TakeEditNotes(ctx, "nosuchsession", 1),
	} {
		if !errors.Is(err, session.ErrNotFound) {
			t.Errorf("unknown session: %v", err)
		}
	}
	if err := l.RecordEdit(ctx, &session.FileEdit{SessionID: a.ID}); !errors.Is(err, session.ErrInvalid) {
		t.Errorf("a change without its file: %v", err)
	}

	if err := s.Delete(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Edits(ctx, a.ID); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("a deleted session's changes: %v", err)
	}
	if got, err := l.Edits(ctx, b.ID); err != nil || len(got) != 1 {
		t.Errorf("the other session's changes: %d %v", len(got), err)
	}
}
