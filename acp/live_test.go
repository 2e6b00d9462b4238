package acp_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/ctxls/ctxls/acp/acptest"
	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/internal/pgtest"
	"github.com/ctxls/ctxls/lsp/lsptest"
	"github.com/ctxls/ctxls/session/backend"
)

// TestLiveTitle: with the PostgreSQL store, a session open in an ACP
// client and renamed through another daemon (an editor's `ctxls serve` on
// another machine) gets session_info_update with the new title within a
// second.
func TestLiveTitle(t *testing.T) {
	t.Parallel()
	c := pgtest.Start(t)
	if _, err := backend.InitPostgres(context.Background(), c.DSN("", "postgres")); err != nil {
		t.Fatal(err)
	}
	if out, err := c.Psql(t, "", "postgres", "CREATE ROLE alice LOGIN IN ROLE ctxls_user; GRANT CONNECT ON DATABASE postgres TO alice"); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	dsn := c.DSN("alice", "postgres")
	bin := lsptest.BuildBinary(t)
	fake, dataDir, cwd := newFixture(t)
	ac := acptest.Start(t, bin, []string{"acp", "--data-dir", dataDir, "--store", dsn, "--base-url", fake.URL, "--model", "test-model"},
		[]string{"OPENAI_API_KEY=sk-test-not-real", "CTXLS_MODEL=", "OPENAI_BASE_URL=", backend.StoreEnv + "="})
	if err := ac.Call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}, nil); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	a := &agent{Client: ac, t: t, fake: fake, dataDir: dataDir, cwd: cwd}
	id := a.newSession()

	ed := lsptest.Binary(t, []string{backend.StoreEnv + "="}, "serve", "--data-dir", t.TempDir(), "--store", dsn)
	ed.Initialize(lsptest.InitOptions{})
	// Both listen for changes before the rename.
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, err := c.Psql(t, "", "postgres", "SELECT count(*) FROM pg_stat_activity WHERE query = 'LISTEN ctxls_changes'")
		if n, _ := strconv.Atoi(out); err == nil && n >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the daemons do not listen for changes: %q %v", out, err)
		}
		time.Sleep(50 * time.Millisecond)
	}

	from := len(a.Updates(""))
	renamed := time.Now()
	ed.MustCommand(api.SessionRename, map[string]any{"sessionId": id, "title": "Renamed in the editor"}, nil)
	a.WaitUpdateFrom(from, "session_info_update with the new title", func(u acptest.Update) bool {
		return u.SessionID == id && u.Kind == "session_info_update" && u.Title() == "Renamed in the editor"
	})
	if d := time.Since(renamed); d > time.Second {
		t.Errorf("the title arrived %v after the rename, want within 1s", d)
	}
	ed.Shutdown()
	if code := ed.Exit(); code != 0 {
		t.Errorf("serve exit %d", code)
	}
}
