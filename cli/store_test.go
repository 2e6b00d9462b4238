package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/acp/acptest"
	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/internal/pgtest"
	"github.com/ctxls/ctxls/lsp/lsptest"
	"github.com/ctxls/ctxls/session"
	"github.com/ctxls/ctxls/session/backend"
)

// TestStoreFlagErrors: a --store (or CTXLS_STORE) that is not a PostgreSQL
// URL is a usage error in every command that opens the store, and the value
// (which may hold a password) is never repeated.
func TestStoreFlagErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := []string{"CTXLS_DATA_DIR=" + dir, backend.StoreEnv + "="}
	for _, args := range [][]string{{"sessions", "list"}, {"serve"}, {"acp"}, {"store", "init"}, {"sessions", "share", "abcd", "team"}} {
		out, errOut, code := run(t, env, append([]string{"--store", "mysql://u:sekrit@db.example/app"}, args...)...)
		if code != 2 || out != "" || !strings.Contains(errOut, "--store is not a PostgreSQL URL: want postgres://") || strings.Contains(errOut, "sekrit") {
			t.Errorf("%v: %d %q %q", args, code, out, errOut)
		}
	}
	_, errOut, code := run(t, append(env, backend.StoreEnv+"=/var/lib/ctxls.db"), "sessions", "list")
	if code != 2 || !strings.Contains(errOut, backend.StoreEnv+" is not a PostgreSQL URL") {
		t.Errorf("from the environment: %d %q", code, errOut)
	}
	// --store "" is the local store, whatever the environment says.
	out, errOut, code := run(t, append(env, backend.StoreEnv+"=mysql://x"), "--store", "", "sessions", "list")
	if code != 0 || !strings.Contains(out, "No sessions.") {
		t.Errorf(`--store "": %d %q %q`, code, out, errOut)
	}
	// The flag also follows the subcommand.
	_, errOut, code = run(t, env, "sessions", "list", "--store", "sqlite:x")
	if code != 2 || !strings.Contains(errOut, "--store is not a PostgreSQL URL") {
		t.Errorf("flag after the subcommand: %d %q", code, errOut)
	}
	out, errOut, code = run(t, env, "store", "init")
	if code != 2 || out != "" || !strings.Contains(errOut, "store init needs a PostgreSQL database: pass --store postgres://") {
		t.Errorf("store init without a URL: %d %q %q", code, out, errOut)
	}
}

// TestShareLocalStore: the local store has no sharing, and says so.
func TestShareLocalStore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, err := backend.Open(context.Background(), dir, "")
	if err != nil {
		t.Fatal(err)
	}
	a, _ := st.Create(context.Background(), "Local work")
	st.Close()
	env := []string{"CTXLS_DATA_DIR=" + dir, backend.StoreEnv + "="}

	out, errOut, code := run(t, env, "sessions", "share", a.ID[:6], "team")
	if code != api.KindInvalidArgument.Info().CLI || out != "" || !strings.Contains(errOut, "sharing needs the PostgreSQL store") {
		t.Errorf("share on SQLite: %d %q %q", code, out, errOut)
	}
	_, errOut, code = run(t, env, "sessions", "share", a.ID, "public")
	if code != 2 || !strings.Contains(errOut, `visibility "public": want private or team`) {
		t.Errorf("bad visibility: %d %q", code, errOut)
	}
	_, errOut, code = run(t, env, "sessions", "share", a.ID)
	if code != 2 || !strings.Contains(errOut, "needs a session id and private or team") {
		t.Errorf("missing visibility: %d %q", code, errOut)
	}
	_, errOut, code = run(t, env, "sessions", "share", "zzzzzz", "private")
	if code != api.KindNotFound.Info().CLI || !strings.Contains(errOut, "not found") {
		t.Errorf("unknown id: %d %q", code, errOut)
	}
	// The local store's table has no owner or visibility columns.
	out, _, code = run(t, env, "sessions", "list")
	if code != 0 || strings.Contains(out, "OWNER") || strings.Contains(out, "VISIBILITY") {
		t.Errorf("list on SQLite: %d\n%s", code, out)
	}
	out, _, _ = run(t, env, "sessions", "list", "--json")
	if strings.Contains(out, `"owner"`) || strings.Contains(out, `"visibility"`) {
		t.Errorf("list --json on SQLite: %s", out)
	}
	out, _, code = run(t, env, "doctor", "--base-url", "http://127.0.0.1:1/v1", "--model", "m")
	if code != api.KindProviderFailed.Info().CLI || !strings.Contains(out, "✓ store: SQLite "+filepath.Join(dir, "ctxls.db")) {
		t.Errorf("doctor on SQLite: %d\n%s", code, out)
	}
}

