package e2e_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
	"github.com/ctxls/ctxls/prompts"
)

// startViewBinary starts the built binary with debug logs (the view
// capture's skips are visible there) and initializes it with params merged
// over a workspace of root, clientInfo and initializationOptions.
func startViewBinary(t *testing.T, env []string, rootURI string, clientInfo map[string]any, opts map[string]any) *lsptest.Server {
	t.Helper()
	s := lsptest.Binary(t, env, "serve", "--data-dir", t.TempDir(), "--log-level", "debug")
	params := map[string]any{
		"processId":    nil,
		"capabilities": map[string]any{},
		"clientInfo":   clientInfo,
	}
	if rootURI != "" {
		params["rootUri"] = rootURI
		params["workspaceFolders"] = []any{map[string]any{"uri": rootURI, "name": "root"}}
	}
	if opts != nil {
		params["initializationOptions"] = opts
	}
	if err := s.Call("initialize", params, nil); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	s.Notify("initialized", map[string]any{})
	return s
}

// waitLog waits until the server's stderr holds substr at least n times.
func waitStderr(t *testing.T, s *lsptest.Server, substr string, n int) {
	t.Helper()
	deadline := time.Now().Add(s.Timeout())
	for strings.Count(s.Stderr(), substr) < n {
		if time.Now().After(deadline) {
			t.Fatalf("the log never held %q %d times; stderr:\n%s", substr, n, s.Stderr())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func viewNote(uri string, sel ...int) map[string]any {
	p := map[string]any{"textDocument": map[string]any{"uri": uri}}
	if len(sel) == 4 {
		p["selection"] = map[string]any{
			"start": map[string]any{"line": sel[0], "character": sel[1]},
			"end":   map[string]any{"line": sel[2], "character": sel[3]},
		}
	}
	return p
}

func viewContextChanges(t *testing.T, s *lsptest.Server) []api.ContextChangedParams {
	t.Helper()
	var out []api.ContextChangedParams
	for _, m := range s.Notifications(api.ContextChanged) {
		var p api.ContextChangedParams
		mustUnmarshal(t, m.Params, &p)
		out = append(out, p)
	}
	return out
}

func storedApplet(t *testing.T, s *lsptest.Server, id string) []string {
	t.Helper()
	var got api.ContextGetResult
	s.MustCommand(api.ContextGet, map[string]any{"sessionId": id, "setName": "applet"}, &got)
	return got.Context["applet"]
}

// TestViewIdleCapturesApplet: over the built binary, the editor's view is
// captured as the current session's applet set once it has rested for
// viewIdleMs, with exactly one ctxls/contextChanged carrying the applet
// object; an identical view writes and sends nothing; a file outside the
// workspace and a non-file URI are not captured; a burst of views is
// captured once, as its last view, after the idle time set in settings.
func TestViewIdleCapturesApplet(t *testing.T) {
	parallel(t, waitTests)
	root, rootURI := workspace(t)
	s := startViewBinary(t, nil, rootURI, map[string]any{"name": "lsptest"}, map[string]any{"viewIdleMs": 100})
	var created api.SessionResult
	s.MustCommand(api.SessionNew, map[string]any{}, &created)
	id := created.Session.ID
	mainURI := "file://" + filepath.Join(root, "main.go")

	// Lines 42 to 49 selected, ending at the start of line 50.
	s.Notify(api.DidChangeView, viewNote(mainURI, 41, 4, 49, 0))
	s.WaitNotification(api.ContextChanged, 1)
	want := []string{"editor", "file=" + filepath.Join(root, "main.go"), "line=42", "selection=42-49"}
	cc := viewContextChanges(t, s)
	if len(cc) != 1 || cc[0].SessionID != id || cc[0].Reason != "changed" || !slices.Equal(cc[0].Context["applet"], want) || !slices.Equal(cc[0].Added, want) {
		t.Fatalf("contextChanged after the idle view: %+v", cc)
	}
	if a := cc[0].Applet; a == nil || a.Slug != "editor" || len(a.Params) != 3 || a.Params["file"] != filepath.Join(root, "main.go") || a.Params["line"] != "42" || a.Params["selection"] != "42-49" {
		t.Errorf("applet object: %+v", cc[0].Applet)
	}
	if got := storedApplet(t, s, id); !slices.Equal(got, want) {
		t.Errorf("stored applet %q, want %q", got, want)
	}

	// The same view again: read, found equal, neither written nor sent.
	s.Notify(api.DidChangeView, viewNote(mainURI, 41, 4, 49, 0))
	waitStderr(t, s, `reason="applet unchanged"`, 1)
	if n := len(viewContextChanges(t, s)); n != 1 {
		t.Errorf("an identical view sent contextChanged: %d notifications", n)
	}

	// A cursor (an empty selection) gives a line and no selection.
	specURI := "file://" + filepath.Join(root, "docs", "spec.md")
	s.Notify(api.DidChangeView, viewNote(specURI, 9, 3, 9, 3))
	s.WaitNotification(api.ContextChanged, 2)
	want = []string{"editor", "file=" + filepath.Join(root, "docs", "spec.md"), "line=10"}
	if got := storedApplet(t, s, id); !slices.Equal(got, want) {
		t.Errorf("applet after a cursor move %q, want %q", got, want)
	}
	if cc := viewContextChanges(t, s); len(cc[1].Applet.Params) != 2 || cc[1].Applet.Params["line"] != "10" || !slices.Equal(cc[1].Removed, []string{"file=" + filepath.Join(root, "main.go"), "line=42", "selection=42-49"}) {
		t.Errorf("second contextChanged: %+v", cc[1])
	}

	// Not a workspace file, not a file at all: nothing captured.
	outside := filepath.Join(t.TempDir(), "x.go")
	os.WriteFile(outside, []byte("package x\n"), 0o644)
	s.Notify(api.DidChangeView, viewNote("file://"+outside, 3, 0, 3, 0))
	waitStderr(t, s, `reason="outside the workspace folders"`, 1)
	s.Notify(api.DidChangeView, viewNote("untitled:Untitled-1", 3, 0, 3, 0))
	waitStderr(t, s, `reason="not a file:// document"`, 1)
	if n := len(viewContextChanges(t, s)); n != 2 {
		t.Errorf("ignored views sent contextChanged: %d notifications", n)
	}
	if got := storedApplet(t, s, id); !slices.Equal(got, want) {
		t.Errorf("ignored views changed the applet to %q", got)
	}

	// viewIdleMs from settings: a burst of views is captured once, as its
	// last view, no sooner than the new idle time after it.
	s.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"ctxls": map[string]any{"viewIdleMs": 700}}})
	captured := strings.Count(s.Stderr(), `msg="view captured"`)
	var last time.Time
	for line := range 5 {
		last = time.Now()
		s.Notify(api.DidChangeView, viewNote(mainURI, line, 0, line, 0))
	}
	n := s.WaitNotification(api.ContextChanged, 3)
	if waited := n.At.Sub(last); waited < 700*time.Millisecond {
		t.Errorf("captured %v after the last view; viewIdleMs is 700", waited)
	}
	want = []string{"editor", "file=" + filepath.Join(root, "main.go"), "line=5"}
	if got := storedApplet(t, s, id); !slices.Equal(got, want) {
		t.Errorf("applet after the burst %q, want %q", got, want)
	}
	// The capture is logged after its notification is sent: wait for it.
	waitStderr(t, s, `msg="view captured"`, captured+1)
	if got := strings.Count(s.Stderr(), `msg="view captured"`); got != captured+1 {
		t.Errorf("a burst of 5 views was captured %d times", got-captured)
	}
	s.Shutdown()
	if code := s.Exit(); code != 0 {
		t.Errorf("exit code %d", code)
	}
	if errs := s.ProtocolErrors(); len(errs) > 0 {
		t.Errorf("stdout carried non-protocol output: %q", errs)
	}
}

