package e2e_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// TestReviewedEditsSurviveTyping: the user types in the file while the
// model's edits wait for review, then accepts them. (1) Typed elsewhere (a
// line above, one below): the edit is applied where its text now is,
// against the buffer's current version, and both the typing and the edit
// are kept. (2) Typed in the very text the edit replaces: the edit is
// refused, nothing changed, the model is told to read the file again and
// the user is told why.
func TestReviewedEditsSurviveTyping(t *testing.T) {
	parallel(t, waitTests)
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Title"}}),
		openaitest.WithTitles(openaitest.Reply{Chunks: []string{"Title"}}))
	root, rootURI := workspace(t)
	mainPath := filepath.Join(root, "main.go")
	s := lsptest.Binary(t, []string{"OPENAI_API_KEY=sk-test-not-real"}, "serve", "--data-dir", t.TempDir())
	ed := &bufferEditor{t: t, s: s, doc: map[string]*fakeDoc{}}
	s.OnServerRequest(ed.handle)
	s.Initialize(lsptest.InitOptions{RootURI: rootURI, WorkDoneProgress: true, InitOptions: map[string]any{
		"provider": map[string]any{"baseURL": fake.URL, "model": "test-model"},
	}, Workspace: map[string]any{"applyEdit": true, "workspaceEdit": map[string]any{"documentChanges": true}}})
	uri := rootURI + "/main.go"
	ed.typeInto = uri
	text := "package main\n\nfunc a() int {\n\treturn 1\n}\n\nfunc b() int {\n\treturn 2\n}\n"
	ed.open(uri, text) // version 1
	typings := []func(string) string{
		func(t string) string { return "// typed above\n" + t + "// typed below\n" },
		func(t string) string { return strings.Replace(t, "return 2", "return 22", 1) },
	}
	ed.typing = func(t string) string {
		f := typings[0]
		typings = typings[1:]
		return f(t)
	}
	ed.answers = []string{"Accept+typing", "Accept+typing"}
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{
			{ID: "e1", Name: "edit_file", Arguments: `{"path":"main.go","old_string":"\treturn 1\n","new_string":"\treturn 10\n"}`},
			{ID: "e2", Name: "edit_file", Arguments: `{"path":"main.go","old_string":"\treturn 2\n","new_string":"\treturn 20\n"}`},
		}},
		openaitest.Reply{Chunks: []string{"Done."}},
	)
	if err := s.Call("workspace/executeCommand", map[string]any{"command": api.Chat,
		"arguments": []any{map[string]any{"message": "edit", "workDoneToken": "edit-1"}}}, nil); err != nil {
		t.Fatal(err)
	}
	got := fake.LastStreamed().ToolResults()
	for id, want := range map[string][]string{
		"e1": {"edited " + mainPath, "+\treturn 10"},
		"e2": {"the edit of " + mainPath + " was not applied: the text it replaces was changed in the editor while the edit waited",
			"read it again", "return 22"},
	} {
		for _, w := range want {
			if !strings.Contains(got[id], w) {
				t.Errorf("%s: %q lacks %q", id, got[id], w)
			}
		}
	}
	// The buffer: both typings and the first edit; the second not made.
	want := "// typed above\n" + strings.Replace(strings.Replace(text, "return 1", "return 10", 1), "return 2", "return 22", 1) + "// typed below\n"
	if now, _ := ed.text(uri); now != want {
		t.Errorf("the buffer:\n%s\nwant\n%s", now, want)
	}
	// One applyEdit, against the version the typing made (2), one line
	// down.
	ed.mu.Lock()
	applied := ed.applied
	ed.mu.Unlock()
	if len(applied) != 1 || !strings.Contains(string(applied[0]), `"version":2`) || !strings.Contains(string(applied[0]), `"start":{"line":4,`) {
		t.Errorf("the applyEdits: %s", applied)
	}
	last := map[string]api.ToolStatus{}
	names := callNames(s, "e1", "e2")
	for _, m := range s.Notifications(api.ToolCall) {
		var p api.ToolCallParams
		json.Unmarshal(m.Params, &p)
		last[names[p.ID]] = p.Status
	}
	if last["e1"] != api.ToolDone || last["e2"] != api.ToolFailed {
		t.Errorf("statuses: %v", last)
	}
	// The user is told why, not only the model.
	if p := progressMessagesRaw(s); !strings.Contains(p, "the model's edit of "+mainPath+" was not applied: the text it replaces was changed in the editor") {
		t.Errorf("the user was not told why the edit was refused:\n%s", p)
	}
}

