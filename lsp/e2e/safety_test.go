package e2e_test

// Paths and secrets (issue 6), over the built binary: nothing a command or
// the model asks for touches anything outside the places it is allowed,
// the data directory is private, and the API key appears nowhere but in
// the Authorization header sent to the provider.

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// outsideFile is a file outside every allowed place, with a marker that
// must never reach the provider or change.
func outsideFile(t *testing.T, name, marker string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(marker+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustUnchanged(t *testing.T, path, marker string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil || string(data) != marker+"\n" {
		t.Errorf("%s was touched: %q %v", path, data, err)
	}
}

func TestPathsStayInside(t *testing.T) {
	parallel(t, waitTests)
	fake := openaitest.New(t)
	dataDir := filepath.Join(t.TempDir(), "data")
	root, rootURI := workspace(t)
	env := []string{"OPENAI_BASE_URL=" + fake.URL, "CTXLS_MODEL=test-model", "OPENAI_API_KEY=sk-paths"}
	s := lsptest.Binary(t, env, "serve", "--data-dir", dataDir)
	s.Initialize(lsptest.InitOptions{RootURI: rootURI})
	var created api.SessionResult
	s.MustCommand(api.SessionNew, map[string]any{"title": "paths"}, &created)
	id, folder := created.Session.ID, created.Session.Folder
	b64 := base64.StdEncoding.EncodeToString([]byte("new content"))

	// 1. files.add and files.remove refuse names that leave sources/.
	victim := outsideFile(t, "victim.txt", "VICTIM")
	bad := []string{"../victim.txt", "../../victim.txt", victim, "/etc/passwd", "a\x00b", "a/b", `..\x`, "..", ".", ".hidden", strings.Repeat("n", 300)}
	for _, name := range bad {
		err := s.Command(api.FilesAdd, map[string]any{"sessionId": id, "name": name, "contentBase64": b64}, nil)
		if rpc, ok := err.(*lsptest.RPCError); !ok || rpc.Code != -32602 {
			t.Errorf("files.add %q: %v, want an invalid-params error", name, err)
		}
		err = s.Command(api.FilesRemove, map[string]any{"sessionId": id, "name": name}, nil)
		if rpc, ok := err.(*lsptest.RPCError); !ok || rpc.Code != -32602 {
			t.Errorf("files.remove %q: %v, want an invalid-params error", name, err)
		}
	}
	mustUnchanged(t, victim, "VICTIM")

	// 2. Links planted inside sources/ are replaced or removed as links,
	// never written or removed through.
	sources := filepath.Join(folder, "sources")
	symTarget := outsideFile(t, "sym-target.txt", "SYMLINKED")
	hardTarget := filepath.Join(filepath.Dir(dataDir), "hard-target.txt") // same filesystem as the data dir
	if err := os.WriteFile(hardTarget, []byte("HARDLINKED\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	must(t, os.Symlink(symTarget, filepath.Join(sources, "sym.txt")))
	must(t, os.Link(hardTarget, filepath.Join(sources, "hard.txt")))
	for _, name := range []string{"sym.txt", "hard.txt"} {
		s.MustCommand(api.FilesAdd, map[string]any{"sessionId": id, "name": name, "contentBase64": b64}, nil)
		if data, _ := os.ReadFile(filepath.Join(sources, name)); string(data) != "new content" {
			t.Errorf("%s after add: %q", name, data)
		}
	}
	mustUnchanged(t, symTarget, "SYMLINKED")
	mustUnchanged(t, hardTarget, "HARDLINKED")
	must(t, os.Remove(filepath.Join(sources, "sym.txt")))
	must(t, os.Symlink(symTarget, filepath.Join(sources, "sym.txt")))
	s.MustCommand(api.FilesRemove, map[string]any{"sessionId": id, "name": "sym.txt"}, nil)
	mustUnchanged(t, symTarget, "SYMLINKED")

	// 3. Exports and history.md planted as links to outside files: the
	// export replaces the link, the outside files keep their content.
	for _, name := range []string{"export.md", "export.json", "history.md"} {
		p := filepath.Join(folder, name)
		os.Remove(p)
		must(t, os.Symlink(symTarget, p))
	}
	var exp api.ExportResult
	s.MustCommand(api.SessionExport, map[string]any{"sessionId": id, "format": "markdown"}, &exp)
	s.MustCommand(api.SessionExport, map[string]any{"sessionId": id, "format": "json"}, &exp)
	s.MustCommand(api.SessionRename, map[string]any{"sessionId": id, "title": "paths renamed"}, nil) // rewrites history.md
	mustUnchanged(t, symTarget, "SYMLINKED")
	for _, f := range []string{"../../x", "/etc/passwd", "markdown/../../x"} {
		if err := s.Command(api.SessionExport, map[string]any{"sessionId": id, "format": f}, nil); err == nil {
			t.Errorf("export format %q accepted", f)
		}
	}

	// 4. The model's read_file: traversal, absolute paths outside, a symlink
	// and a hard link inside the workspace that lead outside, sources/..
	// escapes. None of the outside content reaches the provider.
	modelSecret := outsideFile(t, "notes.txt", "OUTSIDE-CONTENT")
	must(t, os.Symlink(modelSecret, filepath.Join(root, "link-out.txt")))
	hardOut := filepath.Join(filepath.Dir(dataDir), "hard-out.txt")
	must(t, os.WriteFile(hardOut, []byte("OUTSIDE-HARDLINK\n"), 0o600))
	if err := os.Link(hardOut, filepath.Join(root, "hard-out.txt")); err != nil {
		t.Logf("no hard link across these folders (%v): the hard-link read case is skipped", err)
	}
	var s2 api.SessionResult
	s.MustCommand(api.SessionRename, map[string]any{"sessionId": id, "title": "paths again"}, &s2)
	rel, _ := filepath.Rel(root, modelSecret)
	paths := []string{"../../../../../../etc/passwd", modelSecret, rel, "link-out.txt", filepath.Join(root, "link-out.txt"),
		"hard-out.txt", "sources/../../../../" + modelSecret, "sources/../../../../../../../etc/passwd", "/proc/self/environ", "\x00"}
	var calls []openaitest.ToolCall
	for i, p := range paths {
		calls = append(calls, openaitest.ToolCall{ID: fmt.Sprintf("r%d", i), Name: "read_file", Arguments: fmt.Sprintf(`{"path":%q}`, p)})
	}
	fake.Enqueue(openaitest.Reply{ToolCalls: calls}, openaitest.Reply{Chunks: []string{"done"}})
	var res api.ChatResult
	s.MustCommand(api.Chat, map[string]any{"sessionId": id, "message": "read everything"}, &res)
	reqs := fake.WaitRequests(2, 5*time.Second)
	results := map[string]string{}
	for _, m := range reqs[1].Parsed.Messages {
		if m.Role == "tool" {
			results[m.ToolCallID] = m.Content
		}
	}
	for i, p := range paths {
		r := results[fmt.Sprintf("r%d", i)]
		if !strings.HasPrefix(r, "error: ") {
			t.Errorf("read_file %q was answered with content: %.80q", p, r)
		}
	}
	for _, r := range reqs {
		for _, leak := range []string{"OUTSIDE-CONTENT", "OUTSIDE-HARDLINK", "root:x:0", "sk-paths"} {
			if bytes.Contains(r.Body, []byte(leak)) {
				t.Errorf("%q reached the provider", leak)
			}
		}
	}
	mustUnchanged(t, modelSecret, "OUTSIDE-CONTENT")

	// 5. Permissions: the data directory and everything in it is private
	// to the user (directories 0700, files 0600), whatever the umask.
	s.Shutdown()
	s.Exit()
	checkPrivate(t, dataDir)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// checkPrivate walks dir: directories 0700, regular files 0600, no links
// the daemon made.
func checkPrivate(t *testing.T, dir string) {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		n++
		mode := fi.Mode()
		switch {
		case mode.IsDir() && mode.Perm() != 0o700:
			t.Errorf("directory %s has mode %v, want 0700", p, mode.Perm())
		case mode.IsRegular() && mode.Perm() != 0o600:
			t.Errorf("file %s has mode %v, want 0600", p, mode.Perm())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 8 {
		t.Errorf("only %d entries under %s: the walk saw nothing", n, dir)
	}
}

// TestAPIKeyGoesOnlyToTheProvider runs turns, tools, failures, exports and
// the CLI at debug log level, then looks for the key everywhere it must
// not be: the log file, stderr, every file in the data directory (the
// database and its WAL included), everything the editor received, and the
// CLI's output.
func TestAPIKeyGoesOnlyToTheProvider(t *testing.T) {
	parallel(t, waitTests)
	const key = "sk-live-KEYMUSTNOTLEAK-0123456789abcdef"
	fake := openaitest.New(t, openaitest.WithAPIKey(key))
	dataDir := t.TempDir()
	logFile := filepath.Join(t.TempDir(), "ctxls.log")
	root, rootURI := workspace(t)
	must(t, os.WriteFile(filepath.Join(root, "main.go"), []byte("package main\n"), 0o600))
	env := []string{"OPENAI_BASE_URL=" + fake.URL, "CTXLS_MODEL=test-model", "OPENAI_API_KEY=" + key}
	s := lsptest.Binary(t, env, "serve", "--data-dir", dataDir, "--log-level", "debug", "--log-file", logFile)
	s.Initialize(lsptest.InitOptions{RootURI: rootURI, WorkDoneProgress: true})
	var created api.SessionResult
	s.MustCommand(api.SessionNew, map[string]any{}, &created)
	id := created.Session.ID
	s.MustCommand(api.ContextSet, map[string]any{"sessionId": id, "setName": "files", "items": []string{"main.go"}}, nil)

	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: "read_file", Arguments: `{"path":"main.go"}`}}},
		openaitest.Reply{Chunks: []string{"an ", "answer"}},
		openaitest.Reply{Chunks: []string{"A title"}},
		// A provider that echoes the key in its error body, as some proxies do.
		openaitest.Reply{Status: 401, ErrorMessage: "Incorrect API key provided: " + key, ErrorType: "invalid_request_error", ErrorCode: "invalid_api_key"},
		openaitest.Reply{Chunks: []string{"partial "}, Fault: openaitest.FaultMidStreamError, FaultAfter: 1, ErrorMessage: "stream broke for " + key},
		openaitest.Reply{Status: 400, ErrorMessage: "bad request from " + key},
	)
	var res api.ChatResult
	s.MustCommand(api.Chat, map[string]any{"sessionId": id, "message": "first question"}, &res)
	fake.WaitRequests(3, 5*time.Second) // the title request too
	for i := range 3 {
		var r api.ChatResult
		err := s.Command(api.Chat, map[string]any{"sessionId": id, "message": fmt.Sprintf("failing question %d", i)}, &r)
		if err == nil && r.FinishReason != "error" {
			t.Errorf("failing turn %d: %+v", i, r)
		}
		if err != nil && strings.Contains(err.Error(), key) {
			t.Errorf("turn %d error carries the key: %v", i, err)
		}
	}
	var exp api.ExportResult
	s.MustCommand(api.SessionExport, map[string]any{"sessionId": id, "format": "markdown"}, &exp)
	s.MustCommand(api.SessionExport, map[string]any{"sessionId": id, "format": "json"}, &exp)
	// The key did go to the provider, as the Authorization header.
	for _, r := range fake.Requests() {
		if got := r.Header.Get("Authorization"); got != "Bearer "+key {
			t.Errorf("Authorization header %q", got)
		}
	}
	received := s.Received()
	s.Shutdown()
	s.Exit()

	var places []string
	look := func(where string, data []byte) {
		places = append(places, where)
		if bytes.Contains(data, []byte(key)) || bytes.Contains(data, []byte("KEYMUSTNOTLEAK")) {
			t.Errorf("the API key appears in %s", where)
		}
	}
	logs, err := os.ReadFile(logFile)
	must(t, err)
	if !bytes.Contains(logs, []byte("level=DEBUG")) && !bytes.Contains(logs, []byte(`"level":"DEBUG"`)) {
		t.Errorf("the log file has no debug lines: the test did not run at debug level:\n%.500s", logs)
	}
	look("the log file", logs)
	look("stderr", []byte(s.Stderr()))
	for _, m := range received {
		look("a message to the editor ("+m.Method+")", append(append([]byte(nil), m.Params...), m.Result...))
	}
	must(t, filepath.WalkDir(dataDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dataDir, p)
		look(rel, data)
		return nil
	}))
	// The CLI on the same data: show, export, search, doctor.
	bin := lsptest.BuildBinary(t)
	for _, args := range [][]string{
		{"sessions", "show", id, "--data-dir", dataDir},
		{"sessions", "export", id, "--format", "json", "--data-dir", dataDir},
		{"sessions", "search", "question", "--data-dir", dataDir},
		{"doctor"},
	} {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), env...)
		out, _ := cmd.CombinedOutput()
		look("the output of ctxls "+args[0], out)
	}
	if len(places) < 10 {
		t.Errorf("looked in only %d places", len(places))
	}
}

