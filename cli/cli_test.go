package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/lsp/lsptest"
	"github.com/ctxls/ctxls/session"
	"github.com/ctxls/ctxls/session/backend"
)

// run executes the built binary and returns stdout, stderr and exit code.
func run(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	return lsptest.Run(t, "", env, args...)
}

func TestSessionsCommands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, err := backend.Open(context.Background(), dir, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a, _ := st.Create(ctx, "Deploy pipeline")
	st.AppendMessage(ctx, &session.Message{SessionID: a.ID, Role: session.RoleUser, Content: "why is the canary failing"})
	st.UpdateContext(ctx, a.ID, "ports", []string{"8080"}, "", session.AddedByUser, nil)
	b, _ := st.Create(ctx, "Other work")
	st.Close()
	env := []string{"CTXLS_DATA_DIR=" + dir}

	out, _, code := run(t, env, "sessions", "list")
	if code != 0 || !strings.Contains(out, "Deploy pipeline") || !strings.Contains(out, "TITLE") || !strings.Contains(out, b.ID) {
		t.Errorf("list: %d\n%s", code, out)
	}
	out, _, _ = run(t, env, "sessions", "list", "--json")
	var list struct{ Sessions []session.Session }
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list.Sessions) != 2 || !hasSession(list.Sessions, a.ID, 1) {
		t.Errorf("list --json: %v\n%s", err, out)
	}
	out, _, code = run(t, env, "sessions", "show", a.ID)
	if code != 0 || !strings.Contains(out, "why is the canary failing") || !strings.Contains(out, "ports: 8080") {
		t.Errorf("show: %d\n%s", code, out)
	}
	out, _, code = run(t, env, "--data-dir", dir, "sessions", "search", "canary")
	if code != 0 || !strings.Contains(out, a.ID) || !strings.Contains(out, "«canary»") {
		t.Errorf("search: %d\n%s", code, out)
	}
	out, _, code = run(t, env, "sessions", "rename", a.ID, "Canary", "rollout")
	if code != 0 || !strings.Contains(out, `"Canary rollout"`) {
		t.Errorf("rename: %d\n%s", code, out)
	}
	out, _, code = run(t, env, "sessions", "export", a.ID, "--format", "json", "--json")
	var exp struct{ Path, Content string }
	if code != 0 || json.Unmarshal([]byte(out), &exp) != nil || !strings.Contains(exp.Content, "Canary rollout") {
		t.Errorf("export: %d\n%s", code, out)
	}
	if _, err := os.Stat(exp.Path); err != nil {
		t.Errorf("export file: %v", err)
	}
	out, _, code = run(t, env, "sessions", "delete", b.ID)
	if code != 0 || !strings.Contains(out, "Deleted "+b.ID) {
		t.Errorf("delete: %d\n%s", code, out)
	}

	// Errors: clear messages and exit codes, nothing on stdout.
	out, errOut, code := run(t, env, "sessions", "show", "nope")
	if code != api.KindNotFound.Info().CLI || out != "" || !strings.Contains(errOut, `session "nope": not found`) {
		t.Errorf("unknown id: %d %q %q", code, out, errOut)
	}
	_, errOut, code = run(t, env, "sessions", "show")
	if code != 2 || !strings.Contains(errOut, "needs a session id") {
		t.Errorf("missing arg: %d %q", code, errOut)
	}
	_, errOut, code = run(t, env, "sessions", "list", "--bogus")
	if code != 2 || !strings.Contains(errOut, "bogus") {
		t.Errorf("unknown flag: %d %q", code, errOut)
	}
	_, errOut, code = run(t, env, "frobnicate")
	if code != 2 || !strings.Contains(errOut, "unknown command") {
		t.Errorf("unknown command: %d %q", code, errOut)
	}
	_, errOut, code = run(t, env, "sessions", "rename", a.ID, " ")
	if code != api.KindInvalidArgument.Info().CLI || !strings.Contains(errOut, "title must not be empty") {
		t.Errorf("empty title: %d %q", code, errOut)
	}
	_, errOut, code = run(t, env, "--log-level", "loud", "serve")
	if code != 2 || !strings.Contains(errOut, "log-level") {
		t.Errorf("bad log level: %d %q", code, errOut)
	}
}

