package cli_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
	"github.com/ctxls/ctxls/session"
	"github.com/ctxls/ctxls/session/backend"
)

// chatEnv is the environment of a CLI run against the fake provider.
func chatEnv(dir string, fake *openaitest.Server) []string {
	return []string{"CTXLS_DATA_DIR=" + dir, "OPENAI_BASE_URL=" + fake.URL, "CTXLS_MODEL=test-model", "OPENAI_API_KEY="}
}

// showJSON is "ctxls sessions show ID --json".
func showJSON(t *testing.T, env []string, id string) (s session.Session, msgs []session.Message) {
	t.Helper()
	out, errOut, code := run(t, env, "sessions", "show", id, "--json")
	var v struct {
		Session  session.Session
		Messages []session.Message
	}
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil {
		t.Fatalf("show %s: %d %s %s", id, code, out, errOut)
	}
	return v.Session, v.Messages
}

// sessionOf is the session id "ctxls chat" reported on stderr.
func sessionOf(t *testing.T, errOut string) string {
	t.Helper()
	for _, line := range strings.Split(errOut, "\n") {
		if rest, ok := strings.CutPrefix(line, "session "); ok {
			return strings.Fields(rest)[0]
		}
	}
	t.Fatalf("no session line in %q", errOut)
	return ""
}

