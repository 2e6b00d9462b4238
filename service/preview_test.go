package service

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat/openaitest"
)

// TestChatPreviewWithFiles: the preview of a question with the files an
// editor sends (a file with the lines selected, as VS Code's chip sends it)
// and one its message mentions has their text in the turn's block, counts
// it, and names those files as the question would then be stored with them.
func TestChatPreviewWithFiles(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for name, text := range map[string]string{
		"app.ts":   "export function add(a: number, b: number): number {\n  return a + b;\n}\n",
		"notes.md": "# Notes\n\nadd() must stay pure.\n",
	} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"A title"}}))
	s := open(t, nil, api.Provider{BaseURL: fake.URL, Model: "test-model"})
	s.SetRoots([]string{root})
	ctx := context.Background()
	app, notes := filepath.Join(root, "app.ts"), filepath.Join(root, "notes.md")
	args := &api.ChatArgs{Message: "Is add pure? See @notes.md", Files: []string{app + ":1-2"}}

	pv, err := s.ChatPreview(ctx, args)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{app + ":1-2", notes}; !slices.Equal(pv.Files, want) {
		t.Errorf("the preview's files: %q, want %q", pv.Files, want)
	}
	last := pv.Messages[len(pv.Messages)-1].Content
	if !strings.Contains(last, "app.ts (the user selected lines 1–2)") || !strings.Contains(last, "return a + b;") ||
		!strings.Contains(last, "add() must stay pure.") || !strings.HasSuffix(last, "Is add pure? See @notes.md") {
		t.Errorf("the turn's block:\n%s", last)
	}
	if pv.Tokens.Files <= 0 {
		t.Errorf("the files' tokens: %+v", pv.Tokens)
	}

	// The turn asked with the same arguments sends that input, and its
	// question is stored with the files the preview named.
	fake.Enqueue(openaitest.Reply{Chunks: []string{"Yes."}})
	res, err := s.Chat(ctx, args)
	if err != nil {
		t.Fatal(err)
	}
	if sent := fake.Requests()[0].Parsed.Messages; sent[len(sent)-1].Content != last {
		t.Errorf("the turn sent another block than the preview showed:\n%s", sent[len(sent)-1].Content)
	}
	shown, err := s.SessionShow(ctx, &api.SessionIDArgs{SessionID: res.SessionID})
	if err != nil {
		t.Fatal(err)
	}
	if q := shown.Messages[0]; q.Role != api.RoleUser || !slices.Equal(q.Files, pv.Files) {
		t.Errorf("the stored question's files: %+v, the preview's %q", q, pv.Files)
	}

	// A question with no files of its own names none.
	pv, err = s.ChatPreview(ctx, &api.ChatArgs{Message: "and then?"})
	if err != nil {
		t.Fatal(err)
	}
	if pv.Files != nil {
		t.Errorf("files of a question without any: %q", pv.Files)
	}
}
