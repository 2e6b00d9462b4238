package cli_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/lsp/lsptest"
	"github.com/ctxls/ctxls/session"
	"github.com/ctxls/ctxls/session/backend"
)

// TestSessionsListLeavesOutEmpty: `sessions list` shows only sessions with
// something in them, and a CLI command removes the empty sessions left
// behind an hour or more ago; a younger empty one stays (a daemon may have
// just made it), unlisted.
func TestSessionsListLeavesOutEmpty(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	st, err := backend.Open(ctx, dir, "")
	if err != nil {
		t.Fatal(err)
	}
	oldEmpty, _ := st.Create(ctx, "")
	fresh, _ := st.Create(ctx, "")
	asked, _ := st.Create(ctx, "")
	if err := st.AppendMessage(ctx, &session.Message{SessionID: asked.ID, Role: session.RoleUser, Content: "why is the canary failing", Status: session.StatusComplete}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	lsptest.AgeSessions(t, dir, 2*time.Hour, oldEmpty.ID)
	env := []string{"CTXLS_DATA_DIR=" + dir}

	out, errOut, code := run(t, env, "sessions", "list", "--json")
	var list api.SessionListResult
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil {
		t.Fatalf("sessions list --json: %d %s %s", code, out, errOut)
	}
	if len(list.Sessions) != 1 || list.Sessions[0].ID != asked.ID {
		t.Errorf("listed %+v, want only %s", list.Sessions, asked.ID)
	}
	if _, errOut, code := run(t, env, "sessions", "show", oldEmpty.ID); code != api.KindNotFound.Info().CLI {
		t.Errorf("the old empty session after a CLI command: exit %d, %s", code, errOut)
	}
	if _, errOut, code := run(t, env, "sessions", "show", fresh.ID); code != 0 {
		t.Errorf("the young empty session: exit %d, %s", code, errOut)
	}
}