// secretDSN names a database that is not there, with a password that must
// never be shown.
const secretDSN = "postgres://u:sekrit@/db?host=/nonexistent"

// TestStorePasswordNeverShown: with a password in --store or CTXLS_STORE,
// no output, error or log line of serve, acp, sessions list or doctor
// shows it; they name the database as user@host/database.
func TestStorePasswordNeverShown(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	named := backend.RedactDSN(secretDSN)
	noProvider := []string{"OPENAI_BASE_URL=http://127.0.0.1:1/v1", "CTXLS_MODEL=m", "OPENAI_API_KEY="}
	for _, way := range []struct {
		env, flag []string
	}{
		{env: []string{"CTXLS_DATA_DIR=" + dir, backend.StoreEnv + "=" + secretDSN}},
		{env: []string{"CTXLS_DATA_DIR=" + dir, backend.StoreEnv + "="}, flag: []string{"--store", secretDSN}},
	} {
		env, flag := way.env, way.flag
		with := func(args ...string) []string { return append(append([]string{}, flag...), args...) }

		out, errOut, code := run(t, env, with("sessions", "list")...)
		if code != api.KindStoreUnavailable.Info().CLI || !strings.Contains(errOut, "cannot open the PostgreSQL session store "+named) || strings.Contains(out+errOut, "sekrit") {
			t.Errorf("sessions list %v: %d %q %q", flag, code, out, errOut)
		}
		out, errOut, code = run(t, append(env, noProvider...), with("doctor")...)
		// The provider's failure is the exit status: doctor checks both.
		if code != api.KindProviderFailed.Info().CLI || !strings.Contains(out, "✗ store: cannot open the PostgreSQL session store "+named) || strings.Contains(out+errOut, "sekrit") {
			t.Errorf("doctor %v: %d %q %q", flag, code, out, errOut)
		}
		// Both doors answer initialize before the store is open; what needs
		// the store then fails naming the database, never its password.
		a := acptest.Start(t, lsptest.BuildBinary(t), with("--log-level", "debug", "acp"), env)
		if err := a.Call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}, nil); err != nil {
			t.Errorf("acp %v: initialize: %v", flag, err)
		}
		err := a.Call("session/new", map[string]any{"cwd": dir, "mcpServers": []any{}}, nil)
		if err == nil || !strings.Contains(err.Error(), "cannot open the PostgreSQL session store "+named) || strings.Contains(err.Error(), "sekrit") {
			t.Errorf("acp %v: session/new answered %v", flag, err)
		}
		a.Close()
		if errOut := a.Stderr(); !strings.Contains(errOut, `store="postgres `+named+`"`) || strings.Contains(errOut, "sekrit") {
			t.Errorf("acp %v: stderr %q", flag, errOut)
		}

		logFile := filepath.Join(t.TempDir(), "ctxls.log")
		s := lsptest.Binary(t, env, with("serve", "--log-file", logFile, "--log-level", "debug")...)
		if err := s.Call("initialize", map[string]any{"processId": nil, "capabilities": map[string]any{}}, nil); err != nil {
			t.Errorf("serve %v: initialize answered %v", flag, err)
		}
		s.Notify("initialized", map[string]any{})
		err = s.Command(api.SessionList, map[string]any{}, nil)
		if err == nil || !strings.Contains(err.Error(), "cannot open the PostgreSQL session store "+named) || strings.Contains(err.Error(), "sekrit") {
			t.Errorf("serve %v: %s answered %v", flag, api.SessionList, err)
		}
		if m := s.WaitNotification("window/showMessage", 1); !strings.Contains(string(m.Params), "cannot open the PostgreSQL session store "+named) {
			t.Errorf("serve %v: showMessage %s", flag, m.Params)
		}
		s.Kill()
		s.Exit()
		logged, _ := os.ReadFile(logFile)
		if !strings.Contains(string(logged), `store="postgres `+named+`"`) || strings.Contains(string(logged)+s.Stderr(), "sekrit") {
			t.Errorf("serve %v: log:\n%s\nstderr:\n%s", flag, logged, s.Stderr())
		}
		for _, m := range s.Received() {
			if b, _ := json.Marshal(m); strings.Contains(string(b), "sekrit") {
				t.Errorf("serve %v: sent %s", flag, b)
			}
		}
	}
}