// TestViewCaptureGoesToTheSessionOfTheView: the view is written to the
// session that was current when it changed, and skipped when another
// session became current before the idle time ran out; with no current
// session none is created.
func TestViewCaptureGoesToTheSessionOfTheView(t *testing.T) {
	parallel(t, waitTests)
	root, rootURI := workspace(t)
	s := startViewBinary(t, nil, rootURI, map[string]any{"name": "lsptest"}, map[string]any{"viewIdleMs": 600})
	mainURI := "file://" + filepath.Join(root, "main.go")

	// No current session: nothing is created.
	s.Notify(api.DidChangeView, viewNote(mainURI, 1, 0, 1, 0))
	waitStderr(t, s, `reason="no current session yet; kept for the first question's"`, 1)
	var list api.SessionListResult
	s.MustCommand(api.SessionList, map[string]any{}, &list)
	if len(list.Sessions) != 0 {
		t.Errorf("a view created a session: %+v", list.Sessions)
	}

	var a, b api.SessionResult
	s.MustCommand(api.SessionNew, map[string]any{"title": "A"}, &a)
	s.Notify(api.DidChangeView, viewNote(mainURI, 7, 0, 7, 0))
	s.MustCommand(api.SessionNew, map[string]any{"title": "B"}, &b)
	waitStderr(t, s, `reason="the session is no longer current"`, 1)
	if got := storedApplet(t, s, a.Session.ID); got != nil {
		t.Errorf("the old session got the applet %q", got)
	}
	if got := storedApplet(t, s, b.Session.ID); got != nil {
		t.Errorf("the new session got the applet %q", got)
	}
	if n := len(s.Notifications(api.ContextChanged)); n != 0 {
		t.Errorf("%d contextChanged notifications for a skipped capture", n)
	}
	// The next view, while B is current, goes to B.
	s.Notify(api.DidChangeView, viewNote(mainURI, 7, 0, 7, 0))
	s.WaitNotification(api.ContextChanged, 1)
	if got := storedApplet(t, s, b.Session.ID); !slices.Equal(got, []string{"editor", "file=" + filepath.Join(root, "main.go"), "line=8"}) {
		t.Errorf("B's applet %q", got)
	}
	// A pending capture is dropped at shutdown, before the store closes.
	s.Notify(api.DidChangeView, viewNote(mainURI, 9, 0, 9, 0))
	s.Shutdown()
	if code := s.Exit(); code != 0 {
		t.Errorf("exit code %d; stderr:\n%s", code, s.Stderr())
	}
}

