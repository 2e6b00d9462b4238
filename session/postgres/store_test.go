package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxls/ctxls/internal/pgtest"
	"github.com/ctxls/ctxls/session"
	"github.com/ctxls/ctxls/session/sqlite"
)

// What only the PostgreSQL store does: one database seen from two
// machines (two data directories, each with its mirror), and people who
// see only their own and their team's sessions. The behaviour both stores
// share is in the conformance suite.

// pgPeople starts a cluster with the schema and the roles alice and bob.
func pgPeople(t *testing.T) *pgtest.Cluster {
	t.Helper()
	c := pgtest.Start(t)
	if _, err := Init(context.Background(), c.DSN("", "postgres")); err != nil {
		t.Fatal(err)
	}
	for _, role := range []string{"alice", "bob"} {
		if out, err := c.Psql(t, "", "postgres", "CREATE ROLE "+role+" LOGIN IN ROLE ctxls_user"); err != nil {
			t.Fatalf("create role %s: %v %s", role, err, out)
		}
	}
	return c
}

func openPG(t *testing.T, c *pgtest.Cluster, role string) *Store {
	t.Helper()
	s, err := Open(context.Background(), t.TempDir(), c.DSN(role, "postgres"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPostgresTwoMachines: what one machine does to a session is in the
// other's mirror folder the next time that machine looks: files, outputs,
// removals, a new title's folder name and history.md; a file put into the
// folder by hand stays.
func TestPostgresTwoMachines(t *testing.T) {
	t.Parallel()
	c := pgPeople(t)
	ctx := context.Background()
	a, b := openPG(t, c, "alice"), openPG(t, c, "alice")

	ss, err := a.Create(ctx, "Quarterly report")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.AddFile(ctx, ss.ID, "spec.md", strings.NewReader("# spec")); err != nil {
		t.Fatal(err)
	}
	if _, err := a.WriteOutput(ctx, ss.ID, "results/charts/q1.csv", []byte("a,b\n1,2\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := a.UpdateContext(ctx, ss.ID, session.SetFiles, []string{"/w/spec.md"}, session.ModeReplace, session.AddedByUser, nil); err != nil {
		t.Fatal(err)
	}
	if err := a.AppendMessage(ctx, &session.Message{SessionID: ss.ID, Role: session.RoleUser, Content: "numbers for Q1"}); err != nil {
		t.Fatal(err)
	}

	onB, err := b.Get(ctx, ss.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(onB.Folder, b.DataDir()) || onB.FileCount != 1 || onB.MessageCount != 1 {
		t.Fatalf("b sees %+v", onB)
	}
	if got := readString(t, filepath.Join(onB.Folder, "sources", "spec.md")); got != "# spec" {
		t.Errorf("b's mirror of spec.md: %q", got)
	}
	if got := readString(t, filepath.Join(onB.Folder, "results", "charts", "q1.csv")); got != "a,b\n1,2\n" {
		t.Errorf("b's mirror of q1.csv: %q", got)
	}
	if names, err := b.ListFiles(ctx, ss.ID, "results"); err != nil || !slices.Equal(names, []string{"charts/q1.csv"}) {
		t.Errorf("b lists results %v %v", names, err)
	}
	if err := b.FlushHistory(); err != nil {
		t.Fatal(err)
	}
	if h := readString(t, filepath.Join(onB.Folder, "history.md")); !strings.Contains(h, "numbers for Q1") || !strings.Contains(h, "/w/spec.md") {
		t.Errorf("b's history.md:\n%s", h)
	}
	handmade := filepath.Join(onB.Folder, "sources", "notes.txt")
	if err := os.WriteFile(handmade, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}

	// b renames, replaces an output and removes the source; a follows.
	if _, err := b.Rename(ctx, ss.ID, "Q1 report", session.TitleUser); err != nil {
		t.Fatal(err)
	}
	if _, err := b.WriteOutput(ctx, ss.ID, "results/charts/q1.csv", []byte("a,b\n1,3\n")); err != nil {
		t.Fatal(err)
	}
	if err := b.RemoveFile(ctx, ss.ID, "spec.md"); err != nil {
		t.Fatal(err)
	}
	onA, err := a.Get(ctx, ss.ID)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(onA.Folder) == filepath.Base(ss.Folder) || !strings.Contains(onA.Folder, "q1-report") {
		t.Errorf("a's folder after the rename: %s (was %s)", onA.Folder, ss.Folder)
	}
	if _, err := os.Stat(ss.Folder); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a's folder under the old name is still there: %v", err)
	}
	if got := readString(t, filepath.Join(onA.Folder, "results", "charts", "q1.csv")); got != "a,b\n1,3\n" {
		t.Errorf("a's mirror of the replaced q1.csv: %q", got)
	}
	if _, err := os.Stat(filepath.Join(onA.Folder, "sources", "spec.md")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("spec.md removed on b is still in a's mirror: %v", err)
	}
	if err := a.FlushHistory(); err != nil {
		t.Fatal(err)
	}
	if h := readString(t, filepath.Join(onA.Folder, "history.md")); !strings.HasPrefix(h, "# Q1 report") {
		t.Errorf("a's history.md after the rename:\n%s", h)
	}

	// b's hand-made file stays in b's folder, and is not the database's.
	if _, err := b.Get(ctx, ss.ID); err != nil {
		t.Fatal(err)
	}
	onB, _ = b.Get(ctx, ss.ID)
	if got := readString(t, filepath.Join(onB.Folder, "sources", "notes.txt")); got != "mine" {
		t.Errorf("the hand-made file: %q", got)
	}
	if names, _ := a.ListFiles(ctx, ss.ID, "sources"); len(names) != 0 {
		t.Errorf("a lists sources %v", names)
	}

	// Deleting on a removes the session for b, whose stale folder stays
	// until b looks for it.
	if err := a.Delete(ctx, ss.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get(ctx, ss.ID); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("b after a's delete: %v", err)
	}
}

// TestPostgresPrivacyThroughTheStore: bob's daemon cannot read, change or
// find alice's private session; once she shares it with the team he reads
// and writes it, but only she deletes it or changes who sees it.
func TestPostgresPrivacyThroughTheStore(t *testing.T) {
	t.Parallel()
	c := pgPeople(t)
	ctx := context.Background()
	alice, bob := openPG(t, c, "alice"), openPG(t, c, "bob")

	ss, err := alice.Create(ctx, "Salary review")
	if err != nil {
		t.Fatal(err)
	}
	if ss.Owner != "alice" || ss.Visibility != session.VisibilityPrivate {
		t.Errorf("a new session: owner %q visibility %q", ss.Owner, ss.Visibility)
	}
	if err := alice.AppendMessage(ctx, &session.Message{SessionID: ss.ID, Role: session.RoleUser, Content: "confidential figures"}); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.AddFile(ctx, ss.ID, "figures.csv", strings.NewReader("x")); err != nil {
		t.Fatal(err)
	}

	for name, err := range map[string]error{
		"Get":           func() error { _, err := bob.Get(ctx, ss.ID); return err }(),
		"Messages":      func() error { _, err := bob.Messages(ctx, ss.ID); return err }(),
		"Context":       func() error { _, err := bob.Context(ctx, ss.ID); return err }(),
		"AppendMessage": bob.AppendMessage(ctx, &session.Message{SessionID: ss.ID, Role: session.RoleUser, Content: "injected"}),
		"Rename":        func() error { _, err := bob.Rename(ctx, ss.ID, "mine now", session.TitleUser); return err }(),
		"SetContext": func() error {
			_, err := bob.UpdateContext(ctx, ss.ID, session.SetFiles, []string{"/x"}, session.ModeReplace, session.AddedByUser, nil)
			return err
		}(),
		"AddFile":   func() error { _, err := bob.AddFile(ctx, ss.ID, "x.txt", strings.NewReader("x")); return err }(),
		"ListFiles": func() error { _, err := bob.ListFiles(ctx, ss.ID, ""); return err }(),
		"Delete":    bob.Delete(ctx, ss.ID),
		"Share":     func() error { _, err := bob.Share(ctx, ss.ID, session.VisibilityTeam); return err }(),
		"ResolveID": func() error { _, err := bob.ResolveID(ctx, ss.ID[:6]); return err }(),
	} {
		if !errors.Is(err, session.ErrNotFound) {
			t.Errorf("bob's %s on alice's private session: %v, want not found", name, err)
		}
	}
	if list, _, err := bob.List(ctx, session.ListOptions{}); err != nil || len(list) != 0 {
		t.Errorf("bob lists %v %v", list, err)
	}
	if hits, err := bob.Search(ctx, "confidential", 10); err != nil || len(hits) != 0 {
		t.Errorf("bob's search finds %v %v", hits, err)
	}
	if hits, err := alice.Search(ctx, "confid", 10); err != nil || len(hits) != 1 || hits[0].Snippet != "«confidential» figures" {
		t.Errorf("alice's search: %+v %v", hits, err)
	}

	shared, err := alice.Share(ctx, ss.ID, session.VisibilityTeam)
	if err != nil || shared.Visibility != session.VisibilityTeam {
		t.Fatalf("share: %+v %v", shared, err)
	}
	if err := bob.AppendMessage(ctx, &session.Message{SessionID: ss.ID, Role: session.RoleUser, Content: "bob's view"}); err != nil {
		t.Fatal(err)
	}
	onBob, err := bob.Get(ctx, ss.ID)
	if err != nil || onBob.MessageCount != 2 || onBob.Owner != "alice" {
		t.Fatalf("bob's view of the team session: %+v %v", onBob, err)
	}
	if got := readString(t, filepath.Join(onBob.Folder, "sources", "figures.csv")); got != "x" {
		t.Errorf("bob's mirror of the team session's file: %q", got)
	}
	if err := bob.Delete(ctx, ss.ID); !errors.Is(err, session.ErrPermission) || !strings.Contains(err.Error(), "only its owner") {
		t.Errorf("bob deletes the team session: %v", err)
	}
	if _, err := bob.Share(ctx, ss.ID, session.VisibilityPrivate); !errors.Is(err, session.ErrPermission) || !strings.Contains(err.Error(), "only its owner") {
		t.Errorf("bob unshares: %v", err)
	}
	if _, err := alice.Share(ctx, ss.ID, "public"); !errors.Is(err, session.ErrInvalid) {
		t.Errorf("a bad visibility: %v", err)
	}
	if _, err := alice.Share(ctx, ss.ID, session.VisibilityPrivate); err != nil {
		t.Fatal(err)
	}
	if _, err := bob.Get(ctx, ss.ID); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("bob after alice made it private again: %v", err)
	}
}

// TestOpenPostgresSaysWhatToDo: a database without the schema, and a role
// that is not a member of ctxls_user, are met with what to run.
func TestOpenPostgresSaysWhatToDo(t *testing.T) {
	t.Parallel()
	c := pgtest.Start(t)
	ctx := context.Background()
	_, err := Open(ctx, t.TempDir(), c.DSN("", "postgres"))
	if err == nil || !strings.Contains(err.Error(), "ctxls store init") {
		t.Errorf("no schema: %v", err)
	}
	if _, err := Init(ctx, c.DSN("", "postgres")); err != nil {
		t.Fatal(err)
	}
	if out, err := c.Psql(t, "", "postgres", "CREATE ROLE carol LOGIN"); err != nil {
		t.Fatal(err, out)
	}
	_, err = Open(ctx, t.TempDir(), c.DSN("carol", "postgres"))
	if err == nil || !strings.Contains(err.Error(), "GRANT ctxls_user TO carol") {
		t.Errorf("not a member: %v", err)
	}
}

// watcher collects what Watch reports.
type watcher struct {
	mu      sync.Mutex
	changes []session.Change
}

// listening waits until n connections to s's database listen for changes
// (their Watch has run its LISTEN).
func listening(t *testing.T, s *Store, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var got int
		err := s.pool.QueryRow(context.Background(), "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN ctxls_changes'").Scan(&got)
		if err == nil && got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d connections listen for changes, want %d (%v)", got, n, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func watch(t *testing.T, s session.Store) *watcher {
	t.Helper()
	w := &watcher{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Watch(ctx, func(string) bool { return true }, func(c session.Change) {
			w.mu.Lock()
			w.changes = append(w.changes, c)
			w.mu.Unlock()
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
	return w
}

// waitFor waits up to 3 s for a change that ok accepts and returns it.
func (w *watcher) waitFor(t *testing.T, what string, ok func(session.Change) bool) session.Change {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		w.mu.Lock()
		for i, c := range w.changes {
			if ok(c) {
				w.changes = append(w.changes[:i:i], w.changes[i+1:]...)
				w.mu.Unlock()
				return c
			}
		}
		w.mu.Unlock()
		time.Sleep(20 * time.Millisecond)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	t.Fatalf("no change %s within 3 s; got %+v", what, w.changes)
	return session.Change{}
}

func (w *watcher) all() []session.Change {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.changes)
}

// TestPostgresWatch: one machine's changes reach the other's Watch, each
// burst as one Change, a file already in its mirror; a store is not told
// its own changes; after PostgreSQL restarts the watch says so and goes
// on.
func TestPostgresWatch(t *testing.T) {
	t.Parallel()
	c := pgPeople(t)
	ctx := context.Background()
	a, b := openPG(t, c, "alice"), openPG(t, c, "alice")
	wa, wb := watch(t, a), watch(t, b)
	listening(t, a, 2)

	ss, err := a.Create(ctx, "Watched")
	if err != nil {
		t.Fatal(err)
	}
	has := func(kind string) func(session.Change) bool {
		return func(c session.Change) bool { return c.SessionID == ss.ID && slices.Contains(c.Kinds, kind) }
	}
	wb.waitFor(t, "for the new session", has("sessions"))
	a.AppendMessage(ctx, &session.Message{SessionID: ss.ID, Role: session.RoleUser, Content: "hello"})
	wb.waitFor(t, "for the message", has("messages"))
	a.UpdateContext(ctx, ss.ID, session.SetFiles, []string{"/w/a.go"}, session.ModeReplace, session.AddedByUser, nil)
	wb.waitFor(t, "for the context", has("context_items"))
	a.WriteOutput(ctx, ss.ID, "data/x.json", []byte("{}"))
	ch := wb.waitFor(t, "for the file", has("files"))
	onB, err := b.row(ctx, b.pool, ss.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(ch.Files) != 1 || ch.Files[0] != (session.FileChange{Subdir: "data", Name: "x.json", Size: 2}) {
		t.Errorf("the file change: %+v", ch.Files)
	} else if got := readString(t, filepath.Join(onB.Folder, "data", "x.json")); got != "{}" {
		t.Errorf("b's mirror when told: %q", got)
	}
	if got := wa.all(); len(got) != 0 {
		t.Errorf("a was told its own changes: %+v", got)
	}

	c.Stop(t)
	c.Start(t)
	wb.waitFor(t, "saying the connection is back", func(c session.Change) bool { return c.Reconnected })
	if err := a.AppendMessage(ctx, &session.Message{SessionID: ss.ID, Role: session.RoleUser, Content: "after the restart"}); err != nil {
		t.Fatalf("a after the restart: %v", err)
	}
	wb.waitFor(t, "after the restart", has("messages"))
	if err := a.Delete(ctx, ss.ID); err != nil {
		t.Fatal(err)
	}
	wb.waitFor(t, "for the delete", func(c session.Change) bool { return c.SessionID == ss.ID && c.Deleted })
}

// TestPostgresTurnLock: one turn per session across daemons; a daemon
// that goes away lets go of its turn.
func TestPostgresTurnLock(t *testing.T) {
	t.Parallel()
	c := pgPeople(t)
	ctx := context.Background()
	a, b := openPG(t, c, "alice"), openPG(t, c, "alice")
	ss, err := a.Create(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	unlock, _, err := a.LockTurn(ctx, ss.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.LockTurn(ctx, ss.ID); !errors.Is(err, session.ErrTurnElsewhere) {
		t.Errorf("b's turn while a's runs: %v", err)
	}
	other, _ := a.Create(ctx, "")
	if u, _, err := b.LockTurn(ctx, other.ID); err != nil {
		t.Errorf("another session's turn: %v", err)
	} else {
		u()
	}
	unlock()
	unlock() // twice is harmless
	u, _, err := b.LockTurn(ctx, ss.ID)
	if err != nil {
		t.Fatalf("b after a's turn ended: %v", err)
	}
	u()

	if _, _, err := a.LockTurn(ctx, ss.ID); err != nil {
		t.Fatal(err)
	}
	a.Close() // as a daemon that exits mid-turn
	// The server lets go of the lock when its backend ends, a moment after
	// the connection closed.
	deadline := time.Now().Add(3 * time.Second)
	for {
		u, _, err := b.LockTurn(ctx, ss.ID)
		if err == nil {
			u()
			break
		}
		if !errors.Is(err, session.ErrTurnElsewhere) || time.Now().After(deadline) {
			t.Fatalf("b after a went away: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestCopyToPostgres: a local store's sessions arrive whole — messages
// with their times, statuses and tool calls, context with who added it,
// the folder's files — and a second run copies nothing twice.
func TestCopyToPostgres(t *testing.T) {
	t.Parallel()
	c := pgPeople(t)
	ctx := context.Background()
	local, err := sqlite.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	a, _ := local.Create(ctx, "Local work")
	b, _ := local.Create(ctx, "")
	msgs := []*session.Message{
		{SessionID: a.ID, Role: session.RoleUser, Content: "plan the migration", Files: []string{"/home/ann/app/db.go", "/home/ann/app/main.go:4-9"}},
		{SessionID: a.ID, Role: session.RoleAssistant, Content: "", ToolCalls: json.RawMessage(`[{"id":"c1","type":"function","function":{"name":"read_file","arguments":"{}"}}]`)},
		{SessionID: a.ID, Role: session.RoleTool, Content: "file text", ToolCallID: "c1"},
		{SessionID: a.ID, Role: session.RoleAssistant, Content: "Here is the plan", Usage: &session.Usage{PromptTokens: 10, CompletionTokens: 4}, Model: "gpt-x"},
		{SessionID: b.ID, Role: session.RoleUser, Content: "left mid-answer"},
		{SessionID: b.ID, Role: session.RoleAssistant, Content: "partial", Status: session.StatusStreaming},
	}
	for _, m := range msgs {
		if err := local.AppendMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	// A summary of a's first three messages: copied with the new ids.
	summary := &session.Message{SessionID: a.ID, Role: session.RoleSystem, Content: "Goal: the plan, step by step.", SummaryOf: &session.Span{First: msgs[0].ID, Last: msgs[2].ID}}
	if err := local.AppendMessage(ctx, summary); err != nil {
		t.Fatal(err)
	}
	msgs = append(msgs, summary)
	local.UpdateContext(ctx, a.ID, session.SetFiles, []string{"/w/a.go", "/w/b.go"}, session.ModeReplace, session.AddedByUser, nil)
	local.UpdateContext(ctx, a.ID, session.SetFiles, []string{"/w/c.go"}, session.ModeMerge, session.AddedByModel, nil)
	local.UpdateContext(ctx, a.ID, "ports", []string{"8080"}, session.ModeReplace, session.AddedByUser, nil)
	local.AddFile(ctx, a.ID, "spec.md", strings.NewReader("# spec"))
	local.WriteOutput(ctx, a.ID, "results/out/report.md", []byte("report"))
	local.WriteOutput(ctx, a.ID, "data/x.bin", []byte{0, 1, 2})
	outside := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(outside, []byte("not to be copied"), 0o600)
	if err := os.Symlink(outside, filepath.Join(a.Folder, "sources", "link")); err != nil {
		t.Fatal(err)
	}
	before, _ := local.Get(ctx, a.ID)

	pg := openPG(t, c, "alice")
	rep, err := Copy(ctx, local, pg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Copied) != 2 || len(rep.Skipped) != 0 || rep.Messages != len(msgs) || rep.Files != 3 {
		t.Errorf("first copy: %d copied, %d skipped, %d messages, %d files", len(rep.Copied), len(rep.Skipped), rep.Messages, rep.Files)
	}
	got, err := pg.Get(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Title != "Local work" || got.TitleSource != session.TitleUser || !got.CreatedAt.Equal(before.CreatedAt) || !got.UpdatedAt.Equal(before.UpdatedAt) || got.Owner != "alice" || got.Visibility != session.VisibilityPrivate {
		t.Errorf("copied session %+v, was %+v", got, before)
	}
	want, _ := local.Messages(ctx, a.ID)
	have, _ := pg.Messages(ctx, a.ID)
	if len(have) != len(want) {
		t.Fatalf("messages: %d, want %d", len(have), len(want))
	}
	for i := range want {
		w, h := want[i], have[i]
		if w.SummaryOf != nil {
			if h.SummaryOf == nil || h.SummaryOf.First != have[0].ID || h.SummaryOf.Last != have[2].ID {
				t.Errorf("the copied summary covers %+v, want messages %d–%d", h.SummaryOf, have[0].ID, have[2].ID)
			}
			w.SummaryOf, h.SummaryOf = nil, nil
		}
		w.ID, h.ID = 0, 0
		if string(w.ToolCalls) != string(h.ToolCalls) || !w.CreatedAt.Equal(h.CreatedAt) {
			t.Errorf("message %d: %+v, want %+v", i, h, w)
		}
		w.ToolCalls, h.ToolCalls, w.CreatedAt, h.CreatedAt = nil, nil, time.Time{}, time.Time{}
		if !reflect.DeepEqual(w, h) {
			t.Errorf("message %d: %+v, want %+v", i, h, w)
		}
	}
	if bm, _ := pg.Messages(ctx, b.ID); len(bm) != 2 || bm[1].Status != session.StatusInterrupted || bm[1].Content != "partial" {
		t.Errorf("the answer left streaming: %+v", bm)
	}
	if sets, _ := pg.Context(ctx, a.ID); !reflect.DeepEqual(sets, session.Context{session.SetFiles: {"/w/a.go", "/w/b.go", "/w/c.go"}, "ports": {"8080"}}) {
		t.Errorf("context %v", sets)
	}
	if by, _ := pg.AddedBy(ctx, a.ID, session.SetFiles); by["/w/c.go"] != session.AddedByModel || by["/w/a.go"] != session.AddedByUser {
		t.Errorf("added by %v", by)
	}
	for sub, names := range map[string][]string{"sources": {"spec.md"}, "results": {"out/report.md"}, "data": {"x.bin"}} {
		if l, err := pg.ListFiles(ctx, a.ID, sub); err != nil || !slices.Equal(l, names) {
			t.Errorf("%s: %v %v, want %v", sub, l, err, names)
		}
	}
	if s := readString(t, filepath.Join(got.Folder, "results", "out", "report.md")); s != "report" {
		t.Errorf("mirrored report: %q", s)
	}
	if hits, _ := pg.Search(ctx, "migration", 5); len(hits) != 1 || hits[0].SessionID != a.ID {
		t.Errorf("search after the copy: %+v", hits)
	}

	again, err := Copy(ctx, local, pg, nil)
	if err != nil || len(again.Copied) != 0 || len(again.Skipped) != 2 || again.Messages != 0 {
		t.Errorf("second copy: %+v %v", again, err)
	}
	if have, _ := pg.Messages(ctx, a.ID); len(have) != len(want) {
		t.Errorf("messages after the second copy: %d", len(have))
	}
}

// TestPostgresTurnLockLost: a lock whose connection breaks (PostgreSQL
// restarted under the turn) says so, so the turn can end.
func TestPostgresTurnLockLost(t *testing.T) {
	t.Parallel()
	c := pgPeople(t)
	ctx := context.Background()
	a := openPG(t, c, "alice")
	ss, err := a.Create(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	unlock, lost, err := a.LockTurn(ctx, ss.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	select {
	case <-lost:
		t.Fatal("lost while the connection is fine")
	case <-time.After(2 * turnCheckEvery):
	}
	c.Stop(t)
	c.Start(t)
	select {
	case <-lost:
	case <-time.After(5 * turnCheckEvery):
		t.Fatal("a lock whose connection broke was not reported lost")
	}
}

// TestPostgresWatchOnlyWhatIsShown: a daemon reads and reports the changes
// of the sessions its editor shows, not every session on the database (no
// query, no mirror folder for the others), but every deletion.
func TestPostgresWatchOnlyWhatIsShown(t *testing.T) {
	t.Parallel()
	c := pgPeople(t)
	ctx := context.Background()
	a, b := openPG(t, c, "alice"), openPG(t, c, "alice")
	shown, _ := a.Create(ctx, "Shown on b")
	other, _ := a.Create(ctx, "Not shown on b")
	w := &watcher{}
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.Watch(wctx, func(id string) bool { return id == shown.ID }, func(c session.Change) {
			w.mu.Lock()
			w.changes = append(w.changes, c)
			w.mu.Unlock()
		})
	}()
	defer func() { cancel(); <-done }()
	listening(t, b, 1)

	a.AddFile(ctx, other.ID, "x.txt", strings.NewReader("x"))
	a.AddFile(ctx, shown.ID, "y.txt", strings.NewReader("y"))
	w.waitFor(t, "for the shown session's file", func(c session.Change) bool { return c.SessionID == shown.ID && len(c.Files) == 1 })
	a.Delete(ctx, other.ID)
	w.waitFor(t, "for the other session's deletion", func(c session.Change) bool { return c.SessionID == other.ID && c.Deleted })
	for _, c := range w.all() {
		if c.SessionID == other.ID {
			t.Errorf("a change of a session b does not show: %+v", c)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(b.DataDir(), "sessions"))
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), other.ID[:6]) {
			t.Errorf("b mirrored a session it does not show: %s", e.Name())
		}
	}
}

// TestPostgresEnforceSoftLimit: over the limit, the data/ files of this
// role's sessions mirrored here go, oldest first, from the database and
// the mirror; results/ and a teammate's shared session are left alone.
func TestPostgresEnforceSoftLimit(t *testing.T) {
	t.Parallel()
	c := pgPeople(t)
	ctx := context.Background()
	alice, bob := openPG(t, c, "alice"), openPG(t, c, "bob")
	now := time.Now()
	clock := func(d time.Duration) { alice.now = func() time.Time { return now.Add(d) } }
	mine, _ := alice.Create(ctx, "Mine")
	big := strings.Repeat("x", 200_000)
	clock(-3 * time.Hour)
	alice.WriteOutput(ctx, mine.ID, "data/old.bin", []byte(big))
	clock(-2 * time.Hour)
	alice.WriteOutput(ctx, mine.ID, "data/mid.bin", []byte(big))
	clock(-time.Hour)
	alice.WriteOutput(ctx, mine.ID, "results/report.md", []byte(big))
	alice.WriteOutput(ctx, mine.ID, "data/new.bin", []byte(big))
	theirs, _ := bob.Create(ctx, "Bob's, shared")
	bob.WriteOutput(ctx, theirs.ID, "data/bob.bin", []byte(big))
	bob.Share(ctx, theirs.ID, session.VisibilityTeam)
	if _, err := alice.Get(ctx, theirs.ID); err != nil { // mirrored on alice's machine too
		t.Fatal(err)
	}

	size := session.DirSize(alice.DataDir())
	c1, err := alice.EnforceSoftLimit(ctx, size-300_000)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range c1.Removed {
		names = append(names, r.Name)
	}
	if !slices.Equal(names, []string{"old.bin", "mid.bin"}) || c1.After > size-300_000 {
		t.Errorf("removed %v, %d → %d bytes (limit %d)", names, c1.Before, c1.After, size-300_000)
	}
	if l, _ := alice.ListFiles(ctx, mine.ID, "data"); !slices.Equal(l, []string{"new.bin"}) {
		t.Errorf("data/ left: %v", l)
	}
	if l, _ := alice.ListFiles(ctx, mine.ID, "results"); !slices.Equal(l, []string{"report.md"}) {
		t.Errorf("results/ left: %v", l)
	}
	if _, err := os.Stat(filepath.Join(mine.Folder, "data", "old.bin")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("old.bin still in the mirror: %v", err)
	}
	if l, _ := bob.ListFiles(ctx, theirs.ID, "data"); !slices.Equal(l, []string{"bob.bin"}) {
		t.Errorf("bob's data/: %v", l)
	}
	if s := c1.Summary(); !strings.Contains(s, "data/old.bin") {
		t.Errorf("summary: %s", s)
	}
}

// TestPostgresSweepsFoldersOfSessionsGoneMeanwhile: a session deleted while
// a machine was not listening loses that machine's folder when its store
// next opens; a folder made by hand is left alone.
func TestPostgresSweepsFoldersOfSessionsGoneMeanwhile(t *testing.T) {
	t.Parallel()
	c := pgPeople(t)
	ctx := context.Background()
	a := openPG(t, c, "alice")
	dirB := t.TempDir()
	b, err := Open(ctx, dirB, c.DSN("alice", "postgres"))
	if err != nil {
		t.Fatal(err)
	}
	gone, _ := a.Create(ctx, "Deleted while b slept")
	kept, _ := a.Create(ctx, "Kept")
	onB, err := b.Get(ctx, gone.ID)
	if err != nil {
		t.Fatal(err)
	}
	keptOnB, _ := b.Get(ctx, kept.ID)
	handmade := filepath.Join(dirB, "sessions", "2026-01-01T00-00-00--mine--aaaaaa")
	os.MkdirAll(handmade, 0o700)
	b.Close()
	if err := a.Delete(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
	b, err = Open(ctx, dirB, c.DSN("alice", "postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := os.Stat(onB.Folder); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the deleted session's folder on b: %v", err)
	}
	for _, p := range []string{keptOnB.Folder, handmade} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}