// TestStoreInit: store init applies the migrations once, then finds the
// schema current; the SQL it prints lets a person in.
func TestStoreInit(t *testing.T) {
	t.Parallel()
	c := pgtest.Start(t)
	env := []string{"CTXLS_DATA_DIR=" + t.TempDir(), backend.StoreEnv + "="}
	owner := c.DSN("", "postgres")

	out, errOut, code := run(t, env, "store", "init", "--store", owner)
	if code != 0 || !strings.Contains(out, "Applied 0001_init.sql\n") || !strings.Contains(out, "is current.\n") {
		t.Fatalf("first init: %d %q\n%s", code, errOut, out)
	}
	sql := ""
	for line := range strings.Lines(out) {
		if l := strings.TrimSpace(line); strings.HasPrefix(l, "CREATE ROLE") {
			sql = l
		}
	}
	if sql != "CREATE ROLE alice LOGIN PASSWORD 'change me' IN ROLE ctxls_user; GRANT CONNECT ON DATABASE postgres TO alice;" {
		t.Errorf("role SQL: %q\n%s", sql, out)
	}
	if _, err := c.Psql(t, "", "postgres", sql); err != nil {
		t.Errorf("the printed SQL does not run: %v", err)
	}
	if got, err := c.Psql(t, "", "postgres", "SELECT pg_has_role('alice', 'ctxls_user', 'MEMBER')"); err != nil || got != "t" {
		t.Errorf("alice in ctxls_user: %q %v", got, err)
	}

	out, errOut, code = run(t, append(env, backend.StoreEnv+"="+owner), "store", "init")
	if code != 0 || strings.Contains(out, "Applied") || !strings.Contains(out, "is current: nothing to apply.") {
		t.Errorf("second init: %d %q\n%s", code, errOut, out)
	}

	// A database that does not exist: a clear error naming it, exit 1.
	out, errOut, code = run(t, env, "store", "init", "--store", c.DSN("", "nope"))
	if code != 1 || out != "" || !strings.Contains(errOut, "nope") {
		t.Errorf("missing database: %d %q %q", code, out, errOut)
	}
}

// TestPostgresStoreCLI: sessions list, share and doctor through --store, as
// two people. It needs the PostgreSQL store (postgres.Open through backend.Open).
func TestPostgresStoreCLI(t *testing.T) {
	t.Parallel()
	c := pgtest.Start(t)
	if _, err := backend.InitPostgres(context.Background(), c.DSN("", "postgres")); err != nil {
		t.Fatal(err)
	}
	for _, sql := range []string{
		"CREATE ROLE alice LOGIN IN ROLE ctxls_user; GRANT CONNECT ON DATABASE postgres TO alice",
		"CREATE ROLE bob LOGIN IN ROLE ctxls_user; GRANT CONNECT ON DATABASE postgres TO bob",
		"CREATE ROLE carol LOGIN", // not a member of ctxls_user
	} {
		if out, err := c.Psql(t, "", "postgres", sql); err != nil {
			t.Fatalf("%s: %v %s", sql, err, out)
		}
	}
	alice := []string{"CTXLS_DATA_DIR=" + t.TempDir(), backend.StoreEnv + "=" + c.DSN("alice", "postgres")}
	bob := []string{"CTXLS_DATA_DIR=" + t.TempDir(), backend.StoreEnv + "=" + c.DSN("bob", "postgres")}

	st, err := backend.Open(context.Background(), t.TempDir(), c.DSN("alice", "postgres"))
	if err != nil {
		t.Fatalf("the PostgreSQL store does not open yet: %v", err)
	}
	a, err := st.Create(context.Background(), "Alice's plan")
	st.Close()
	if err != nil {
		t.Fatal(err)
	}

	out, errOut, code := run(t, alice, "sessions", "list")
	if code != 0 || !strings.Contains(out, "OWNER") || !strings.Contains(out, "VISIBILITY") || !strings.Contains(out, "Alice's plan") ||
		!strings.Contains(out, "alice") || !strings.Contains(out, "private") {
		t.Errorf("alice's list: %d %q\n%s", code, errOut, out)
	}
	out, _, _ = run(t, alice, "sessions", "list", "--json")
	var list struct{ Sessions []session.Session }
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list.Sessions) != 1 || list.Sessions[0].Owner != "alice" || list.Sessions[0].Visibility != session.VisibilityPrivate {
		t.Errorf("alice's list --json: %v\n%s", err, out)
	}
	out, _, code = run(t, bob, "sessions", "list")
	if code != 0 || strings.Contains(out, a.ID) {
		t.Errorf("bob sees alice's private session: %d\n%s", code, out)
	}

	out, errOut, code = run(t, alice, "sessions", "share", a.ID[:6], "team")
	if code != 0 || !strings.Contains(out, "Shared "+a.ID+" with the team") {
		t.Errorf("share team: %d %q %q", code, out, errOut)
	}
	out, _, code = run(t, bob, "sessions", "list", "--json")
	if err := json.Unmarshal([]byte(out), &list); code != 0 || err != nil || len(list.Sessions) != 1 || list.Sessions[0].ID != a.ID || list.Sessions[0].Visibility != session.VisibilityTeam {
		t.Errorf("bob's list after sharing: %d %v\n%s", code, err, out)
	}
	_, errOut, code = run(t, bob, "sessions", "share", a.ID, "private")
	if code != api.KindPermissionDenied.Info().CLI || !strings.Contains(errOut, "only its owner may share it") {
		t.Errorf("bob shares alice's session: %d %q", code, errOut)
	}
	out, errOut, code = run(t, alice, "sessions", "share", a.ID, "private", "--json")
	var shared struct{ Session session.Session }
	if err := json.Unmarshal([]byte(out), &shared); code != 0 || err != nil || shared.Session.Visibility != session.VisibilityPrivate || shared.Session.Owner != "alice" {
		t.Errorf("share private --json: %d %v %q\n%s", code, err, errOut, out)
	}

	noProvider := []string{"OPENAI_BASE_URL=http://127.0.0.1:1/v1", "CTXLS_MODEL=m", "OPENAI_API_KEY="}
	out, _, _ = run(t, append(alice, noProvider...), "doctor")
	if !strings.Contains(out, "✓ store: PostgreSQL alice@") {
		t.Errorf("doctor as alice:\n%s", out)
	}
	carol := []string{"CTXLS_DATA_DIR=" + t.TempDir(), backend.StoreEnv + "=" + c.DSN("carol", "postgres")}
	out, _, code = run(t, append(carol, noProvider...), "doctor")
	if code != api.KindProviderFailed.Info().CLI || !strings.Contains(out, "✗ store: cannot open the PostgreSQL session store carol@") {
		t.Errorf("doctor as a role outside ctxls_user: %d\n%s", code, out)
	}
}