// TestDidFocusIsAnAliasOfDidChangeView: textDocument/didFocus records the
// active file and is captured like a view without a selection.
func TestDidFocusIsAnAliasOfDidChangeView(t *testing.T) {
	parallel(t, waitTests)
	root, rootURI := workspace(t)
	s := startViewBinary(t, nil, rootURI, map[string]any{"name": "lsptest"}, map[string]any{"viewIdleMs": 100})
	var created api.SessionResult
	s.MustCommand(api.SessionNew, map[string]any{}, &created)
	readme := filepath.Join(root, "README.md")
	s.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": "file://" + filepath.Join(root, "main.go"), "languageId": "go", "version": 1, "text": "package main\n"}})
	s.Notify(api.DidFocus, map[string]any{"textDocument": map[string]any{"uri": "file://" + readme}})
	var cand api.CandidatesResult
	s.MustCommand(api.ContextCandids, map[string]any{}, &cand)
	active := ""
	for _, c := range cand.Files {
		if c.Active {
			active += c.Path + ";"
		}
	}
	if active != readme+";" {
		t.Errorf("active files %q, want %s", active, readme)
	}
	s.WaitNotification(api.ContextChanged, 1)
	cc := viewContextChanges(t, s)
	if a := cc[0].Applet; a == nil || a.Slug != "editor" || len(a.Params) != 1 || a.Params["file"] != readme {
		t.Errorf("applet from didFocus: %+v", cc[0].Applet)
	}
	// ctxls/didChangeView moves the active file too.
	s.Notify(api.DidChangeView, viewNote("file://"+filepath.Join(root, "main.go")))
	s.MustCommand(api.ContextCandids, map[string]any{}, &cand)
	for _, c := range cand.Files {
		if c.Active != (c.Path == filepath.Join(root, "main.go")) {
			t.Errorf("after didChangeView: %s active=%v", c.Path, c.Active)
		}
	}
	// Malformed params are logged, and the connection carries on.
	s.Notify(api.DidChangeView, map[string]any{"textDocument": "nope"})
	s.Notify(api.DidChangeView, map[string]any{})
	s.MustCommand(api.ContextCandids, map[string]any{}, &cand)
	s.Shutdown()
	s.Exit()
}

// gitWorkspace is workspace with .git/HEAD on branch.
func gitWorkspace(t *testing.T, head string) (string, string) {
	t.Helper()
	root, rootURI := workspace(t)
	if err := os.MkdirAll(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".git", "HEAD"), []byte(head), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, rootURI
}

