package e2e_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
	"github.com/ctxls/ctxls/service"
)

// instructionsWorkspace writes files (relative path → text) into a new
// workspace folder.
func instructionsWorkspace(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, text := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// startInstructions starts a daemon on root whose provider answers every
// request "ok"; extra goes into initializationOptions.
func startInstructions(t *testing.T, root string, extra map[string]any) (*lsptest.Server, *openaitest.Server) {
	t.Helper()
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"ok"}}))
	opts := map[string]any{"provider": map[string]any{"baseURL": fake.URL, "model": "test-model", "contextWindow": 64000, "maxOutputTokens": 1000}}
	for k, v := range extra {
		opts[k] = v
	}
	s := lsptest.InProcess(t, service.Config{DataDir: t.TempDir(), Version: "test"})
	s.Initialize(lsptest.InitOptions{RootURI: "file://" + root, InitOptions: opts})
	return s, fake
}

// ask runs a turn and returns its result and the provider's request.
func ask(t *testing.T, s *lsptest.Server, fake *openaitest.Server, args map[string]any) (api.ChatResult, openaitest.Request) {
	t.Helper()
	n := len(fake.Streamed())
	var res api.ChatResult
	if err := s.Call("ctxls/chat", args, &res); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(fake.Streamed()) <= n && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	return res, fake.Streamed()[n]
}

func instructionPaths(files []api.InstructionFile) []string {
	var out []string
	for _, f := range files {
		out = append(out, f.Path)
	}
	return out
}

// TestInstructionsInTheStablePrefix: the root's AGENTS.md and those of
// the folders between a turn's file and the root are at the end of the
// system message (the first message, before the history), root first, each
// named; a second turn's request begins with the first's messages, the
// instructions included (what the provider's prompt cache reuses); clients
// are told which files went with the turn and which a turn would take.
func TestInstructionsInTheStablePrefix(t *testing.T) {
	parallel(t, waitTests)
	root := instructionsWorkspace(t, map[string]string{
		"AGENTS.md":        "ROOT RULE: run go vet.\n",
		"svc/AGENTS.md":    "SVC RULE: errors are wrapped.\n",
		"svc/db/AGENTS.md": "DB RULE: SQL in migrations only.\n",
		"svc/db/store.go":  "package db\n",
		"web/AGENTS.md":    "WEB RULE: not for this turn.\n",
		"main.go":          "package main\n",
	})
	s, fake := startInstructions(t, root, nil)
	res, r1 := ask(t, s, fake, map[string]any{"message": "where do queries go?", "files": []string{"svc/db/store.go"}})
	sys := r1.Parsed.Messages[0]
	if sys.Role != "system" {
		t.Fatalf("first message is %s", sys.Role)
	}
	i, j, k := strings.Index(sys.Content, "ROOT RULE"), strings.Index(sys.Content, "SVC RULE"), strings.Index(sys.Content, "DB RULE")
	if i < 0 || j < i || k < j || strings.Contains(sys.Content, "WEB RULE") {
		t.Fatalf("instructions not in the system message root first (%d %d %d):\n%s", i, j, k, sys.Content)
	}
	for _, p := range []string{"AGENTS.md", "svc/AGENTS.md", "svc/db/AGENTS.md"} {
		if !strings.Contains(sys.Content, "Instructions from "+filepath.Join(root, p)+":") {
			t.Errorf("%s not named in the system message", p)
		}
	}
	if !strings.Contains(sys.Content, "nearest to the file concerned takes precedence") {
		t.Errorf("the model is not told which takes precedence")
	}
	if strings.Contains(r1.TurnContext(), "RULE") {
		t.Errorf("instructions repeated in the turn's block:\n%s", r1.TurnContext())
	}
	want := []string{filepath.Join(root, "AGENTS.md"), filepath.Join(root, "svc/AGENTS.md"), filepath.Join(root, "svc/db/AGENTS.md")}
	if got := instructionPaths(res.Instructions); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("chat result's instructions %v, want %v", got, want)
	}

	// The next turn, about the same file: its request begins with the
	// whole of the first's (system message, instructions included, and the
	// question as sent), then the answer.
	_, r2 := ask(t, s, fake, map[string]any{"message": "and migrations?", "files": []string{"svc/db/store.go"}})
	if len(r2.Parsed.Messages) < len(r1.Parsed.Messages)+1 {
		t.Fatalf("second request has %d messages", len(r2.Parsed.Messages))
	}
	for i, m := range r1.Parsed.Messages {
		if got := r2.Parsed.Messages[i]; got.Role != m.Role || got.Content != m.Content {
			t.Fatalf("message %d differs between the turns: the cached prefix breaks there\nfirst:  %.300q\nsecond: %.300q", i, m.Content, got.Content)
		}
	}

	// ctxls.context.get names the files a turn with the session's context
	// would take: the root's, and with svc/db/store.go in the files set
	// its folders'.
	var got api.ContextGetResult
	s.MustCommand(api.ContextGet, map[string]any{}, &got)
	if p := instructionPaths(got.Instructions); len(p) != 1 || p[0] != want[0] {
		t.Errorf("context.get instructions %v", p)
	}
	s.MustCommand(api.ContextSet, map[string]any{"setName": "files", "items": []string{"svc/db/store.go"}}, nil)
	s.MustCommand(api.ContextGet, map[string]any{}, &got)
	if p := instructionPaths(got.Instructions); strings.Join(p, ",") != strings.Join(want, ",") {
		t.Errorf("context.get instructions with the files set %v, want %v", p, want)
	}
}

