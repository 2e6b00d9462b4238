package storetest

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/session"
)

func init() {
	tests = append(tests,
		struct {
			name string
			fn   func(t *testing.T, e *Env)
		}{"Rewind", withStore(testRewind)},
		struct {
			name string
			fn   func(t *testing.T, e *Env)
		}{"RewindSeenByViewsAndRenderings", testRewindSeenElsewhere},
	)
}

func rewinder(t *testing.T, s Store) session.Rewinder {
	t.Helper()
	r, ok := s.(session.Rewinder)
	if !ok {
		t.Fatalf("%T cannot rewind", s)
	}
	return r
}

// testRewind: a session goes back to before one of its questions; what
// Rewind refuses leaves everything as it was.
func testRewind(t *testing.T, s Store) {
	r := rewinder(t, s)
	ss, err := s.Create(ctx, "Rewound")
	if err != nil {
		t.Fatal(err)
	}
	other, err := s.Create(ctx, "Other")
	if err != nil {
		t.Fatal(err)
	}
	add := func(id string, role session.Role, content string, status session.Status) *session.Message {
		t.Helper()
		m := &session.Message{SessionID: id, Role: role, Content: content, Status: status}
		if err := s.AppendMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	q1 := add(ss.ID, session.RoleUser, "first question", "")
	add(ss.ID, session.RoleAssistant, "first answer", session.StatusComplete)
	q2 := add(ss.ID, session.RoleUser, "second question", "")
	a2 := add(ss.ID, session.RoleAssistant, "second answer, cut", session.StatusCancelled)
	oq := add(other.ID, session.RoleUser, "a question elsewhere", "")
	contents := func(id string) string {
		t.Helper()
		msgs, err := s.Messages(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range msgs {
			out = append(out, m.Content)
		}
		return strings.Join(out, " | ")
	}
	all := "first question | first answer | second question | second answer, cut"

	for _, c := range []struct {
		name    string
		session string
		from    int64
		want    error
	}{
		{"an answer", ss.ID, a2.ID, session.ErrInvalid},
		{"another session's question", ss.ID, oq.ID, session.ErrNotFound},
		{"no such message", ss.ID, a2.ID + 1000, session.ErrNotFound},
		{"no such session", "no-such-session", q1.ID, session.ErrNotFound},
	} {
		if n, err := r.Rewind(ctx, c.session, c.from); !errors.Is(err, c.want) || n != 0 {
			t.Errorf("rewind to %s: %d removed, err %v; want %v", c.name, n, err, c.want)
		}
	}
	if got := contents(ss.ID); got != all {
		t.Fatalf("after refused rewinds: %s", got)
	}

	before, _ := s.Get(ctx, ss.ID)
	n, err := r.Rewind(ctx, ss.ID, q2.ID)
	if err != nil || n != 2 {
		t.Fatalf("rewind to the second question: %d removed, err %v", n, err)
	}
	if got := contents(ss.ID); got != "first question | first answer" {
		t.Fatalf("after the rewind: %s", got)
	}
	if got := contents(other.ID); got != "a question elsewhere" {
		t.Fatalf("the other session changed: %s", got)
	}
	after, _ := s.Get(ctx, ss.ID)
	if !after.UpdatedAt.After(before.UpdatedAt) {
		t.Errorf("updatedAt not bumped: %v then %v", before.UpdatedAt, after.UpdatedAt)
	}
	// The question asked again gets a new id, after every removed one.
	q3 := add(ss.ID, session.RoleUser, "second question, edited", "")
	if q3.ID <= a2.ID {
		t.Errorf("a removed id was reused: %d after %d", q3.ID, a2.ID)
	}

	// Not while an answer streams.
	add(ss.ID, session.RoleAssistant, "streaming", session.StatusStreaming)
	if n, err := r.Rewind(ctx, ss.ID, q3.ID); !errors.Is(err, session.ErrInvalid) || n != 0 || !strings.Contains(err.Error(), "streaming") {
		t.Fatalf("rewind under a streaming answer: %d removed, err %v", n, err)
	}
	if got := contents(ss.ID); got != "first question | first answer | second question, edited | streaming" {
		t.Fatalf("after the refused rewind: %s", got)
	}
}

// testRewindSeenElsewhere: a model view's mark (TurnState) and a kept
// rendering of history.md, in this store and in another on the same data,
// see the removed messages gone.
func testRewindSeenElsewhere(t *testing.T, e *Env) {
	s := e.S
	ss, err := s.Create(ctx, "Long and rewound")
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for i := range 240 { // over the history cache's minimum
		m := &session.Message{SessionID: ss.ID, Role: []session.Role{session.RoleUser, session.RoleAssistant}[i%2], Content: fmt.Sprintf("message %d", i)}
		if err := s.AppendMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.ID)
	}
	other := e.Reopen()
	check := func(s Store, when string) {
		t.Helper()
		if err := s.FlushHistory(); err != nil {
			t.Fatal(err)
		}
		got, _ := s.Get(ctx, ss.ID)
		sets, _ := s.Context(ctx, ss.ID)
		msgs, _ := s.Messages(ctx, ss.ID)
		if h := readString(t, filepath.Join(got.Folder, "history.md")); h != session.Markdown(got, sets, msgs) {
			t.Fatalf("%s: history.md differs from the whole session's Markdown:\n%s", when, lastLines(h, 8))
		}
	}
	check(s, "before")
	if e.HistoryCache(s).Kept(ss.ID) < 240 {
		t.Fatalf("no rendering kept: %d", e.HistoryCache(s).Kept(ss.ID))
	}
	// Another store on the same data renders it too, and keeps it.
	if err := other.AppendMessage(ctx, &session.Message{SessionID: ss.ID, Role: session.RoleUser, Content: "message 240"}); err != nil {
		t.Fatal(err)
	}
	check(other, "in the other store")
	held := &session.HistoryMark{Through: ids[len(ids)-1]}

	// The other store rewinds to message 200; this one's kept rendering
	// and a view holding through message 239 must see it.
	if n, err := rewinder(t, other).Rewind(ctx, ss.ID, ids[200]); err != nil || n != 41 {
		t.Fatalf("rewind: %d removed, err %v", n, err)
	}
	st, err := s.TurnState(ctx, ss.ID, nil, held)
	if err != nil {
		t.Fatal(err)
	}
	if st.Since != 0 || len(st.History) != 200 || st.History[199].ID != ids[199] {
		t.Fatalf("turn state over a removed mark: since %d, %d messages", st.Since, len(st.History))
	}
	// A mark that still holds reads only what follows it.
	st, err = s.TurnState(ctx, ss.ID, nil, &session.HistoryMark{Through: ids[150]})
	if err != nil {
		t.Fatal(err)
	}
	if st.Since != ids[150] || len(st.History) != 49 || st.History[0].ID != ids[151] {
		t.Fatalf("turn state over a mark still there: since %d, %d messages", st.Since, len(st.History))
	}
	if err := s.AppendMessage(ctx, &session.Message{SessionID: ss.ID, Role: session.RoleUser, Content: "asked again"}); err != nil {
		t.Fatal(err)
	}
	check(s, "this store, after the other rewound")
	if h := readString(t, filepath.Join(ss.Folder, "history.md")); strings.Contains(h, "message 239") || !strings.Contains(h, "message 199") {
		t.Fatalf("history.md still shows removed messages:\n%s", lastLines(h, 8))
	}
}