// TestResumeShowsEnvironmentAndApplet: resume records the connection's
// envHint (client, workspace, git branch read from .git/HEAD) and the
// reminder starts with it, then shows the captured applet in the design's
// format; initializationOptions.envHint replaces the computed hint.
func TestResumeShowsEnvironmentAndApplet(t *testing.T) {
	parallel(t, waitTests)
	root, rootURI := gitWorkspace(t, "ref: refs/heads/feature/login\n")
	s := startViewBinary(t, nil, rootURI, map[string]any{"name": "vscode", "version": "1.90.0"}, map[string]any{"viewIdleMs": 100})
	var created api.SessionResult
	s.MustCommand(api.SessionNew, map[string]any{}, &created)
	id := created.Session.ID
	s.Notify(api.DidChangeView, viewNote("file://"+filepath.Join(root, "main.go"), 41, 0, 41, 7))
	s.WaitNotification(api.ContextChanged, 1)

	var res api.ResumeResult
	s.MustCommand(api.SessionResume, map[string]any{"sessionId": id}, &res)
	env := "vscode 1.90.0; workspace " + root + "; git branch feature/login"
	want := "Environment: " + env + "\nLast applet: editor (file=" + filepath.Join(root, "main.go") + ", line=42)\n"
	if res.Reminder != want {
		t.Errorf("reminder:\n%q\nwant\n%q", res.Reminder, want)
	}
	if res.Session.Meta.EnvHint != env {
		t.Errorf("meta.envHint %q, want %q", res.Session.Meta.EnvHint, env)
	}
	n := s.WaitNotification(api.ContextChanged, 2)
	var cc api.ContextChangedParams
	mustUnmarshal(t, n.Params, &cc)
	if cc.Reason != "resume" || cc.Applet == nil || cc.Applet.Slug != "editor" || cc.Applet.Params["line"] != "42" {
		t.Errorf("resume notification: %+v", cc)
	}
	s.Shutdown()
	s.Exit()

	// A detached HEAD, a client without a version, and an override.
	root2, rootURI2 := gitWorkspace(t, "3f786850e387550fdab836ed7e6dc881de23001b\n")
	s2 := startViewBinary(t, nil, rootURI2, map[string]any{"name": "nvim"}, nil)
	s2.MustCommand(api.ContextSet, map[string]any{"setName": "ports", "items": []string{"8080"}}, nil)
	var show api.ShowResult
	s2.MustCommand(api.SessionShow, map[string]any{}, &show)
	if want := "nvim; workspace " + root2 + "; git branch 3f78685"; show.Session.Meta.EnvHint != want {
		t.Errorf("envHint after context.set %q, want %q", show.Session.Meta.EnvHint, want)
	}
	s2.Shutdown()
	s2.Exit()

	plain, plainURI := workspace(t)
	s3 := startViewBinary(t, nil, plainURI, map[string]any{"name": "vscode", "version": "1.90.0"},
		map[string]any{"envHint": "Emacs 29 over TRAMP on build-01"})
	s3.MustCommand(api.SessionNew, map[string]any{}, &created)
	s3.MustCommand(api.SessionResume, map[string]any{"sessionId": created.Session.ID}, &res)
	if !strings.HasPrefix(res.Reminder, "Environment: Emacs 29 over TRAMP on build-01\n") || res.Session.Meta.EnvHint != "Emacs 29 over TRAMP on build-01" {
		t.Errorf("override: reminder %q meta %q", res.Reminder, res.Session.Meta.EnvHint)
	}
	s3.Shutdown()
	s3.Exit()

	// Not a repository: the branch is left out.
	s4 := startViewBinary(t, nil, plainURI, map[string]any{"name": "vscode", "version": "1.90.0"}, nil)
	s4.MustCommand(api.SessionNew, map[string]any{}, &created)
	s4.MustCommand(api.SessionResume, map[string]any{"sessionId": created.Session.ID}, &res)
	if want := "Environment: vscode 1.90.0; workspace " + plain + "\n"; res.Reminder != want {
		t.Errorf("no repository: reminder %q, want %q", res.Reminder, want)
	}
	s4.Shutdown()
	s4.Exit()
}

