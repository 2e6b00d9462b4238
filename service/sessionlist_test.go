package service

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/session"
	"github.com/ctxls/ctxls/session/sqlite"
)

// TestSessionListQuestions: each row says how many questions the session
// holds (tool results and answers not counted) and its first question's
// first line, which tells two sessions of the same title apart.
func TestSessionListQuestions(t *testing.T) {
	ctx := context.Background()
	s := open(t, nil, api.Provider{})
	mk := func(msgs ...*session.Message) string {
		sess, err := s.store.Create(ctx, "Same title")
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			m.SessionID = sess.ID
			if m.Status == "" {
				m.Status = session.StatusComplete
			}
			if err := s.store.AppendMessage(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
		return sess.ID
	}
	long := strings.Repeat("é", 130)
	a := mk(
		&session.Message{Role: session.RoleUser, Content: "  Why does login redirect twice?\nSee auth.go."},
		&session.Message{Role: session.RoleAssistant, ToolCalls: []byte(`[{"id":"c1","type":"function","function":{"name":"read_file","arguments":"{}"}}]`)},
		&session.Message{Role: session.RoleTool, ToolCallID: "c1", Content: "package auth"},
		&session.Message{Role: session.RoleAssistant, Content: "Because of the middleware."},
		&session.Message{Role: session.RoleUser, Content: "And the fix?"},
	)
	b := mk(&session.Message{Role: session.RoleUser, Content: long})
	named := mk() // a title of the user's: listed with no message
	emptySess, err := s.store.Create(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	empty := emptySess.ID
	res, err := s.SessionList(ctx, &api.SessionListArgs{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]api.SessionSummary{}
	for _, r := range res.Sessions {
		got[r.ID] = r
	}
	if r := got[a]; r.Questions != 2 || r.FirstQuestion != "Why does login redirect twice?" || r.MessageCount != 5 {
		t.Errorf("a: questions %d, first %q, messages %d", r.Questions, r.FirstQuestion, r.MessageCount)
	}
	if r := got[b]; r.Questions != 1 || r.FirstQuestion != strings.Repeat("é", 119)+"…" {
		t.Errorf("b: questions %d, first %q", r.Questions, r.FirstQuestion)
	}
	if r, ok := got[named]; !ok || r.Questions != 0 || r.FirstQuestion != "" {
		t.Errorf("named, no message: listed %v, questions %d, first %q", ok, r.Questions, r.FirstQuestion)
	}
	if r, ok := got[empty]; ok {
		t.Errorf("the empty session is listed: %+v", r)
	}
}

// pruneRecorder is a store that records what PruneEmpty was asked.
type pruneRecorder struct {
	session.Store
	mu    sync.Mutex
	calls []pruneCall
}

type pruneCall struct {
	cutoff time.Time
	keep   []string
}

func (p *pruneRecorder) PruneEmpty(ctx context.Context, cutoff time.Time, keep []string) ([]string, error) {
	p.mu.Lock()
	p.calls = append(p.calls, pruneCall{cutoff, slices.Clone(keep)})
	p.mu.Unlock()
	return p.Store.PruneEmpty(ctx, cutoff, keep)
}

// TestEmptySessionsLeftOutAndTidied: a new session is not listed until it
// holds something, whichever door lists; making one removes the empty
// sessions left behind (session.EmptyAfter old), keeping every session the
// connection made or used.
func TestEmptySessionsLeftOutAndTidied(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rec := &pruneRecorder{Store: st}
	s := open(t, rec, api.Provider{})
	first, err := s.SessionNew(ctx, &api.SessionNewArgs{})
	if err != nil {
		t.Fatal(err)
	}
	second, err := s.SessionNew(ctx, &api.SessionNewArgs{})
	if err != nil {
		t.Fatal(err)
	}
	for _, list := range []func() (*api.SessionListResult, error){
		func() (*api.SessionListResult, error) { return s.SessionList(ctx, &api.SessionListArgs{}) },
		func() (*api.SessionListResult, error) { return s.ListIn(ctx, &api.SessionListArgs{}, "") },
	} {
		if res, err := list(); err != nil || len(res.Sessions) != 0 {
			t.Errorf("two new sessions, nothing in them: listed %+v %v", res, err)
		}
	}
	if err := st.AppendMessage(ctx, &session.Message{SessionID: first.Session.ID, Role: session.RoleUser, Content: "q", Status: session.StatusComplete}); err != nil {
		t.Fatal(err)
	}
	if res, err := s.SessionList(ctx, &api.SessionListArgs{}); err != nil || len(res.Sessions) != 1 || res.Sessions[0].ID != first.Session.ID {
		t.Errorf("with a message: listed %+v %v", res, err)
	}
	s.tidy.wg.Wait()
	rec.mu.Lock()
	calls := slices.Clone(rec.calls)
	rec.mu.Unlock()
	if len(calls) != 2 {
		t.Fatalf("PruneEmpty called %d times for two new sessions", len(calls))
	}
	last := calls[1]
	if d := time.Since(last.cutoff); d < session.EmptyAfter || d > session.EmptyAfter+time.Minute {
		t.Errorf("cutoff %v ago, want %v", d, session.EmptyAfter)
	}
	if !slices.Contains(last.keep, first.Session.ID) || !slices.Contains(last.keep, second.Session.ID) {
		t.Errorf("keep %v: the connection's sessions %s and %s are not kept", last.keep, first.Session.ID, second.Session.ID)
	}
}

// TestBaseURLWithoutScheme: a base URL without http:// or https:// is
// refused when the provider is resolved, with a message that says what to
// write (Go's client would fail each request with "unsupported protocol
// scheme"), as kind noProvider.
func TestBaseURLWithoutScheme(t *testing.T) {
	for _, c := range []struct{ base, want string }{
		{"localhost:11434/v1", `such as "http://localhost:11434/v1"`},
		{"ftp://example.com/v1", "not an http:// or https:// URL"},
		{"http:///v1", "not an http:// or https:// URL"},
	} {
		s := open(t, nil, api.Provider{BaseURL: c.base, Model: "m"})
		_, err := s.resolve(api.Provider{}, nil)
		if err == nil || api.KindOf(err) != api.KindNoProvider || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v (kind %q), want kind noProvider and %q", c.base, err, api.KindOf(err), c.want)
		}
	}
	for _, ok := range []string{"http://127.0.0.1:11434/v1", "https://api.example.com/v1"} {
		s := open(t, nil, api.Provider{BaseURL: ok, Model: "m"})
		if _, err := s.resolve(api.Provider{}, nil); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}
