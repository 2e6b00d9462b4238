package service

import (
	"context"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/session"
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
	empty := mk()
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
	if r := got[empty]; r.Questions != 0 || r.FirstQuestion != "" {
		t.Errorf("empty: questions %d, first %q", r.Questions, r.FirstQuestion)
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