// TestBadViewIdleMsIsRefused: initializationOptions.viewIdleMs out of range
// fails initialize with InvalidParams naming it.
func TestBadViewIdleMsIsRefused(t *testing.T) {
	parallel(t, waitTests)
	for _, v := range []any{0, -5, 3_600_001, "2000", 1.5} {
		s := lsptest.Binary(t, nil, "serve", "--data-dir", t.TempDir())
		err := s.Call("initialize", map[string]any{"processId": nil, "capabilities": map[string]any{}, "initializationOptions": map[string]any{"viewIdleMs": v}}, nil)
		rerr, _ := err.(*lsptest.RPCError)
		if rerr == nil || rerr.Code != -32602 || !strings.Contains(rerr.Message, "viewIdleMs") {
			t.Errorf("viewIdleMs %v: %v", v, err)
		}
		s.Kill()
	}
}

// TestWorkspaceFolderChangeIsStoredAndSent: a workspace folder change is
// stored as a system message of the current session and updates its
// envHint; the next turn's request to the provider carries it in order.
// (The order check needs the turn engine to send stored system messages,
// and the environment check needs it to fill prompts.Input.Env: both land
// with the engine change of issue 10.)
func TestWorkspaceFolderChangeIsStoredAndSent(t *testing.T) {
	parallel(t, waitTests)
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Some title"}}))
	fake.Enqueue(openaitest.Reply{Chunks: []string{"first answer"}})
	rootA, uriA := workspace(t)
	rootB, uriB := workspace(t)
	s := startViewBinary(t, []string{"OPENAI_API_KEY=sk-test-not-real"}, uriA, map[string]any{"name": "lsptest"}, map[string]any{
		"provider": map[string]any{"baseURL": fake.URL, "model": "test-model", "contextWindow": 16000, "maxOutputTokens": 1000},
	})

	// No current session: nothing stored, no session created.
	s.Notify("workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{"added": []any{map[string]any{"uri": uriB, "name": "b"}}, "removed": []any{}}})
	s.Notify("workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{"added": []any{}, "removed": []any{map[string]any{"uri": uriB, "name": "b"}}}})
	var list api.SessionListResult
	s.MustCommand(api.SessionList, map[string]any{}, &list)
	if len(list.Sessions) != 0 {
		t.Fatalf("a workspace change created a session: %+v", list.Sessions)
	}

	var first api.ChatResult
	s.MustCommand(api.Chat, map[string]any{"message": "first question"}, &first)
	fake.WaitRequests(2, 10*time.Second) // the turn and its title
	var show api.ShowResult
	s.MustCommand(api.SessionShow, map[string]any{}, &show)
	if want := "lsptest; workspace " + rootA; show.Session.Meta.EnvHint != want {
		t.Errorf("envHint at turn start %q, want %q", show.Session.Meta.EnvHint, want)
	}

	s.Notify("workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{
		"added":   []any{map[string]any{"uri": uriB, "name": "b"}},
		"removed": []any{map[string]any{"uri": uriA, "name": "a"}},
	}})
	s.MustCommand(api.SessionShow, map[string]any{}, &show)
	note := fmt.Sprintf("Workspace folders changed: added %s; removed %s", rootB, rootA)
	var roles []string
	for _, m := range show.Messages {
		roles = append(roles, string(m.Role))
	}
	if len(show.Messages) != 3 || show.Messages[2].Role != api.RoleSystem || show.Messages[2].Content != note {
		t.Fatalf("messages after the folder change: %v %+v", roles, show.Messages)
	}
	if want := "lsptest; workspace " + rootB; show.Session.Meta.EnvHint != want {
		t.Errorf("envHint after the folder change %q, want %q", show.Session.Meta.EnvHint, want)
	}

	fake.Enqueue(openaitest.Reply{Chunks: []string{"second answer"}})
	var second api.ChatResult
	s.MustCommand(api.Chat, map[string]any{"message": "second question"}, &second)
	var turn *openaitest.Request
	for _, r := range fake.Requests() {
		msgs := r.Parsed.Messages
		if len(msgs) > 0 && r.Question() == "second question" {
			turn = &r
		}
	}
	if turn == nil {
		t.Fatal("no provider request for the second turn")
	}
	// The turn's system prompt starts its Session Context with the envHint
	// recorded at turn start (needs chat/engine.go to fill prompts.Input.Env).
	if sys := turn.ModelContext(); !strings.Contains(sys, "## Session Context\n\nEnvironment: lsptest; workspace "+rootB+"\n") {
		t.Errorf("the second turn's system prompt lacks the environment:\n%s", sys)
	}
	var got []string
	for _, m := range turn.Parsed.Messages[1 : len(turn.Parsed.Messages)-1] {
		_, text := prompts.SplitContext(m.Content) // the block the first question was sent with
		got = append(got, m.Role+": "+text)
	}
	got = append(got, "user: "+turn.Question()) // after the turn's context
	want := []string{"user: first question", "assistant: first answer", "system: " + note, "user: second question"}
	if !slices.Equal(got, want) {
		b, _ := json.MarshalIndent(got, "", "  ")
		t.Errorf("the second turn's messages after the system prompt:\n%s\nwant %q", b, want)
	}
	s.Shutdown()
	s.Exit()
}