// TestAPIKeyEnvNamesOnlyAProviderKey: provider.apiKeyEnv, which a
// repository's settings can set, names a variable whose value goes to the
// provider as a bearer token; one that is not a provider key
// (AWS_SECRET_ACCESS_KEY) is refused with a message naming the setting,
// and its value is sent nowhere.
func TestAPIKeyEnvNamesOnlyAProviderKey(t *testing.T) {
	parallel(t, waitTests)
	const secret = "aws-SECRETMUSTNOTLEAK-0123456789"
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"an answer"}}))
	_, rootURI := workspace(t)
	s := lsptest.Binary(t, []string{"AWS_SECRET_ACCESS_KEY=" + secret, "OPENAI_API_KEY=", "GROQ_API_KEY=gsk-test"}, "serve", "--data-dir", t.TempDir())
	s.Initialize(lsptest.InitOptions{RootURI: rootURI, InitOptions: map[string]any{
		"provider": map[string]any{"baseURL": fake.URL, "model": "test-model", "apiKeyEnv": "AWS_SECRET_ACCESS_KEY"},
	}})
	var res api.ChatResult
	err := s.Command(api.Chat, map[string]any{"message": "hello"}, &res)
	if err == nil || !strings.Contains(err.Error(), "apiKeyEnv") || !strings.Contains(err.Error(), "AWS_SECRET_ACCESS_KEY") {
		t.Errorf("a turn with apiKeyEnv AWS_SECRET_ACCESS_KEY: err %v, result %+v; want an error naming provider.apiKeyEnv", err, res)
	}
	for _, r := range fake.Requests() {
		if strings.Contains(r.Header.Get("Authorization"), "SECRETMUSTNOTLEAK") {
			t.Errorf("AWS_SECRET_ACCESS_KEY went to the provider: Authorization %q", r.Header.Get("Authorization"))
		}
	}
	// A provider's key variable is still honoured.
	s.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"ctxls": map[string]any{
		"provider": map[string]any{"baseURL": fake.URL, "model": "test-model", "apiKeyEnv": "GROQ_API_KEY"},
	}}})
	s.MustCommand(api.Chat, map[string]any{"message": "hello again"}, &res)
	if got := fake.LastStreamed().Header.Get("Authorization"); got != "Bearer gsk-test" {
		t.Errorf("apiKeyEnv GROQ_API_KEY: Authorization %q", got)
	}
}