func TestVersionAndDefaultDataDir(t *testing.T) {
	t.Parallel()
	out, _, code := run(t, nil, "version")
	if code != 0 || !strings.HasPrefix(out, "ctxls ") {
		t.Errorf("version: %d %q", code, out)
	}
	xdg := t.TempDir()
	env := []string{"CTXLS_DATA_DIR=", "XDG_DATA_HOME=" + xdg}
	out, _, code = run(t, env, "sessions", "list")
	if code != 0 || !strings.Contains(out, "No sessions.") {
		t.Errorf("empty list: %d %q", code, out)
	}
	fi, err := os.Stat(filepath.Join(xdg, "ctxls"))
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("default data dir: %v %v", err, fi)
	}
	home := t.TempDir()
	out, _, code = run(t, []string{"CTXLS_DATA_DIR=", "XDG_DATA_HOME=", "HOME=" + home}, "sessions", "list", "--json")
	if code != 0 || !strings.Contains(out, `"sessions": []`) {
		t.Errorf("home default: %d %q", code, out)
	}
	if _, err := os.Stat(filepath.Join(home, ".local", "share", "ctxls", "ctxls.db")); err != nil {
		t.Errorf("~/.local/share/ctxls: %v", err)
	}
}

// TestServeLogsToFileOnly: in serve mode with --log-file, stderr stays
// quiet and stdout carries only frames.
func TestServeLogsToFileOnly(t *testing.T) {
	t.Parallel()
	logFile := filepath.Join(t.TempDir(), "ctxls.log")
	s := lsptest.Binary(t, nil, "serve", "--data-dir", t.TempDir(), "--log-file", logFile, "--log-level", "debug")
	s.Initialize(lsptest.InitOptions{})
	s.Shutdown()
	if code := s.Exit(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if s.Stderr() != "" {
		t.Errorf("stderr: %q", s.Stderr())
	}
	if errs := s.ProtocolErrors(); len(errs) > 0 {
		t.Errorf("stdout: %q", errs)
	}
	data, _ := os.ReadFile(logFile)
	if !strings.Contains(string(data), "msg=initialized") {
		t.Errorf("log file: %s", data)
	}
}

func hasSession(list []session.Session, id string, messages int) bool {
	for _, s := range list {
		if s.ID == id && s.MessageCount == messages {
			return true
		}
	}
	return false
}

// TestSessionsContext: the CLI changes the files set with the operation the
// editor and the model use (relative paths from the working directory).
func TestSessionsContext(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, err := backend.Open(context.Background(), dir, "")
	if err != nil {
		t.Fatal(err)
	}
	a, _ := st.Create(context.Background(), "Context work")
	st.UpdateContext(context.Background(), a.ID, "ports", []string{"8080"}, "", session.AddedByUser, nil)
	st.Close()
	env := []string{"CTXLS_DATA_DIR=" + dir}
	wd, _ := os.Getwd()
	here := filepath.Join(wd, "cli_test.go")
	out, errOut, code := run(t, env, "sessions", "context", a.ID[:6], "--add", "cli_test.go", "--add", "/no/such/file.go")
	if code != 0 || !strings.Contains(out, "files:\n  "+here+"\n  /no/such/file.go  (missing)") || !strings.Contains(out, "ports:\n  8080") {
		t.Errorf("--add: %d %s\n%s", code, errOut, out)
	}
	out, _, code = run(t, env, "sessions", "context", a.ID, "--drop", "/no/such/file.go", "--json")
	var res struct {
		Context map[string][]string
		Missing []string
	}
	if err := json.Unmarshal([]byte(out), &res); code != 0 || err != nil || strings.Join(res.Context["files"], ",") != here || len(res.Missing) != 0 {
		t.Errorf("--drop --json: %d %v\n%s", code, err, out)
	}
	if _, errOut, code := run(t, env, "sessions", "context", a.ID, "--add", wd); code == 0 || !strings.Contains(errOut, "is a directory") {
		t.Errorf("a folder: %d %s", code, errOut)
	}
}