// TestStoreCopy: ctxls store copy --to moves the local store's sessions
// into PostgreSQL, where --store finds them; a second run copies nothing.
func TestStoreCopy(t *testing.T) {
	t.Parallel()
	c := pgtest.Start(t)
	dir := t.TempDir()
	env := []string{"CTXLS_DATA_DIR=" + dir, backend.StoreEnv + "="}
	owner := c.DSN("", "postgres")
	ctx := context.Background()
	local, err := backend.Open(context.Background(), dir, "")
	if err != nil {
		t.Fatal(err)
	}
	a, _ := local.Create(ctx, "Copied along")
	local.AppendMessage(ctx, &session.Message{SessionID: a.ID, Role: session.RoleUser, Content: "keep me"})
	local.AddFile(ctx, a.ID, "notes.txt", strings.NewReader("notes"))
	b, _ := local.Create(ctx, "Second one")
	local.Close()

	if out, errOut, code := run(t, env, "store", "copy"); code != 2 || !strings.Contains(errOut, "--to postgres://") {
		t.Errorf("no --to: %d %q %q", code, out, errOut)
	}
	if _, errOut, code := run(t, env, "store", "init", "--store", owner); code != 0 {
		t.Fatalf("init: %s", errOut)
	}
	out, errOut, code := run(t, env, "store", "copy", "--to", owner)
	if code != 0 || !strings.Contains(out, "copied        "+a.ID+"  Copied along\n") || !strings.Contains(out, "copied        "+b.ID) ||
		!strings.Contains(out, "2 sessions copied (1 messages, 1 files), 0 already in postgres@") {
		t.Fatalf("copy: %d %q\n%s", code, errOut, out)
	}
	out, errOut, code = run(t, env, "--store", owner, "sessions", "show", a.ID[:6])
	if code != 0 || !strings.Contains(out, "keep me") {
		t.Errorf("the copied session through --store: %d %q\n%s", code, errOut, out)
	}
	out, errOut, code = run(t, env, "store", "copy", "--to", owner)
	if code != 0 || !strings.Contains(out, "already there "+a.ID) || !strings.Contains(out, "0 sessions copied (0 messages, 0 files), 2 already in") {
		t.Errorf("second copy: %d %q\n%s", code, errOut, out)
	}
}
