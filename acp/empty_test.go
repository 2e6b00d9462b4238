package acp_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
	"github.com/ctxls/ctxls/session"
)

// TestEmptySessionsLeftOut: session/list leaves out a session from
// session/new until its first prompt, and the agent removes at start the
// empty sessions left behind an hour or more ago (an old one with a
// message stays).
func TestEmptySessionsLeftOut(t *testing.T) {
	t.Parallel()
	fake, dataDir, cwd := newFixture(t)
	ctx := context.Background()
	st := openStore(t, dataDir)
	oldEmpty, err := st.Create(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	oldAsked, err := st.Create(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.AppendMessage(ctx, &session.Message{SessionID: oldAsked.ID, Role: session.RoleUser, Content: "an old question", Status: session.StatusComplete}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	lsptest.AgeSessions(t, dataDir, 2*time.Hour, oldEmpty.ID, oldAsked.ID)

	a := startAgent(t, fake, dataDir, cwd, nil)
	id := a.newSession()
	listed := func() []string {
		t.Helper()
		var list struct{ Sessions []struct{ SessionID string } }
		if err := a.Call("session/list", map[string]any{}, &list); err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, s := range list.Sessions {
			ids = append(ids, s.SessionID)
		}
		slices.Sort(ids)
		return ids
	}
	if got := listed(); !slices.Equal(got, []string{oldAsked.ID}) {
		t.Errorf("session/list after session/new %s: %v, want only %s", id, got, oldAsked.ID)
	}
	fake.Enqueue(openaitest.Reply{Chunks: []string{"an answer"}})
	if res, err := a.prompt(id, text("the first question")); err != nil || res.StopReason != "end_turn" {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	want := []string{oldAsked.ID, id}
	slices.Sort(want)
	if got := listed(); !slices.Equal(got, want) {
		t.Errorf("session/list after the first prompt: %v, want %v", got, want)
	}
	st = openStore(t, dataDir)
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := st.Get(ctx, oldEmpty.ID)
		if errors.Is(err, session.ErrNotFound) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the old empty session is still there: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