// TestViewCapturesRaceSessionSwitches runs in process (so -race sees the
// timer goroutine): views every millisecond while sessions are created and
// switched, then shutdown while captures may be running. Every applet
// written is one of the views sent, and the daemon exits cleanly.
func TestViewCapturesRaceSessionSwitches(t *testing.T) {
	parallel(t, waitTests)
	root, rootURI := workspace(t)
	s := startInProcess(t)
	s.Initialize(lsptest.InitOptions{RootURI: rootURI, InitOptions: map[string]any{"viewIdleMs": 1}})
	mainURI := "file://" + filepath.Join(root, "main.go")
	var ids []string
	for i := range 20 {
		var created api.SessionResult
		s.MustCommand(api.SessionNew, map[string]any{}, &created)
		ids = append(ids, created.Session.ID)
		for j := range 5 {
			s.Notify(api.DidChangeView, viewNote(mainURI, i*5+j, 0, i*5+j, 0))
			time.Sleep(time.Millisecond)
		}
	}
	// The last session is still current and its last view rests.
	deadline := time.Now().Add(10 * time.Second)
	want := []string{"editor", "file=" + filepath.Join(root, "main.go"), "line=100"}
	for !slices.Equal(storedApplet(t, s, ids[len(ids)-1]), want) {
		if time.Now().After(deadline) {
			t.Fatalf("the last view was never captured: %q", storedApplet(t, s, ids[len(ids)-1]))
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, id := range ids {
		got := storedApplet(t, s, id)
		if got == nil {
			continue
		}
		if len(got) != 3 || got[0] != "editor" || got[1] != "file="+filepath.Join(root, "main.go") || !strings.HasPrefix(got[2], "line=") {
			t.Errorf("session %s applet %q", id, got)
		}
	}
	for range 10 {
		s.Notify(api.DidChangeView, viewNote(mainURI, 1, 0, 1, 0))
	}
	s.Shutdown()
	if code := s.Exit(); code != 0 {
		t.Errorf("exit code %d", code)
	}
}

// TestFirstQuestionCarriesTheView: a view captured before any session
// existed goes with the first question: its session starts with the view
// as its applet, and the model is given it.
func TestFirstQuestionCarriesTheView(t *testing.T) {
	parallel(t, waitTests)
	root, rootURI := workspace(t)
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Title"}}))
	s := startViewBinary(t, []string{"OPENAI_API_KEY=sk-test-not-real", "OPENAI_BASE_URL=" + fake.URL, "CTXLS_MODEL=test-model"},
		rootURI, map[string]any{"name": "lsptest"}, map[string]any{"viewIdleMs": 50})
	mainURI := "file://" + filepath.Join(root, "main.go")
	s.Notify(api.DidChangeView, viewNote(mainURI, 1, 0, 1, 0))
	waitStderr(t, s, "kept for the first question", 1)
	fake.Enqueue(openaitest.Reply{Chunks: []string{"It is main."}})
	var res api.ChatResult
	s.MustCommand(api.Chat, map[string]any{"message": "what is this line?"}, &res)
	if got := storedApplet(t, s, res.SessionID); !slices.Contains(got, "line=2") {
		t.Errorf("the new session's applet: %q", got)
	}
	if ctx := fake.LastStreamed().ModelContext(); !strings.Contains(ctx, "file="+filepath.Join(root, "main.go")) || !strings.Contains(ctx, "line=2") {
		t.Errorf("the first turn's context lacks the view:\n%s", ctx)
	}
}