// TestSessionIDPrefixes: every command that takes a session accepts a
// unique prefix of its id, and says which sessions an ambiguous one matches.
func TestSessionIDPrefixes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, err := backend.Open(context.Background(), dir, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a, _ := st.Create(ctx, "Deploy pipeline")
	b, _ := st.Create(ctx, "Deploy rollback")
	other, _ := st.Create(ctx, "Other work")
	st.Close()
	// Two ids that share their first eight characters.
	aID, bID := "kkkkmmmmaaaaaaaaaaaaaaaaaa", "kkkkmmmmbbbbbbbbbbbbbbbbbb"
	db, err := sql.Open("sqlite", filepath.Join(dir, "ctxls.db"))
	if err != nil {
		t.Fatal(err)
	}
	for from, to := range map[string]string{a.ID: aID, b.ID: bID} {
		if _, err := db.Exec("UPDATE sessions SET id = ? WHERE id = ?", to, from); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	st, _ = backend.Open(context.Background(), dir, "")
	st.AppendMessage(ctx, &session.Message{SessionID: aID, Role: session.RoleUser, Content: "why is the canary failing"})
	st.Close()
	fake := openaitest.New(t)
	env := chatEnv(dir, fake)

	out, _, code := run(t, env, "sessions", "show", "kkkkmmmma")
	if code != 0 || !strings.Contains(out, "why is the canary failing") || !strings.Contains(out, aID) {
		t.Errorf("show by prefix: %d\n%s", code, out)
	}
	for _, args := range [][]string{
		{"sessions", "show", "kkkk"}, {"sessions", "rename", "kkkkm", "x"}, {"sessions", "export", "KKKKMMMM"},
		{"sessions", "delete", "kkkkmmmm"}, {"sessions", "title", "kkkk"}, {"chat", "--session", "kkkk", "hi"},
	} {
		out, errOut, code := run(t, env, args...)
		if code != api.KindInvalidArgument.Info().CLI || out != "" || !strings.Contains(errOut, "is ambiguous") ||
			!strings.Contains(errOut, aID+"  Deploy pipeline") || !strings.Contains(errOut, bID+"  Deploy rollback") || strings.Contains(errOut, other.ID) {
			t.Errorf("%v: %d %q\n%s", args, code, out, errOut)
		}
	}
	for _, args := range [][]string{{"sessions", "show", "zzzzzz"}, {"sessions", "title", "zzzzzz"}, {"chat", "--session", "zzzzzz", "hi"}} {
		_, errOut, code := run(t, env, args...)
		if code != api.KindNotFound.Info().CLI || !strings.Contains(errOut, `session "zzzzzz": not found (no session id starts with it)`) {
			t.Errorf("%v: %d %q", args, code, errOut)
		}
	}
	if _, errOut, code := run(t, env, "sessions", "show", "kkk"); code != api.KindInvalidArgument.Info().CLI || !strings.Contains(errOut, "at least its first 4 characters") {
		t.Errorf("a short prefix: %d %q", code, errOut)
	}
	if len(fake.Requests()) != 0 {
		t.Errorf("a chat with a bad session asked the provider")
	}

	out, _, code = run(t, env, "sessions", "rename", "kkkkmmmmb", "Rollback", "plan")
	if code != 0 || out != "Renamed "+bID+" to \"Rollback plan\"\n" {
		t.Errorf("rename by prefix: %d %q", code, out)
	}
	out, _, code = run(t, env, "sessions", "export", "kkkkmmmma", "--json")
	var exp struct{ Path string }
	if code != 0 || json.Unmarshal([]byte(out), &exp) != nil || !strings.Contains(exp.Path, "deploy-pipeline") {
		t.Errorf("export by prefix: %d %s", code, out)
	}
	out, _, code = run(t, env, "sessions", "title", "kkkkmmmma")
	if code != 0 || out != "title:  Deploy pipeline\nsource: user\n" {
		t.Errorf("title by prefix: %d %q", code, out)
	}
	out, errOut, code := run(t, env, "chat", "--session", "kkkkmmmma", "hi")
	if code != 0 || out != "ok\n" || sessionOf(t, errOut) != aID {
		t.Errorf("chat --session by prefix: %d %q %q", code, out, errOut)
	}
	// One unknown id among several deletes nothing.
	if _, errOut, code := run(t, env, "sessions", "delete", "kkkkmmmmb", "zzzzzz"); code != api.KindNotFound.Info().CLI || !strings.Contains(errOut, "not found") {
		t.Errorf("delete with an unknown id: %d %q", code, errOut)
	}
	showJSON(t, env, bID)
	out, _, code = run(t, env, "sessions", "delete", "kkkkmmmmb", other.ID[:6])
	if code != 0 || out != "Deleted "+bID+"\nDeleted "+other.ID+"\n" {
		t.Errorf("delete by prefixes: %d %q", code, out)
	}
	// The full id still works, and the prefix is now unique.
	if out, _, code = run(t, env, "sessions", "show", aID); code != 0 {
		t.Errorf("show by full id: %d", code)
	}
	if out, _, code = run(t, env, "sessions", "title", "kkkk"); code != 0 || !strings.Contains(out, "Deploy pipeline") {
		t.Errorf("a prefix unique after the delete: %d %q", code, out)
	}
}

// TestSessionsTitle: "ctxls sessions title" prints, sets, clears and
// regenerates a title.
func TestSessionsTitle(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	dir := t.TempDir()
	env := chatEnv(dir, fake)
	fake.Enqueue(openaitest.Reply{Chunks: []string{"Because of the middleware."}}, openaitest.Reply{Chunks: []string{"Login redirect loop"}})
	_, errOut, code := run(t, env, "chat", "Why does login redirect twice?\nDetails below.")
	if code != 0 {
		t.Fatalf("chat: %d %s", code, errOut)
	}
	id := sessionOf(t, errOut)
	title := func(args ...string) (string, string, int) {
		return run(t, env, append([]string{"sessions", "title", id[:8]}, args...)...)
	}
	if out, _, code := title(); code != 0 || out != "title:  Login redirect loop\nsource: model\n" {
		t.Errorf("print: %d %q", code, out)
	}
	if out, _, code := title("My", "own", "title"); code != 0 || out != "title:  My own title\nsource: user\n" {
		t.Errorf("set: %d %q", code, out)
	}
	out, _, code := title("--clear", "--json")
	var v struct{ Session session.Session }
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil || v.Session.Title != "Why does login redirect twice?" || v.Session.TitleSource != session.TitleAuto ||
		!strings.Contains(v.Session.Folder, "--why-does-login-redirect-twice--") {
		t.Errorf("clear: %d %s", code, out)
	}
	fake.Enqueue(openaitest.Reply{Chunks: []string{"Regenerated title"}})
	if out, errOut, code := title("--regenerate"); code != 0 || out != "title:  Regenerated title\nsource: model\n" {
		t.Errorf("regenerate: %d %q %q", code, out, errOut)
	}
	reqs := fake.WaitRequests(3, 5*time.Second)
	var text string
	for _, m := range reqs[2].Parsed.Messages {
		text += m.Content + "\n"
	}
	if reqs[2].Parsed.Stream || !strings.Contains(text, "Why does login redirect twice?\nDetails below.") || !strings.Contains(text, "Because of the middleware.") {
		t.Errorf("the regenerate request:\n%s", text)
	}
	fake.Enqueue(openaitest.Reply{Status: 400, ErrorMessage: "no titles today"})
	if _, errOut, code := title("--regenerate"); code != api.KindProviderFailed.Info().CLI || !strings.Contains(errOut, "the title request failed; the title is unchanged") || !strings.Contains(errOut, "no titles today") {
		t.Errorf("failed regenerate: %d %q", code, errOut)
	}
	if out, _, _ := title(); out != "title:  Regenerated title\nsource: model\n" {
		t.Errorf("after a failed regenerate: %q", out)
	}
	// Usage mistakes.
	for _, args := range [][]string{{"--regenerate", "--clear"}, {"New", "--clear"}, {"New", "--regenerate"}} {
		if _, errOut, code := title(args...); code != 2 || !strings.Contains(errOut, "not both") {
			t.Errorf("%v: %d %q", args, code, errOut)
		}
	}
	if _, errOut, code := run(t, env, "sessions", "title"); code != 2 || !strings.Contains(errOut, "needs a session id") {
		t.Errorf("no id: %d %q", code, errOut)
	}
	if _, errOut, code := title(" "); code != api.KindInvalidArgument.Info().CLI || !strings.Contains(errOut, "title must not be empty") {
		t.Errorf("empty title: %d %q", code, errOut)
	}
	if _, errOut, code := run(t, []string{"CTXLS_DATA_DIR=" + dir, "OPENAI_BASE_URL=", "OPENAI_API_KEY=", "CTXLS_MODEL="}, "sessions", "title", id, "--regenerate", "--base-url", "http://127.0.0.1:1/v1"); code != api.KindNoProvider.Info().CLI || !strings.Contains(errOut, "no model is configured") {
		t.Errorf("regenerate without a model: %d %q", code, errOut)
	}
}

// TestChatWaitsForItsTitle (defect 4): "ctxls chat" exits only once the
// title request its turn started has finished.
func TestChatWaitsForItsTitle(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	dir := t.TempDir()
	env := chatEnv(dir, fake)
	fake.Enqueue(openaitest.Reply{Chunks: []string{"hello"}}, openaitest.Reply{Chunks: []string{"A slow title"}, Delay: time.Second})
	lsptest.BuildBinary(t) // before the clock starts
	start := time.Now()
	out, errOut, code := run(t, env, "chat", "name me slowly")
	if code != 0 || out != "hello\n" || time.Since(start) < time.Second {
		t.Fatalf("chat: %d %q %q after %v", code, out, errOut, time.Since(start))
	}
	id := sessionOf(t, errOut)
	if !strings.Contains(errOut, "session "+id+"  A slow title\n") {
		t.Errorf("stderr: %q", errOut)
	}
	// Read right after exit, straight from the store.
	st, err := backend.Open(context.Background(), dir, "")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s, err := st.Get(context.Background(), id)
	if err != nil || s.Title != "A slow title" || s.TitleSource != session.TitleModel {
		t.Errorf("stored title: %+v %v", s, err)
	}
}

// TestChatTitleWaitIsBounded: a title request that does not answer holds
// "ctxls chat" up for 10 s at most, and is then abandoned.
func TestChatTitleWaitIsBounded(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	dir := t.TempDir()
	fake.Enqueue(openaitest.Reply{Chunks: []string{"hello"}}, openaitest.Reply{Chunks: []string{"Never"}, Delay: time.Minute})
	lsptest.BuildBinary(t) // before the clock starts
	start := time.Now()
	out, errOut, code := run(t, chatEnv(dir, fake), "chat", "name me never")
	took := time.Since(start)
	if code != 0 || out != "hello\n" || took < 10*time.Second || took > 20*time.Second {
		t.Fatalf("chat: %d %q %q after %v", code, out, errOut, took)
	}
	if !strings.Contains(errOut, "the title request did not finish within 10s") || !strings.Contains(errOut, "  name me never\n") {
		t.Errorf("stderr: %q", errOut)
	}
	fake.WaitCancelled(1, 5*time.Second)
}

// TestChatContinueAndModel: --continue takes the most recently active
// session; --model is used for the turn and kept as the session's model,
// which show, export and history.md name; --new is gone.
func TestChatContinueAndModel(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"ok"}}))
	dir := t.TempDir()
	env := chatEnv(dir, fake)
	chatOK := func(args ...string) string {
		t.Helper()
		out, errOut, code := run(t, env, append([]string{"chat"}, args...)...)
		if code != 0 || out != "ok\n" {
			t.Fatalf("chat %v: %d %q %q", args, code, out, errOut)
		}
		return sessionOf(t, errOut)
	}
	a := chatOK("first session")
	b := chatOK("second session")
	if a == b {
		t.Fatal("two new sessions expected")
	}
	if got := chatOK("-c", "follow up"); got != b {
		t.Errorf("-c continued %s, want the latest %s", got, b)
	}
	chatOK("--session", a[:6], "back to a")
	if got := chatOK("--continue", "again"); got != a {
		t.Errorf("--continue continued %s, want %s", got, a)
	}
	if _, msgs := showJSON(t, env, a); len(msgs) != 6 {
		t.Errorf("session a has %d messages, want 6", len(msgs))
	}

	// --model: this turn, and the session's later turns.
	chatOK("-c", "--model", "other-model", "with another model")
	chatOK("-c", "still the other one")
	turns := fake.Streamed()
	if n := len(turns); n != 7 || turns[5].Parsed.Model != "other-model" || turns[6].Parsed.Model != "other-model" || turns[4].Parsed.Model != "test-model" {
		t.Fatalf("%d turns; models %q %q %q", n, turns[4].Parsed.Model, turns[5].Parsed.Model, turns[6].Parsed.Model)
	}
	s, msgs := showJSON(t, env, a)
	if s.Meta.Model != "other-model" || msgs[len(msgs)-1].Model != "other-model" || msgs[1].Model != "test-model" {
		t.Errorf("session model %q; answers by %q and %q", s.Meta.Model, msgs[1].Model, msgs[len(msgs)-1].Model)
	}
	out, _, _ := run(t, env, "sessions", "show", a)
	if !strings.Contains(out, "  model:    other-model\n") || !strings.Contains(out, "[assistant · other-model · ") || !strings.Contains(out, "[assistant · test-model · ") {
		t.Errorf("show:\n%s", out)
	}
	out, _, _ = run(t, env, "sessions", "export", a, "--json")
	var exp struct{ Content string }
	json.Unmarshal([]byte(out), &exp)
	if !strings.Contains(exp.Content, "\n## assistant · other-model · ") {
		t.Errorf("export:\n%s", exp.Content)
	}
	out, _, _ = run(t, env, "sessions", "export", a, "--json", "--format", "json")
	json.Unmarshal([]byte(out), &exp)
	if !strings.Contains(exp.Content, `"model": "other-model"`) {
		t.Errorf("json export:\n%s", exp.Content)
	}
	if h, err := os.ReadFile(filepath.Join(s.Folder, "history.md")); err != nil || !strings.Contains(string(h), "\n## assistant · other-model · ") {
		t.Errorf("history.md: %v\n%s", err, h)
	}
	// Another session keeps the provider's model.
	chatOK("--session", b, "and b?")
	if turns := fake.Streamed(); turns[len(turns)-1].Parsed.Model != "test-model" {
		t.Errorf("session b used %q", turns[len(turns)-1].Parsed.Model)
	}

	// The flags.
	if _, errOut, code := run(t, env, "chat", "--new", "x"); code != 2 || !strings.Contains(errOut, "unknown flag: --new") {
		t.Errorf("--new: %d %q", code, errOut)
	}
	if _, errOut, code := run(t, env, "chat", "-c", "--session", a, "x"); code != 2 || !strings.Contains(errOut, "not both") {
		t.Errorf("-c with --session: %d %q", code, errOut)
	}
	help, _, _ := run(t, env, "chat", "--help")
	for _, want := range []string{"chat [--session ID | --continue] [--again] [--model MODEL] [--file PATH]... [MESSAGE]", "-c, --continue", "recorded as the session's model", "unique prefix"} {
		if !strings.Contains(help, want) {
			t.Errorf("help lacks %q:\n%s", want, help)
		}
	}
	if strings.Contains(help, "--new") {
		t.Errorf("help still offers --new:\n%s", help)
	}
	// Nothing to continue: a new session, and it says so.
	empty := t.TempDir()
	out, errOut, code := run(t, chatEnv(empty, fake), "chat", "-c", "hello")
	if code != 0 || out != "ok\n" || !strings.Contains(errOut, "no session to continue; starting a new one") {
		t.Errorf("-c with no session: %d %q %q", code, out, errOut)
	}
}
