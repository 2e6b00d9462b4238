package e2e_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// TestUndoRedoOverLSP: a turn's changes undone through the editor, with
// a fake editor keeping real buffers: an unsaved buffer restored exactly
// (at its version, by workspace/applyEdit), a file saved and closed since
// (undone through the editor from the disk's text), a created file
// removed (DeleteFile), a file the user typed in since left alone and
// named; the model told on its next turn; redo; nothing left to undo
// said so; undo after a daemon restart; two sessions each undoing only
// their own turn's changes.
func TestUndoRedoOverLSP(t *testing.T) {
	parallel(t, waitTests)
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Title"}}))
	root, rootURI := workspace(t)
	for name, text := range map[string]string{"typed.go": "package typed\n\nvar n = 1\n", "closed.txt": "one\ntwo\n", "other.go": "package other\n"} {
		os.WriteFile(filepath.Join(root, name), []byte(text), 0o644)
	}
	data := t.TempDir()
	caps := map[string]any{"applyEdit": true, "workspaceEdit": map[string]any{"documentChanges": true, "resourceOperations": []string{"create", "delete"}}}
	start := func() (*lsptest.Server, *bufferEditor) {
		s := lsptest.Binary(t, []string{"OPENAI_API_KEY=sk-test-not-real"}, "serve", "--data-dir", data)
		ed := &bufferEditor{t: t, s: s, doc: map[string]*fakeDoc{}}
		s.OnServerRequest(ed.handle)
		s.Initialize(lsptest.InitOptions{RootURI: rootURI, InitOptions: map[string]any{
			"provider": map[string]any{"baseURL": fake.URL, "model": "test-model"},
		}, Workspace: caps})
		return s, ed
	}
	s, ed := start()
	mainURI, typedURI, closedURI, newURI := rootURI+"/main.go", rootURI+"/typed.go", rootURI+"/closed.txt", rootURI+"/pkg/new.go"
	unsaved := "package main\n\nfunc main() {\n\tprintln(\"😀 unsaved\")\n}\n"
	ed.open(mainURI, "package main\n")
	ed.change(mainURI, unsaved) // not on disk
	ed.open(typedURI, "package typed\n\nvar n = 1\n")

	var created api.SessionResult
	s.MustCommand(api.SessionNew, map[string]any{}, &created)
	first := created.Session.ID
	s.MustCommand(api.SetReviewMode, map[string]any{"sessionId": first, "mode": "auto"}, nil)
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{
			{ID: "u1", Name: "edit_file", Arguments: `{"path":"main.go","old_string":"unsaved","new_string":"edited"}`},
			{ID: "u2", Name: "edit_file", Arguments: `{"path":"main.go","old_string":"func main() {","new_string":"func main() { // twice"}`},
			{ID: "u3", Name: "edit_file", Arguments: `{"path":"typed.go","old_string":"var n = 1","new_string":"var n = 2"}`},
			{ID: "u4", Name: "edit_file", Arguments: `{"path":"closed.txt","old_string":"two","new_string":"zwei"}`},
			{ID: "u5", Name: "create_file", Arguments: `{"path":"pkg/new.go","content":"package pkg\n"}`},
		}},
		openaitest.Reply{Chunks: []string{"Done."}},
	)
	s.MustCommand(api.Chat, map[string]any{"sessionId": first, "message": "change things"}, nil)
	edited := strings.Replace(strings.Replace(unsaved, "unsaved", "edited", 1), "func main() {", "func main() { // twice", 1)
	if text, _ := ed.text(mainURI); text != edited {
		t.Fatalf("main.go after the turn: %q", text)
	}
	// The user keeps working: typed.go typed in, closed.txt saved and closed.
	typedText, _ := ed.text(typedURI)
	ed.change(typedURI, typedText+"// mine\n")
	ed.saveAndClose(closedURI)

	var undo api.UndoResult
	s.MustCommand(api.SessionUndo, map[string]any{"sessionId": first}, &undo)
	mainPath, typedPath, closedPath, newPath := filepath.Join(root, "main.go"), filepath.Join(root, "typed.go"), filepath.Join(root, "closed.txt"), filepath.Join(root, "pkg", "new.go")
	if !slices.Equal(undo.Restored, []string{newPath, closedPath, mainPath}) || len(undo.Left) != 1 || undo.Left[0].Path != typedPath ||
		!strings.Contains(undo.Left[0].Reason, "changed since the turn") || undo.SessionID != first || undo.Turn == 0 {
		t.Fatalf("undo: %+v", undo)
	}
	if text, _ := ed.text(mainURI); text != unsaved {
		t.Errorf("main.go's buffer after the undo: %q, want the unsaved text exactly: %q", text, unsaved)
	}
	if disk, _ := os.ReadFile(mainPath); string(disk) != "package main\n" {
		t.Errorf("main.go on disk: %q", disk)
	}
	if text, _ := ed.text(typedURI); text != "package typed\n\nvar n = 2\n// mine\n" {
		t.Errorf("typed.go, typed in since, was touched: %q", text)
	}
	if text, _ := ed.text(closedURI); text != "one\ntwo\n" {
		t.Errorf("closed.txt, undone through the editor: %q", text)
	}
	if _, err := os.Stat(newPath); !os.IsNotExist(err) {
		t.Errorf("the created file is still on disk: %v", err)
	}
	if text, v := ed.text(newURI); v != 0 || text != "" {
		t.Errorf("the created file's buffer is still open: %q", text)
	}
	// Each applyEdit of the undo names itself for the editor's undo
	// history (the files are undone at once: in no set order).
	for _, name := range []string{"main.go", "closed.txt"} {
		label := "ctxls: undo the model's change to " + name
		if !slices.ContainsFunc(ed.applied, func(raw json.RawMessage) bool { return strings.Contains(string(raw), label) }) {
			t.Errorf("no applyEdit labelled %q among %d", label, len(ed.applied))
		}
	}

	// The model hears of it on its next turn, once.
	fake.Enqueue(openaitest.Reply{Chunks: []string{"Noted."}}, openaitest.Reply{Chunks: []string{"Again."}})
	s.MustCommand(api.Chat, map[string]any{"sessionId": first, "message": "what now?"}, nil)
	told := fake.LastStreamed().TurnContext()
	if !strings.Contains(told, "## Undone Changes") || !strings.Contains(told, "The user undid the changes one of your turns made to: "+newPath+", "+closedPath+", "+mainPath) ||
		!strings.Contains(told, "Left as they are (changed since): "+typedPath) {
		t.Errorf("the next turn's message does not tell of the undo:\n%s", told)
	}
	s.MustCommand(api.Chat, map[string]any{"sessionId": first, "message": "and now?"}, nil)
	if strings.Contains(fake.LastStreamed().TurnContext(), "## Undone Changes") {
		t.Error("the undo was told twice")
	}

	// Redo: the turn's changes again, where the files are as the undo left them.
	var redo api.UndoResult
	s.MustCommand(api.SessionRedo, map[string]any{"sessionId": first}, &redo)
	if redo.Turn != undo.Turn || !slices.Equal(redo.Restored, []string{mainPath, closedPath, newPath}) || len(redo.Left) != 0 {
		t.Fatalf("redo: %+v", redo)
	}
	if text, _ := ed.text(mainURI); text != edited {
		t.Errorf("main.go after the redo: %q", text)
	}
	if text, _ := ed.text(newURI); text != "package pkg\n" {
		t.Errorf("new.go after the redo: %q", text)
	}
	if err := s.Command(api.SessionRedo, map[string]any{"sessionId": first}, nil); err == nil || !strings.Contains(err.Error(), "nothing to redo") {
		t.Errorf("a second redo: %v", err)
	}

	// Another session's turn: its undo touches its own file only.
	var second api.SessionResult
	s.MustCommand(api.SessionNew, map[string]any{}, &second)
	s.MustCommand(api.SetReviewMode, map[string]any{"sessionId": second.Session.ID, "mode": "auto"}, nil)
	fake.Enqueue(openaitest.Reply{ToolCalls: []openaitest.ToolCall{
		{ID: "o1", Name: "edit_file", Arguments: `{"path":"other.go","old_string":"package other","new_string":"package other // changed"}`},
	}}, openaitest.Reply{Chunks: []string{"Done."}})
	s.MustCommand(api.Chat, map[string]any{"sessionId": second.Session.ID, "message": "change other"}, nil)

	// A restart: the editor opens its buffers again; the log is the store's.
	s.Shutdown()
	s, ed2 := start()
	for _, uri := range []string{mainURI, typedURI, closedURI, newURI, rootURI + "/other.go"} {
		if text, v := ed.text(uri); v != 0 || text != "" {
			ed2.open(uri, text)
		}
	}
	s.MustCommand(api.SessionUndo, map[string]any{"sessionId": first}, &undo)
	if !slices.Equal(undo.Restored, []string{newPath, closedPath, mainPath}) || len(undo.Left) != 1 {
		t.Errorf("undo after a restart: %+v", undo)
	}
	if text, _ := ed2.text(mainURI); text != unsaved {
		t.Errorf("main.go after the undo after a restart: %q", text)
	}
	if text, _ := ed2.text(rootURI + "/other.go"); text != "package other // changed\n" {
		t.Errorf("the other session's file was touched: %q", text)
	}
	s.MustCommand(api.SessionUndo, map[string]any{"sessionId": second.Session.ID}, &undo)
	if text, _ := ed2.text(rootURI + "/other.go"); text != "package other\n" || !slices.Equal(undo.Restored, []string{filepath.Join(root, "other.go")}) {
		t.Errorf("the second session's undo: %+v, other.go %q", undo, text)
	}
	// Only typed.go's change is left in the first session: it is still
	// not as the turn left it.
	s.MustCommand(api.SessionUndo, map[string]any{"sessionId": first}, &undo)
	if len(undo.Restored) != 0 || len(undo.Left) != 1 || undo.Left[0].Path != typedPath {
		t.Errorf("the undo of what is left: %+v", undo)
	}
}
