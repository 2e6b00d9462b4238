package storetest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/session"
)

// testTurnState (both stores): what a turn reads of its session at once is
// what each read on its own gives: the session, every context set, who
// added each relevant file, the names in sources/ (not results/), and the
// model's history from the newest of two summaries on. An empty session
// reads as empty, a missing one as ErrNotFound. On PostgreSQL a file added
// on another machine is listed and already in this machine's mirror.
// (TestTurnStateBegins: with a user message.)
func testTurnState(t *testing.T, e *Env) {
	s := e.S
	empty, err := s.Create(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	ts, err := s.TurnState(ctx, empty.ID, nil, nil)
	if err != nil || ts.Session.ID != empty.ID || ts.Summary != nil || len(ts.History) != 0 ||
		len(ts.Context) != 0 || len(ts.AddedBy) != 0 || len(ts.Sources) != 0 || ts.SourcesErr != nil {
		t.Fatalf("an empty session: %+v, %v", ts, err)
	}
	if _, err := s.TurnState(ctx, "nosuchsessionatall", nil, nil); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("a missing session: %v, want ErrNotFound", err)
	}

	sess, err := s.Create(ctx, "Turn state")
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	add := func(m session.Message) *session.Message {
		t.Helper()
		m.SessionID = sess.ID
		if err := s.AppendMessage(ctx, &m); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.ID)
		return &m
	}
	for i := range 6 {
		add(session.Message{Role: []session.Role{session.RoleUser, session.RoleAssistant}[i%2], Content: "message " + string(rune('a'+i))})
	}
	add(session.Message{Role: session.RoleSystem, Content: "first summary", SummaryOf: &session.Span{First: ids[0], Last: ids[1]}})
	newest := add(session.Message{Role: session.RoleSystem, Content: "second summary", SummaryOf: &session.Span{First: ids[0], Last: ids[3]}})
	add(session.Message{Role: session.RoleUser, Content: "after both"})

	if _, err := s.UpdateContext(ctx, sess.ID, session.SetFiles, []string{"/w/a.go"}, session.ModeReplace, session.AddedByUser, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateContext(ctx, sess.ID, session.SetFiles, []string{"/w/b.go"}, session.ModeMerge, session.AddedByModel, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateContext(ctx, sess.ID, "ports", []string{"8080", "5432"}, session.ModeReplace, session.AddedByUser, nil); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"notes.txt", "a.md"} {
		if _, err := s.AddFile(ctx, sess.ID, name, strings.NewReader("text of "+name)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.WriteOutput(ctx, sess.ID, "results/out.txt", []byte("a result")); err != nil {
		t.Fatal(err)
	}
	if !e.Local {
		// Another machine on the same database adds a file.
		other := e.Elsewhere(t)
		defer other.Close()
		if _, err := other.AddFile(ctx, sess.ID, "from-b.txt", strings.NewReader("added on machine B")); err != nil {
			t.Fatal(err)
		}
	}

	ts, err = s.TurnState(ctx, sess.ID, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ts.Session.ID != got.ID || ts.Session.Title != got.Title || ts.Session.Folder != got.Folder || ts.Session.FileCount != got.FileCount {
		t.Errorf("session: %+v, Get gives %+v", ts.Session, got)
	}
	sets, _ := s.Context(ctx, sess.ID)
	if !reflect.DeepEqual(ts.Context, sets) || !reflect.DeepEqual(ts.Context["files"], []string{"/w/a.go", "/w/b.go"}) {
		t.Errorf("context: %v, Context gives %v", ts.Context, sets)
	}
	addedBy, _ := s.AddedBy(ctx, sess.ID, session.SetFiles)
	if want := map[string]string{"/w/a.go": session.AddedByUser, "/w/b.go": session.AddedByModel}; !reflect.DeepEqual(ts.AddedBy, want) || !reflect.DeepEqual(addedBy, want) {
		t.Errorf("added by: %v (AddedBy gives %v), want %v", ts.AddedBy, addedBy, want)
	}
	sources, _ := s.ListFiles(ctx, sess.ID, "sources")
	wantSources := []string{"a.md", "notes.txt"}
	if !e.Local {
		wantSources = []string{"a.md", "from-b.txt", "notes.txt"}
	}
	if !slices.Equal(ts.Sources, wantSources) || !slices.Equal(sources, wantSources) || ts.SourcesErr != nil {
		t.Errorf("sources: %v (ListFiles gives %v, %v), want %v", ts.Sources, sources, ts.SourcesErr, wantSources)
	}
	if !e.Local {
		b, err := os.ReadFile(filepath.Join(ts.Session.Folder, "sources", "from-b.txt"))
		if err != nil || string(b) != "added on machine B" {
			t.Errorf("the file added on another machine is not in this one's mirror: %q %v", b, err)
		}
	}
	msgs, _ := s.Messages(ctx, sess.ID)
	wantSummary, wantRest := modelView(msgs)
	if ts.Summary == nil || ts.Summary.ID != newest.ID || wantSummary.ID != newest.ID || ts.Summary.SummaryOf.Covered != 4 {
		t.Fatalf("summary: %+v, want the newest, %d", ts.Summary, newest.ID)
	}
	restIDs := func(ms []session.Message) (out []int64) {
		for _, m := range ms {
			out = append(out, m.ID)
		}
		return out
	}
	if !slices.Equal(restIDs(ts.History), restIDs(wantRest)) || !slices.Equal(restIDs(ts.History), []int64{ids[4], ids[5], ids[8]}) {
		t.Errorf("history: %v, want %v", restIDs(ts.History), restIDs(wantRest))
	}
	summary, rest, _ := s.ModelHistory(ctx, sess.ID)
	if summary == nil || summary.ID != ts.Summary.ID || !slices.Equal(restIDs(rest), restIDs(ts.History)) {
		t.Errorf("ModelHistory gives %+v %v, TurnState %v", summary, restIDs(rest), restIDs(ts.History))
	}
}

// testTurnStateBegins (both stores): given the turn's message, TurnState
// first marks interrupted the session's answers left streaming by this
// store (whose turn cannot be running: the caller holds the turn lock)
// while another live store's answer keeps streaming, then stores the
// message, and reads the history with both. A message of another session
// is refused, and a missing session stores nothing.
func testTurnStateBegins(t *testing.T, e *Env) {
	s, other := e.S, e.Reopen()
	sess, err := s.Create(ctx, "Begins")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []struct {
		st      Store
		role    session.Role
		status  session.Status
		content string
	}{
		{s, session.RoleUser, session.StatusComplete, "first question"},
		{s, session.RoleAssistant, session.StatusStreaming, "left streaming here"},
		{other, session.RoleAssistant, session.StatusStreaming, "streaming elsewhere"},
	} {
		if err := m.st.AppendMessage(ctx, &session.Message{SessionID: sess.ID, Role: m.role, Status: m.status, Content: m.content}); err != nil {
			t.Fatal(err)
		}
	}
	before, _ := s.Get(ctx, sess.ID)

	if _, err := s.TurnState(ctx, sess.ID, &session.Message{SessionID: "someothersession", Role: session.RoleUser, Content: "x"}, nil); !errors.Is(err, session.ErrInvalid) {
		t.Errorf("a message of another session: %v, want ErrInvalid", err)
	}
	if _, err := s.TurnState(ctx, "nosuchsessionatall", &session.Message{SessionID: "nosuchsessionatall", Role: session.RoleUser, Content: "x"}, nil); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("a missing session: %v, want ErrNotFound", err)
	}

	user := &session.Message{SessionID: sess.ID, Role: session.RoleUser, Content: "second question"}
	ts, err := s.TurnState(ctx, sess.ID, user, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ts.Stored != nil {
		// Stored in the background: not read with the rest.
		if err := ts.Stored(); err != nil {
			t.Fatal(err)
		}
		if len(ts.History) != 3 || ts.Session.MessageCount != 3 {
			t.Errorf("read before the message was stored: %d messages read, the session counts %d; want 3 and 3", len(ts.History), ts.Session.MessageCount)
		}
		ts.History = append(ts.History, *user)
		if ts.Session, err = s.Get(ctx, sess.ID); err != nil {
			t.Fatal(err)
		}
	}
	if user.ID == 0 || user.CreatedAt.IsZero() {
		t.Errorf("the message was not given its id and time: %+v", user)
	}
	if !ts.Session.UpdatedAt.After(before.UpdatedAt) || ts.Session.MessageCount != 4 {
		t.Errorf("the session after the message: %+v (before %v)", ts.Session, before.UpdatedAt)
	}
	want := []struct {
		content string
		status  session.Status
	}{
		{"first question", session.StatusComplete},
		{"left streaming here", session.StatusInterrupted},
		{"streaming elsewhere", session.StatusStreaming},
		{"second question", session.StatusComplete},
	}
	stored, _ := s.Messages(ctx, sess.ID)
	for name, got := range map[string][]session.Message{"history": ts.History, "stored": stored} {
		if len(got) != len(want) {
			t.Fatalf("%s: %d messages, want %d: %+v", name, len(got), len(want), got)
		}
		for i, w := range want {
			if got[i].Content != w.content || got[i].Status != w.status {
				t.Errorf("%s %d: %q %s, want %q %s", name, i, got[i].Content, got[i].Status, w.content, w.status)
			}
		}
	}
	if ts.History[3].ID != user.ID {
		t.Errorf("the last message read is %d, the turn's is %d", ts.History[3].ID, user.ID)
	}
	if all, _ := s.Messages(ctx, sess.ID); len(all) != 4 {
		t.Errorf("%d messages stored, want 4 (nothing from the refused calls)", len(all))
	}
}

// testTurnStateSince (both stores): with a HistoryMark whose summary is
// still the newest, TurnState reads only the messages after its Through
// and says so; after a compaction (a newer summary) it reads the whole
// history again.
func testTurnStateSince(t *testing.T, e *Env) {
	s := e.S
	sess, err := s.Create(ctx, "since")
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for i := range 4 {
		role := session.RoleUser
		if i%2 == 1 {
			role = session.RoleAssistant
		}
		m := &session.Message{SessionID: sess.ID, Role: role, Content: fmt.Sprintf("m%d", i)}
		if err := s.AppendMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.ID)
	}
	ts, err := s.TurnState(ctx, sess.ID, nil, &session.HistoryMark{Through: ids[1]})
	if err != nil {
		t.Fatal(err)
	}
	if ts.Since != ids[1] || len(ts.History) != 2 || ts.History[0].Content != "m2" {
		t.Errorf("with a mark: since %d, %d messages %+v; want since %d, m2 and m3", ts.Since, len(ts.History), ts.History, ids[1])
	}
	// A mark naming a summary that is not the newest: the whole history.
	ts, err = s.TurnState(ctx, sess.ID, nil, &session.HistoryMark{Summary: 999999, Through: ids[1]})
	if err != nil || ts.Since != 0 || len(ts.History) != 4 {
		t.Errorf("a stale mark: since %d, %d messages, %v; want the whole history", ts.Since, len(ts.History), err)
	}
	// A compaction since the mark: the new summary and what follows it.
	sum := &session.Message{SessionID: sess.ID, Role: session.RoleSystem, Content: "summary of m0–m1",
		SummaryOf: &session.Span{First: ids[0], Last: ids[1], Covered: 2}}
	if err := s.AppendMessage(ctx, sum); err != nil {
		t.Fatal(err)
	}
	ts, err = s.TurnState(ctx, sess.ID, nil, &session.HistoryMark{Through: ids[2]})
	if err != nil || ts.Since != 0 || ts.Summary == nil || ts.Summary.ID != sum.ID || len(ts.History) != 2 || ts.History[0].Content != "m2" {
		t.Errorf("after a compaction: since %d, summary %+v, history %+v, %v", ts.Since, ts.Summary, ts.History, err)
	}
	ts, err = s.TurnState(ctx, sess.ID, nil, &session.HistoryMark{Summary: sum.ID, Through: ids[2]})
	if err != nil || ts.Since != ids[2] || len(ts.History) != 1 || ts.History[0].Content != "m3" {
		t.Errorf("a mark after the compaction: since %d, history %+v, %v", ts.Since, ts.History, err)
	}
}

// testCancelledKept (both stores): an answer the user stopped is stored
// "cancelled" and stays so: another store opening the database (which
// marks answers left streaming by dead daemons interrupted) and the next
// turn's TurnState leave it as it is, and the export says "cancelled".
func testCancelledKept(t *testing.T, e *Env) {
	s := e.S
	sess, err := s.Create(ctx, "Stopped")
	if err != nil {
		t.Fatal(err)
	}
	q := &session.Message{SessionID: sess.ID, Role: session.RoleUser, Content: "a long answer please", Status: session.StatusComplete}
	a := &session.Message{SessionID: sess.ID, Role: session.RoleAssistant, Content: "the first", Status: session.StatusStreaming}
	for _, m := range []*session.Message{q, a} {
		if err := s.AppendMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.UpdateMessage(ctx, a.ID, "the first words", session.StatusCancelled, &session.Usage{PromptTokens: 12, CompletionTokens: 3}); err != nil {
		t.Fatalf("UpdateMessage cancelled: %v", err)
	}
	if err := s.UpdateMessage(ctx, a.ID, "x", "stopped", nil); !errors.Is(err, session.ErrInvalid) {
		t.Errorf("an unknown status: %v, want ErrInvalid", err)
	}
	check := func(when string, msgs []session.Message) {
		t.Helper()
		if len(msgs) < 2 || msgs[1].ID != a.ID || msgs[1].Status != session.StatusCancelled || msgs[1].Content != "the first words" {
			t.Errorf("%s: %+v, want the answer cancelled with its words", when, msgs)
		}
	}
	msgs, err := s.Messages(ctx, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	check("stored", msgs)
	if msgs[1].Usage == nil || msgs[1].Usage.CompletionTokens != 3 {
		t.Errorf("usage of the cancelled answer: %+v", msgs[1].Usage)
	}
	other := e.Reopen()
	msgs, _ = other.Messages(ctx, sess.ID)
	check("read by another store", msgs)
	ts, err := other.TurnState(ctx, sess.ID, &session.Message{SessionID: sess.ID, Role: session.RoleUser, Content: "go on"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ts.Stored != nil {
		if err := ts.Stored(); err != nil {
			t.Fatal(err)
		}
	}
	check("the next turn's history", ts.History)
	msgs, _ = s.Messages(ctx, sess.ID)
	check("after the next turn began", msgs)
	if _, content, err := s.Export(ctx, sess.ID, "markdown"); err != nil || !strings.Contains(content, "## assistant (cancelled)") {
		t.Errorf("export: %v\n%s", err, content)
	}
}
