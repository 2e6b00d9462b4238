package e2e_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/lsp/lsptest"
	"github.com/ctxls/ctxls/session"
	"github.com/ctxls/ctxls/session/sqlite"
)

// TestEmptySessionsLeftOutAndRemoved (the built binary over stdio): the
// session list leaves out the sessions with nothing in them, ctxls's own
// capture of the editor's view not counting (a new session from
// ctxls.session.new included), and the daemon removes at start the empty
// ones left behind an hour or more ago; younger empty ones stay (another
// daemon may have just made one), as do old ones with a message or a title
// the user gave.
func TestEmptySessionsLeftOutAndRemoved(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := sqlite.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	mk := func(title string) string {
		ss, err := st.Create(ctx, title)
		if err != nil {
			t.Fatal(err)
		}
		return ss.ID
	}
	oldEmpty, oldView, oldNamed, oldAsked, fresh := mk(""), mk(""), mk("Named, nothing asked"), mk(""), mk("")
	if _, err := st.UpdateContext(ctx, oldView, "applet", []string{"editor?file=/w/a.go&line=1"}, session.ModeReplace, session.AddedByUser, nil); err != nil {
		t.Fatal(err)
	}
	if err := st.AppendMessage(ctx, &session.Message{SessionID: oldAsked, Role: session.RoleUser, Content: "an old question", Status: session.StatusComplete}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	lsptest.AgeSessions(t, dir, 2*time.Hour, oldEmpty, oldView, oldNamed, oldAsked)

	_, rootURI := workspace(t)
	s := lsptest.Binary(t, nil, "serve", "--data-dir", dir)
	s.Initialize(lsptest.InitOptions{RootURI: rootURI})
	var made api.SessionResult
	s.MustCommand(api.SessionNew, map[string]any{}, &made)
	listed := func() []string {
		var list api.SessionListResult
		s.MustCommand(api.SessionList, map[string]any{}, &list)
		var ids []string
		for _, r := range list.Sessions {
			ids = append(ids, r.ID)
		}
		slices.Sort(ids)
		return ids
	}
	want := []string{oldNamed, oldAsked}
	slices.Sort(want)
	if got := listed(); !slices.Equal(got, want) {
		t.Errorf("listed %v, want only %v (named %s, asked %s)", got, want, oldNamed, oldAsked)
	}
	gone := func(id string) bool {
		err := s.Command(api.SessionShow, map[string]any{"sessionId": id}, nil)
		return err != nil
	}
	deadline := time.Now().Add(10 * time.Second)
	for (!gone(oldEmpty) || !gone(oldView)) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	for _, id := range []string{oldEmpty, oldView} {
		if !gone(id) {
			t.Errorf("the old empty session %s is still there", id)
		}
	}
	for _, id := range []string{fresh, made.Session.ID, oldNamed, oldAsked} {
		if gone(id) {
			t.Errorf("session %s was removed", id)
		}
	}
}
