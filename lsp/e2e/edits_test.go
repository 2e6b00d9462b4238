package e2e_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// bufferEditor is a fake editor's side of the model's edits: its open
// buffers (text and version), which workspace/applyEdit changes as an
// editor does (refusing an edit of another version), telling the daemon
// with didChange; and its answers to the review questions.
type bufferEditor struct {
	t   testing.TB
	s   *lsptest.Server
	mu  sync.Mutex
	doc map[string]*fakeDoc // by URI
	// answers to window/showMessageRequest, in turn; "Accept+typing" types
	// in main.go before it accepts.
	answers  []string
	typeInto string // the URI "Accept+typing" types in
	// typing is what "Accept+typing" makes of the text (nil: a line typed
	// at the top).
	typing  func(text string) string
	asked   []string
	applied []json.RawMessage // applyEdit params
}

type fakeDoc struct {
	text    string
	version int
}

func (b *bufferEditor) open(uri, text string) {
	b.mu.Lock()
	b.doc[uri] = &fakeDoc{text: text, version: 1}
	b.mu.Unlock()
	b.s.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "go", "version": 1, "text": text}})
}

// saveAndClose writes a buffer to its file and closes it, as the user
// would.
func (b *bufferEditor) saveAndClose(uri string) {
	b.mu.Lock()
	d := b.doc[uri]
	delete(b.doc, uri)
	b.mu.Unlock()
	os.WriteFile(strings.TrimPrefix(uri, "file://"), []byte(d.text), 0o644)
	b.s.Notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": uri}})
}

// change replaces a document's whole text, as typing would.
func (b *bufferEditor) change(uri, text string) {
	b.mu.Lock()
	d := b.doc[uri]
	d.text, d.version = text, d.version+1
	v := d.version
	b.mu.Unlock()
	b.s.Notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": uri, "version": v},
		"contentChanges": []any{map[string]any{"text": text}}})
}

func (b *bufferEditor) text(uri string) (string, int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if d := b.doc[uri]; d != nil {
		return d.text, d.version
	}
	return "", 0
}

func (b *bufferEditor) handle(method string, params json.RawMessage) (any, *lsptest.RPCError) {
	switch method {
	case "window/showMessageRequest":
		var q struct{ Message string }
		json.Unmarshal(params, &q)
		b.mu.Lock()
		b.asked = append(b.asked, q.Message)
		a := "Reject"
		if len(b.answers) > 0 {
			a, b.answers = b.answers[0], b.answers[1:]
		}
		b.mu.Unlock()
		if a == "Accept+typing" {
			text, _ := b.text(b.typeInto)
			if b.typing != nil {
				b.change(b.typeInto, b.typing(text))
			} else {
				b.change(b.typeInto, "// typed during the review\n"+text)
			}
			a = "Accept"
		}
		return map[string]string{"title": a}, nil
	case "workspace/applyEdit":
		b.mu.Lock()
		b.applied = append(b.applied, params)
		b.mu.Unlock()
		return b.apply(params)
	}
	return lsptest.DefaultServerRequests(method, params)
}