// TestInstructionsUnsavedBuffer: the editor's text of an open AGENTS.md,
// unsaved edits included, over the disk's.
func TestInstructionsUnsavedBuffer(t *testing.T) {
	parallel(t, waitTests)
	root := instructionsWorkspace(t, map[string]string{"AGENTS.md": "DISK RULE\n"})
	s, fake := startInstructions(t, root, nil)
	uri := "file://" + filepath.Join(root, "AGENTS.md")
	s.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "markdown", "version": 1, "text": "DISK RULE\n"}})
	s.Notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": uri, "version": 2},
		"contentChanges": []any{map[string]any{"text": "UNSAVED RULE\n"}}})
	res, r := ask(t, s, fake, map[string]any{"message": "hi"})
	if sys := r.SystemPrompt(); !strings.Contains(sys, "UNSAVED RULE") || strings.Contains(sys, "DISK RULE") {
		t.Errorf("the system prompt lacks the unsaved text:\n%s", sys)
	}
	if len(res.Instructions) != 1 || !res.Instructions[0].Unsaved {
		t.Errorf("instructions %+v", res.Instructions)
	}
}

// TestInstructionsRootFallbacks: a root without AGENTS.md gives its
// CLAUDE.md, else its .github/copilot-instructions.md.
func TestInstructionsRootFallbacks(t *testing.T) {
	parallel(t, waitTests)
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"CLAUDE.md", map[string]string{"CLAUDE.md": "CLAUDE RULE\n", ".github/copilot-instructions.md": "COPILOT RULE\n"}, "CLAUDE.md"},
		{"copilot", map[string]string{".github/copilot-instructions.md": "COPILOT RULE\n"}, ".github/copilot-instructions.md"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := instructionsWorkspace(t, tc.files)
			s, fake := startInstructions(t, root, nil)
			res, r := ask(t, s, fake, map[string]any{"message": "hi"})
			sys := r.SystemPrompt()
			if !strings.Contains(sys, "Instructions from "+filepath.Join(root, tc.want)+":") || strings.Count(sys, "RULE") != 1 {
				t.Errorf("want %s alone:\n%s", tc.want, sys)
			}
			if p := instructionPaths(res.Instructions); len(p) != 1 || p[0] != filepath.Join(root, tc.want) {
				t.Errorf("instructions %v", p)
			}
		})
	}
}

