package e2e_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/internal/pgtest"
	"github.com/ctxls/ctxls/lsp/lsptest"
	"github.com/ctxls/ctxls/session/backend"
)

// TestShareLocalStore: over real stdio, ctxls.session.share on the local
// store answers a clear -32602 and the daemon keeps serving;
// initializationOptions cannot point the daemon at another store.
func TestShareLocalStore(t *testing.T) {
	parallel(t, waitTests)
	_, rootURI := workspace(t)
	s := lsptest.Binary(t, []string{backend.StoreEnv + "="}, "serve", "--data-dir", t.TempDir())
	s.Initialize(lsptest.InitOptions{RootURI: rootURI, InitOptions: map[string]any{"store": "postgres://u:sekrit@/db?host=/nonexistent"}})

	var created api.SessionResult
	s.MustCommand(api.SessionNew, map[string]any{"title": "Local only"}, &created)
	if created.Session.Owner != "" || created.Session.Visibility != "" {
		t.Errorf("a local session has an owner or visibility: %+v", created.Session)
	}
	err := s.Command(api.SessionShare, map[string]any{"visibility": "team"}, nil)
	checkRPCError(t, "share the current session", err, -32602, "sharing needs the PostgreSQL store")
	err = s.Command(api.SessionShare, map[string]any{"sessionId": created.Session.ID, "visibility": "private"}, nil)
	checkRPCError(t, "share by id", err, -32602, "sharing needs the PostgreSQL store")
	err = s.Command(api.SessionShare, map[string]any{"visibility": true}, nil)
	checkRPCError(t, "visibility as a boolean", err, -32602, `field "visibility" must be a string, got bool`)

	var list api.SessionListResult
	s.MustCommand(api.SessionList, map[string]any{}, &list)
	if len(list.Sessions) != 1 || list.Sessions[0].ID != created.Session.ID || list.Sessions[0].Visibility != "" {
		t.Errorf("list after share: %+v", list.Sessions)
	}
	s.Shutdown()
	if code := s.Exit(); code != 0 {
		t.Errorf("exit %d", code)
	}
	if strings.Contains(s.Stderr(), "sekrit") {
		t.Errorf("stderr shows the password:\n%s", s.Stderr())
	}
}

// TestShareOnPostgres: through the daemon's --store, alice's sessions are
// hers until she shares one with the team; bob then sees it and cannot
// change it. It needs the PostgreSQL store (postgres.Open through backend.Open).
func TestShareOnPostgres(t *testing.T) {
	parallel(t, waitTests)
	c := pgtest.Start(t)
	if _, err := backend.InitPostgres(context.Background(), c.DSN("", "postgres")); err != nil {
		t.Fatal(err)
	}
	for _, role := range []string{"alice", "bob"} {
		if out, err := c.Psql(t, "", "postgres", "CREATE ROLE "+role+" LOGIN IN ROLE ctxls_user; GRANT CONNECT ON DATABASE postgres TO "+role); err != nil {
			t.Fatalf("%s: %v %s", role, err, out)
		}
	}
	_, rootURI := workspace(t)
	start := func(role string) *lsptest.Server {
		s := lsptest.Binary(t, []string{backend.StoreEnv + "="}, "serve", "--data-dir", t.TempDir(), "--store", c.DSN(role, "postgres"))
		s.Initialize(lsptest.InitOptions{RootURI: rootURI})
		return s
	}
	alice, bob := start("alice"), start("bob")

	var created api.SessionResult
	alice.MustCommand(api.SessionNew, map[string]any{"title": "Alice's plan"}, &created)
	id := created.Session.ID
	if created.Session.Owner != "alice" || created.Session.Visibility != api.VisibilityPrivate {
		t.Errorf("new session: owner %q visibility %q", created.Session.Owner, created.Session.Visibility)
	}
	var list api.SessionListResult
	bob.MustCommand(api.SessionList, map[string]any{}, &list)
	if len(list.Sessions) != 0 {
		t.Errorf("bob sees a private session: %+v", list.Sessions)
	}

	var shared api.SessionResult
	alice.MustCommand(api.SessionShare, map[string]any{"visibility": "team"}, &shared) // the current session
	if shared.V != 1 || shared.Session.ID != id || shared.Session.Visibility != api.VisibilityTeam || shared.Session.Owner != "alice" {
		t.Errorf("share: %+v", shared)
	}
	bob.MustCommand(api.SessionList, map[string]any{}, &list)
	if len(list.Sessions) != 1 || list.Sessions[0].ID != id || list.Sessions[0].Owner != "alice" || list.Sessions[0].Visibility != api.VisibilityTeam {
		t.Errorf("bob's list after sharing: %+v", list.Sessions)
	}
	if err := bob.Command(api.SessionShare, map[string]any{"sessionId": id, "visibility": "private"}, nil); err == nil {
		t.Errorf("bob changed the visibility of alice's session")
	} else if re, ok := err.(*lsptest.RPCError); !ok || re.Code != api.KindPermissionDenied.Info().LSP || !strings.Contains(string(re.Data), `"permissionDenied"`) {
		t.Errorf("bob shares alice's session: %v", err)
	}
	alice.MustCommand(api.SessionShare, map[string]any{"sessionId": id, "visibility": "private"}, &shared)
	if shared.Session.Visibility != api.VisibilityPrivate {
		t.Errorf("back to private: %+v", shared.Session)
	}
	for _, s := range []*lsptest.Server{alice, bob} {
		s.Shutdown()
		if code := s.Exit(); code != 0 {
			t.Errorf("exit %d", code)
		}
	}
}