// TestReviewAcceptsPartOfAnEdit: a client that shows the diff
// (ctxls/reviewEdit) accepts an edit of two changes with one of them left
// out (its answer's text), while the user typed elsewhere in the file: the
// part is applied where the edit's text now is, the typing kept, and the
// model is told only a part was applied, with its diff. A text with every
// change left out counts as a rejection.
func TestReviewAcceptsPartOfAnEdit(t *testing.T) {
	parallel(t, waitTests)
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Title"}}),
		openaitest.WithTitles(openaitest.Reply{Chunks: []string{"Title"}}))
	root, rootURI := workspace(t)
	path := filepath.Join(root, "letters.txt")
	s := lsptest.Binary(t, []string{"OPENAI_API_KEY=sk-test-not-real"}, "serve", "--data-dir", t.TempDir())
	ed := &bufferEditor{t: t, s: s, doc: map[string]*fakeDoc{}}
	uri := rootURI + "/letters.txt"
	reviews := 0
	s.OnServerRequest(func(method string, params json.RawMessage) (any, *lsptest.RPCError) {
		if method != api.ReviewEdit {
			return ed.handle(method, params)
		}
		var p api.ReviewEditParams
		json.Unmarshal(params, &p)
		reviews++
		if reviews == 1 {
			// The user types a line at the end, and takes only the second
			// change (h → H): the first (a → A) left out.
			text, _ := ed.text(uri)
			ed.change(uri, text+"// typed\n")
			chosen := strings.Replace(p.NewText, "A\n", "a\n", 1)
			return api.ReviewEditResult{Decision: api.ReviewAccept, Text: &chosen}, nil
		}
		// Every change left out.
		return api.ReviewEditResult{Decision: api.ReviewAccept, Text: &p.OldText}, nil
	})
	s.Initialize(lsptest.InitOptions{RootURI: rootURI, InitOptions: map[string]any{
		"provider": map[string]any{"baseURL": fake.URL, "model": "test-model"}, "reviewEdits": true,
	}, Workspace: map[string]any{"applyEdit": true, "workspaceEdit": map[string]any{"documentChanges": true}}})
	text := "a\nb\nc\nd\ne\nf\ng\nh\ni\n"
	ed.open(uri, text)
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{
			{ID: "e1", Name: "edit_file", Arguments: `{"path":"letters.txt","old_string":"a\nb\nc\nd\ne\nf\ng\nh\n","new_string":"A\nb\nc\nd\ne\nf\ng\nH\n"}`},
			{ID: "e2", Name: "edit_file", Arguments: `{"path":"letters.txt","old_string":"i\n","new_string":"I\n"}`},
		}},
		openaitest.Reply{Chunks: []string{"Done."}},
	)
	s.MustCommand(api.Chat, map[string]any{"message": "capitals"}, nil)
	got := fake.LastStreamed().ToolResults()
	if r := got["e1"]; !strings.Contains(r, "edited "+path) || !strings.Contains(r, "only in part") || !strings.Contains(r, "+H") || strings.Contains(r, "+A") {
		t.Errorf("e1: the model was told %q", r)
	}
	if r := got["e2"]; !strings.Contains(r, "The user rejected this edit of "+path) {
		t.Errorf("e2: the model was told %q", r)
	}
	if now, _ := ed.text(uri); now != "a\nb\nc\nd\ne\nf\ng\nH\ni\n// typed\n" {
		t.Errorf("the buffer: %q", now)
	}
}