// apply applies a WorkspaceEdit of documentChanges as an editor does, and
// tells the daemon before it answers (as VS Code does): didChange for a
// buffer it had open, didOpen for one it opened to apply the edit.
func (b *bufferEditor) apply(params json.RawMessage) (any, *lsptest.RPCError) {
	var notes []func()
	var p struct {
		Edit struct {
			DocumentChanges []struct {
				Kind         string `json:"kind"`
				URI          string `json:"uri"`
				TextDocument struct {
					URI     string `json:"uri"`
					Version *int   `json:"version"`
				} `json:"textDocument"`
				Edits []struct {
					Range struct {
						Start, End struct{ Line, Character int }
					} `json:"range"`
					NewText string `json:"newText"`
				} `json:"edits"`
			} `json:"documentChanges"`
		} `json:"edit"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		b.t.Errorf("applyEdit params: %v", err)
		return map[string]any{"applied": false}, nil
	}
	for _, dc := range p.Edit.DocumentChanges {
		if dc.Kind == "delete" { // the buffer closed, the file removed
			b.mu.Lock()
			_, open := b.doc[dc.URI]
			delete(b.doc, dc.URI)
			b.mu.Unlock()
			os.Remove(strings.TrimPrefix(dc.URI, "file://"))
			if open {
				uri := dc.URI
				notes = append(notes, func() {
					b.s.Notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": uri}})
				})
			}
			continue
		}
		if dc.Kind == "create" {
			b.mu.Lock()
			b.doc[dc.URI] = &fakeDoc{version: 0} // a new, unsaved buffer
			b.mu.Unlock()
			continue
		}
		uri := dc.TextDocument.URI
		b.mu.Lock()
		d := b.doc[uri]
		opened := d == nil || d.version == 0
		if d == nil { // not open: the editor opens it from the disk
			data, _ := os.ReadFile(strings.TrimPrefix(uri, "file://"))
			d = &fakeDoc{text: string(data), version: 0}
			b.doc[uri] = d
		} else if v := dc.TextDocument.Version; v != nil && *v != d.version {
			b.mu.Unlock()
			return map[string]any{"applied": false, "failureReason": "the document changed (version mismatch)"}, nil
		}
		for _, e := range dc.Edits {
			from := offsetUTF16(d.text, e.Range.Start.Line, e.Range.Start.Character)
			to := offsetUTF16(d.text, e.Range.End.Line, e.Range.End.Character)
			d.text = d.text[:from] + e.NewText + d.text[to:]
		}
		d.version++
		text, version := d.text, d.version
		b.mu.Unlock()
		notes = append(notes, func() {
			if opened {
				b.s.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "text", "version": version, "text": text}})
				return
			}
			b.s.Notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": uri, "version": version},
				"contentChanges": []any{map[string]any{"text": text}}})
		})
	}
	for _, n := range notes {
		n()
	}
	return map[string]any{"applied": true}, nil
}

// offsetUTF16 is the byte offset of an LSP position counted in UTF-16.
func offsetUTF16(text string, line, char int) int {
	off := 0
	for range line {
		off += strings.IndexByte(text[off:], '\n') + 1
	}
	n := 0
	for i, r := range text[off:] {
		if n >= char || r == '\n' {
			return off + i
		}
		n += len(utf16.Encode([]rune{r}))
	}
	return len(text)
}

// TestModelEditsOverLSP: the model's edit_file and create_file, computed
// against the editor's unsaved text, reviewed with window/showMessageRequest
// and applied with workspace/applyEdit carrying the version they were
// computed against (the right UTF-16 range past an emoji); rejected; the
// misses (0 and 2 matches), a secret, paths outside the workspace and a
// link out refused without a question; replace_all on a file not open
// (version null); an edit accepted after the user typed elsewhere in the
// file during its review applied where its text now is, against the
// buffer's new version (TestReviewedEditsSurviveTyping has the refusal);
// auto mode applies at once; off offers none.
func TestModelEditsOverLSP(t *testing.T) {
	parallel(t, waitTests)
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Title"}}))
	root, rootURI := workspace(t)
	outside := t.TempDir()
	write := func(dir, name, text string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(text), 0o644)
		return p
	}
	write(root, "closed.go", "package main\n\nvar x = 1\n")
	write(root, "dup.txt", "x\ny\nx\n")
	write(root, ".env", "TOKEN=abc\n")
	write(outside, "outside.txt", "far away\n")
	os.Symlink(filepath.Join(outside, "outside.txt"), filepath.Join(root, "link.txt"))
	mainPath := filepath.Join(root, "main.go") // on disk: "package main\n"

	s := lsptest.Binary(t, []string{"OPENAI_API_KEY=sk-test-not-real"}, "serve", "--data-dir", t.TempDir())
	ed := &bufferEditor{t: t, s: s, doc: map[string]*fakeDoc{}}
	s.OnServerRequest(ed.handle)
	s.Initialize(lsptest.InitOptions{RootURI: rootURI, InitOptions: map[string]any{
		"provider": map[string]any{"baseURL": fake.URL, "model": "test-model"},
	}, Workspace: map[string]any{"applyEdit": true, "workspaceEdit": map[string]any{"documentChanges": true, "resourceOperations": []string{"create"}}}})
	uri := rootURI + "/main.go"
	ed.typeInto = uri
	unsaved := "package main\n\nfunc main() {\n\tprintln(\"😀 unsaved\")\n}\n"
	ed.open(uri, "package main\n")
	ed.change(uri, unsaved) // version 2, not on disk

	ed.answers = []string{"Accept", "Reject", "Accept", "Accept", "Accept+typing"}
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{
			{ID: "e1", Name: "edit_file", Arguments: `{"path":"main.go","old_string":"unsaved","new_string":"edited"}`},
			{ID: "e2", Name: "edit_file", Arguments: `{"path":"main.go","old_string":"func mian() {","new_string":"x"}`},
			{ID: "e3", Name: "edit_file", Arguments: `{"path":"dup.txt","old_string":"x","new_string":"z"}`},
			{ID: "e4", Name: "edit_file", Arguments: `{"path":"closed.go","old_string":"var x = 1","new_string":"var x = 2"}`},
			{ID: "e5", Name: "create_file", Arguments: `{"path":"pkg/new.go","content":"package pkg\n"}`},
			{ID: "e6", Name: "edit_file", Arguments: `{"path":".env","old_string":"abc","new_string":"def"}`},
			{ID: "e7", Name: "edit_file", Arguments: `{"path":"` + filepath.Join(outside, "outside.txt") + `","old_string":"far","new_string":"near"}`},
			{ID: "e8", Name: "edit_file", Arguments: `{"path":"link.txt","old_string":"far","new_string":"near"}`},
			{ID: "e9", Name: "edit_file", Arguments: `{"path":"dup.txt","old_string":"x","new_string":"z","replace_all":true}`},
			{ID: "e10", Name: "edit_file", Arguments: `{"path":"main.go","old_string":"edited","new_string":"twice"}`},
			{ID: "e11", Name: "create_file", Arguments: `{"path":"main.go","content":"x"}`},
		}},
		openaitest.Reply{Chunks: []string{"Done."}},
	)
	var res api.ChatResult
	s.MustCommand(api.Chat, map[string]any{"message": "edit things"}, &res)
	got := fake.LastStreamed().ToolResults()
	expect := map[string][]string{
		"e1":  {"edited " + mainPath, "unsaved until the user saves it", "-\tprintln(\"😀 unsaved\")", "+\tprintln(\"😀 edited\")"},
		"e2":  {"old_string does not occur in " + mainPath, "func main() {"},
		"e3":  {"old_string occurs 2 times", "lines 1, 3"},
		"e4":  {"The user rejected this edit of " + filepath.Join(root, "closed.go"), "+var x = 2"},
		"e5":  {"created " + filepath.Join(root, "pkg", "new.go"), "+package pkg"},
		"e6":  {"looks like it holds secrets"},
		"e7":  {"outside the workspace folders"},
		"e8":  {"outside the workspace folders"},
		"e9":  {"edited " + filepath.Join(root, "dup.txt"), "+z"},
		"e10": {"edited " + mainPath, "-\tprintln(\"😀 edited\")", "+\tprintln(\"😀 twice\")"},
		"e11": {"exists; use edit_file"},
	}
	for id, want := range expect {
		for _, w := range want {
			if !strings.Contains(got[id], w) {
				t.Errorf("%s: %q lacks %q", id, got[id], w)
			}
		}
	}
	if len(ed.asked) != 5 || !strings.Contains(ed.asked[0], "edit "+mainPath+" (+1 −1 lines)") {
		t.Errorf("questions: %q", ed.asked)
	}
	// The editor's buffers: main.go edited, typed in, edited again, unsaved;
	// the disk untouched.
	if text, _ := ed.text(uri); text != "// typed during the review\n"+strings.Replace(unsaved, "unsaved", "twice", 1) {
		t.Errorf("main.go's buffer: %q", text)
	}
	if disk, _ := os.ReadFile(mainPath); string(disk) != "package main\n" {
		t.Errorf("main.go on disk: %q", disk)
	}
	if text, _ := ed.text(rootURI + "/dup.txt"); text != "z\ny\nz\n" {
		t.Errorf("dup.txt's buffer: %q", text)
	}
	if text, _ := ed.text(rootURI + "/pkg/new.go"); text != "package pkg\n" {
		t.Errorf("new.go's buffer: %q", text)
	}
	// The first applyEdit: version 2, the range past the emoji (UTF-16):
	// "unsav" of "unsaved" made "edit" (the common end "ed" kept).
	var first struct {
		Label string
		Edit  struct {
			DocumentChanges []struct {
				TextDocument struct {
					URI     string
					Version *int
				}
				Edits []struct {
					Range   struct{ Start, End struct{ Line, Character int } }
					NewText string
				}
			}
		}
	}
	json.Unmarshal(ed.applied[0], &first)
	// LSP's names, exactly (Go's decoder would take "Line" for "line").
	if raw := string(ed.applied[0]); !strings.Contains(raw, `"start":{"line":3,"character":13}`) || !strings.Contains(raw, `"end":{"line":3,"character":18}`) {
		t.Errorf("the range's JSON: %s", raw)
	}
	dc := first.Edit.DocumentChanges[0]
	if dc.TextDocument.URI != uri || dc.TextDocument.Version == nil || *dc.TextDocument.Version != 2 || len(dc.Edits) != 1 ||
		dc.Edits[0].Range.Start.Line != 3 || dc.Edits[0].Range.Start.Character != 13 || dc.Edits[0].Range.End.Character != 18 || dc.Edits[0].NewText != "edit" {
		t.Errorf("the first applyEdit: %s", ed.applied[0])
	}
	var nullVersion struct {
		Edit struct {
			DocumentChanges []struct {
				TextDocument struct{ Version *int }
			}
		}
	}
	json.Unmarshal(ed.applied[2], &nullVersion) // dup.txt, replace_all, not open
	if len(nullVersion.Edit.DocumentChanges) != 1 || nullVersion.Edit.DocumentChanges[0].TextDocument.Version != nil {
		t.Errorf("a file not open: %s", ed.applied[2])
	}
	// The toolCall notifications end with each call's status.
	last := map[string]api.ToolStatus{}
	names := callNames(s, "e1", "e2", "e3", "e4", "e5", "e6", "e7", "e8", "e9", "e10", "e11")
	for _, m := range s.Notifications(api.ToolCall) {
		var p api.ToolCallParams
		json.Unmarshal(m.Params, &p)
		last[names[p.ID]] = p.Status
	}
	if last["e1"] != api.ToolDone || last["e4"] != api.ToolDeclined || last["e3"] != api.ToolFailed || last["e10"] != api.ToolDone {
		t.Errorf("statuses: %v", last)
	}

	// Auto: applied at once, no question.
	fake.WaitRequests(3, 10*time.Second)
	s.MustCommand(api.SetReviewMode, map[string]any{"mode": "auto"}, nil)
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "a1", Name: "edit_file", Arguments: `{"path":"closed.go","old_string":"var x = 1","new_string":"var x = 3"}`}}},
		openaitest.Reply{Chunks: []string{"Auto."}},
	)
	var auto api.ChatResult
	s.MustCommand(api.Chat, map[string]any{"message": "auto"}, &auto)
	if got := fake.LastStreamed().ToolResults()["a1"]; !strings.Contains(got, "edited ") || len(ed.asked) != 5 {
		t.Errorf("auto: %q, asked %d", got, len(ed.asked))
	}
	if len(auto.Edited) != 1 || auto.Edited[0] != filepath.Join(root, "closed.go") {
		t.Errorf("the turn's changed files: %v", auto.Edited)
	}
	// Off: no edit tools offered.
	s.MustCommand(api.SetReviewMode, map[string]any{"mode": "off"}, nil)
	fake.Enqueue(openaitest.Reply{Chunks: []string{"Off."}})
	s.MustCommand(api.Chat, map[string]any{"message": "off"}, nil)
	for _, tool := range fake.LastStreamed().Parsed.Tools {
		if tool.Function.Name == "edit_file" || tool.Function.Name == "create_file" {
			t.Errorf("%s offered in the off mode", tool.Function.Name)
		}
	}
}