// TestInstructionsRefusedAndCut: an AGENTS.md that is a link to a file
// outside the workspace is not read (nor is CLAUDE.md taken in its
// place); a nested one over the cap is cut in whole lines, and the model
// is told.
func TestInstructionsRefusedAndCut(t *testing.T) {
	parallel(t, waitTests)
	outside := instructionsWorkspace(t, map[string]string{"notes.md": "OUTSIDE SECRET\n"})
	var big strings.Builder
	for i := range 1000 {
		big.WriteString(strings.Repeat("x", 60) + " line " + string(rune('a'+i%26)) + "\n")
	}
	big.WriteString("THE LAST LINE\n")
	root := instructionsWorkspace(t, map[string]string{"pkg/AGENTS.md": "BIG START\n" + big.String(), "pkg/f.go": "package pkg\n", "CLAUDE.md": "CLAUDE RULE\n"})
	if err := os.Symlink(filepath.Join(outside, "notes.md"), filepath.Join(root, "AGENTS.md")); err != nil {
		t.Fatal(err)
	}
	s, fake := startInstructions(t, root, nil)
	res, r := ask(t, s, fake, map[string]any{"message": "hi", "files": []string{"pkg/f.go"}})
	sys := r.SystemPrompt()
	if strings.Contains(sys, "OUTSIDE SECRET") || strings.Contains(sys, "CLAUDE RULE") {
		t.Errorf("read through the link, or took CLAUDE.md in its place:\n%.2000s", sys)
	}
	if !strings.Contains(sys, "BIG START") || strings.Contains(sys, "THE LAST LINE") || !strings.Contains(sys, "[cut: the first ") || !strings.Contains(sys, "up to 32,768 bytes each]") {
		t.Errorf("the big file is not cut with a note")
	}
	if len(res.Instructions) != 1 || res.Instructions[0].Cut == "" || res.Instructions[0].Bytes > 32<<10 {
		t.Errorf("instructions %+v", res.Instructions)
	}
}

// TestInstructionsSettingAndPreview: initializationOptions'
// projectInstructions false leaves them out of turns, previews and
// ctxls.context.get; didChangeConfiguration turns them back on, and the
// preview shows them, named, in the system message.
func TestInstructionsSettingAndPreview(t *testing.T) {
	parallel(t, waitTests)
	root := instructionsWorkspace(t, map[string]string{"AGENTS.md": "ROOT RULE\n"})
	s, fake := startInstructions(t, root, map[string]any{"projectInstructions": false})
	res, r := ask(t, s, fake, map[string]any{"message": "hi"})
	if strings.Contains(r.SystemPrompt(), "ROOT RULE") || len(res.Instructions) != 0 {
		t.Errorf("instructions given with the setting off: %+v", res.Instructions)
	}
	var pv api.ChatPreviewResult
	s.MustCommand(api.ChatPreview, map[string]any{"message": "hi"}, &pv)
	if len(pv.Instructions) != 0 || strings.Contains(pv.Messages[0].Content, "ROOT RULE") {
		t.Errorf("preview with the setting off: %+v", pv.Instructions)
	}
	var got api.ContextGetResult
	s.MustCommand(api.ContextGet, map[string]any{}, &got)
	if len(got.Instructions) != 0 {
		t.Errorf("context.get with the setting off: %+v", got.Instructions)
	}

	s.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"ctxls": map[string]any{"projectInstructions": true}}})
	s.MustCommand(api.ChatPreview, map[string]any{"message": "hi"}, &pv)
	if p := instructionPaths(pv.Instructions); len(p) != 1 || p[0] != filepath.Join(root, "AGENTS.md") || pv.Instructions[0].Bytes != len("ROOT RULE\n") {
		t.Errorf("preview instructions %+v", pv.Instructions)
	}
	if pv.Messages[0].Role != "system" || !strings.Contains(pv.Messages[0].Content, "ROOT RULE") {
		t.Errorf("preview's system message lacks them")
	}
	if _, r := ask(t, s, fake, map[string]any{"message": "again"}); !strings.Contains(r.SystemPrompt(), "ROOT RULE") {
		t.Errorf("not given once turned on")
	}
}
