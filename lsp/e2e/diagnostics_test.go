package e2e_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/uri"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// diagnosticsEditor is a fake editor's side of ctxls/diagnostics: the
// diagnostics it holds, by URI, answered as an editor answers (the files
// asked for, else all), every request's params recorded; fail, when set,
// is its error instead.
type diagnosticsEditor struct {
	mu    sync.Mutex
	files map[string][]api.Diagnostic
	asked []api.DiagnosticsParams
	fail  *lsptest.RPCError
}

func (d *diagnosticsEditor) handle(method string, params json.RawMessage) (any, *lsptest.RPCError) {
	if method != api.Diagnostics {
		return lsptest.DefaultServerRequests(method, params)
	}
	var p api.DiagnosticsParams
	json.Unmarshal(params, &p)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.asked = append(d.asked, p)
	if d.fail != nil {
		return nil, d.fail
	}
	out := []api.FileDiagnostics{}
	for u, ds := range d.files {
		if p.URIs == nil || contains(p.URIs, u) {
			out = append(out, api.FileDiagnostics{URI: u, Diagnostics: ds})
		}
	}
	for _, u := range p.URIs {
		if _, ok := d.files[u]; !ok {
			out = append(out, api.FileDiagnostics{URI: u, Diagnostics: []api.Diagnostic{}})
		}
	}
	return out, nil
}

func (d *diagnosticsEditor) requests() []api.DiagnosticsParams {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]api.DiagnosticsParams(nil), d.asked...)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func lspDiag(line, char uint32, sev api.DiagnosticSeverity, source, code, msg string) api.Diagnostic {
	d := api.Diagnostic{Severity: sev, Source: source, Message: msg, Range: api.Range{Start: api.Position{Line: line, Character: char}, End: api.Position{Line: line, Character: char + 1}}}
	if code != "" {
		d.Code = json.RawMessage(code)
	}
	return d
}

// TestDiagnosticsTool: a client that set initializationOptions.diagnostics
// is offered the model's diagnostics tool (its schema generated: an
// optional path); the model's calls ask the editor with ctxls/diagnostics
// (every file's for a folder or all, the one file's URI for a file, no
// waitMs) and get its errors then warnings as path:line:col lines, in the
// next request to the model, without a permission question; a path outside
// the workspace is refused without asking the editor; the editor's error
// reaches the model as a clean sentence.
func TestDiagnosticsTool(t *testing.T) {
	parallel(t, waitTests)
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Title"}}))
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "src"), 0o755)
	os.WriteFile(filepath.Join(root, "main.go"), []byte("package main\n\nfunc main() { run() }\n"), 0o644)
	os.WriteFile(filepath.Join(root, "src", "a b.ts"), []byte("let x: number = 'y';\n"), 0o644)
	rootURI := string(uri.File(root))
	mainURI, tsURI := string(uri.File(filepath.Join(root, "main.go"))), string(uri.File(filepath.Join(root, "src", "a b.ts")))
	ed := &diagnosticsEditor{files: map[string][]api.Diagnostic{
		mainURI: {
			lspDiag(2, 14, api.SeverityError, "compiler", `"UndeclaredName"`, "undefined: run"),
			lspDiag(0, 0, api.SeverityHint, "gopls", "", "a hint, left out"),
		},
		tsURI: {
			lspDiag(0, 4, api.SeverityWarning, "eslint", "", "x is never read"),
			lspDiag(0, 16, api.SeverityError, "ts", "2322", "Type 'string' is not assignable to type 'number'."),
		},
		"file:///elsewhere/far.go": {lspDiag(0, 0, api.SeverityError, "compiler", "", "outside the workspace")},
	}}
	s := lsptest.Binary(t, []string{"OPENAI_API_KEY=sk-test-not-real"}, "serve", "--data-dir", t.TempDir())
	s.OnServerRequest(ed.handle)
	s.Initialize(lsptest.InitOptions{RootURI: rootURI, InitOptions: map[string]any{
		"provider":    map[string]any{"baseURL": fake.URL, "model": "test-model"},
		"diagnostics": true,
	}})
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{
			{ID: "d1", Name: "diagnostics", Arguments: `{}`},
			{ID: "d2", Name: "diagnostics", Arguments: `{"path":"src"}`},
			{ID: "d3", Name: "diagnostics", Arguments: `{"path":"main.go"}`},
			{ID: "d4", Name: "diagnostics", Arguments: `{"path":"../elsewhere"}`},
		}},
		openaitest.Reply{Chunks: []string{"Two errors."}},
	)
	var res api.ChatResult
	s.MustCommand(api.Chat, map[string]any{"message": "what is broken?"}, &res)
	first := fake.Requests()[0]
	var offered bool
	for _, tool := range first.Parsed.Tools {
		if tool.Function.Name == "diagnostics" {
			offered = true
			params, _ := json.Marshal(tool.Function.Parameters)
			var schema struct {
				Type       string
				Properties map[string]struct{ Type string }
				Required   []string
			}
			json.Unmarshal(params, &schema)
			if schema.Type != "object" || len(schema.Properties) != 1 || schema.Properties["path"].Type != "string" || len(schema.Required) != 0 {
				t.Errorf("the tool's schema: %s", params)
			}
		}
	}
	if !offered {
		t.Fatal("the diagnostics tool was not offered to a client that set diagnostics")
	}
	got := fake.LastStreamed().ToolResults()
	for id, want := range map[string]string{
		"d1": "main.go:3:15 error compiler(UndeclaredName): undefined: run\n" +
			"src/a b.ts:1:17 error ts(2322): Type 'string' is not assignable to type 'number'.\n" +
			"src/a b.ts:1:5 warning eslint: x is never read",
		"d2": "src/a b.ts:1:17 error ts(2322): Type 'string' is not assignable to type 'number'.\nsrc/a b.ts:1:5 warning eslint: x is never read",
		"d3": "main.go:3:15 error compiler(UndeclaredName): undefined: run",
	} {
		if got[id] != want {
			t.Errorf("%s: the model got\n%s\nwant\n%s", id, got[id], want)
		}
	}
	if !strings.Contains(got["d4"], "outside the workspace folders") {
		t.Errorf("d4: %q", got["d4"])
	}
	asked := ed.requests()
	if len(asked) != 3 || asked[0].URIs != nil || asked[1].URIs != nil || len(asked[2].URIs) != 1 || asked[2].URIs[0] != mainURI {
		t.Errorf("the editor was asked %+v", asked)
	}
	for _, p := range asked {
		if p.WaitMs != 0 {
			t.Errorf("the tool waited: %+v", p)
		}
	}
	// It only reads: no question, and each call ends done (the refused
	// path failed).
	for _, m := range s.Received() {
		if m.Method == "window/showMessageRequest" {
			t.Errorf("a question was asked: %s", m.Params)
		}
	}
	last := map[string]api.ToolStatus{}
	names := callNames(s, "d1", "d2", "d3", "d4")
	for _, m := range s.Notifications(api.ToolCall) {
		var p api.ToolCallParams
		json.Unmarshal(m.Params, &p)
		last[names[p.ID]] = p.Status
	}
	if last["d1"] != api.ToolDone || last["d3"] != api.ToolDone || last["d4"] != api.ToolFailed {
		t.Errorf("statuses: %v", last)
	}

	// The editor fails: the model is told in a sentence; no errors or
	// warnings is said so. (The title's request first, so that it does not
	// take a reply meant for a turn.)
	fake.WaitRequests(3, 10*time.Second)
	ed.mu.Lock()
	ed.fail = &lsptest.RPCError{Code: -32601, Message: "Unhandled method ctxls/diagnostics"}
	ed.mu.Unlock()
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "e1", Name: "diagnostics", Arguments: `{}`}}},
		openaitest.Reply{Chunks: []string{"Cannot tell."}},
	)
	s.MustCommand(api.Chat, map[string]any{"message": "again"}, nil)
	if got := fake.LastStreamed().ToolResults()["e1"]; got != "error: the editor's diagnostics could not be read: the editor does not answer ctxls/diagnostics" {
		t.Errorf("e1: %q", got)
	}
	ed.mu.Lock()
	ed.fail = &lsptest.RPCError{Code: -32603, Message: "boom"}
	ed.mu.Unlock()
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "e2", Name: "diagnostics", Arguments: `{}`}}},
		openaitest.Reply{Chunks: []string{"Cannot tell."}},
	)
	s.MustCommand(api.Chat, map[string]any{"message": "again"}, nil)
	if got := fake.LastStreamed().ToolResults()["e2"]; got != "error: the editor's diagnostics could not be read: the editor answered ctxls/diagnostics with an error: boom" {
		t.Errorf("e2: %q", got)
	}
	ed.mu.Lock()
	ed.fail, ed.files = nil, nil
	ed.mu.Unlock()
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "n1", Name: "diagnostics", Arguments: `{"path":"main.go"}`}}},
		openaitest.Reply{Chunks: []string{"Clean."}},
	)
	s.MustCommand(api.Chat, map[string]any{"message": "and now?"}, nil)
	if got := fake.LastStreamed().ToolResults()["n1"]; got != "No errors or warnings." {
		t.Errorf("n1: %q", got)
	}
}

// TestDiagnosticsNotOffered: a client that did not set
// initializationOptions.diagnostics is not offered the tool, and is never
// sent ctxls/diagnostics, even when the model calls the tool anyway.
func TestDiagnosticsNotOffered(t *testing.T) {
	parallel(t, waitTests)
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Title"}}))
	root, rootURI := workspace(t)
	_ = root
	ed := &diagnosticsEditor{files: map[string][]api.Diagnostic{rootURI + "/main.go": {lspDiag(0, 0, api.SeverityError, "x", "", "broken")}}}
	s := lsptest.Binary(t, []string{"OPENAI_API_KEY=sk-test-not-real"}, "serve", "--data-dir", t.TempDir())
	s.OnServerRequest(ed.handle)
	s.Initialize(lsptest.InitOptions{RootURI: rootURI, InitOptions: map[string]any{
		"provider": map[string]any{"baseURL": fake.URL, "model": "test-model"},
	}, Workspace: map[string]any{"applyEdit": true}})
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "x1", Name: "diagnostics", Arguments: `{}`}}},
		openaitest.Reply{Chunks: []string{"No tool."}},
	)
	s.MustCommand(api.Chat, map[string]any{"message": "what is broken?"}, nil)
	fake.WaitRequests(3, 10*time.Second) // the title's too: no request of the daemon's is left
	for _, tool := range fake.Requests()[0].Parsed.Tools {
		if tool.Function.Name == "diagnostics" {
			t.Error("the diagnostics tool was offered to a client that did not set diagnostics")
		}
	}
	if got := fake.LastStreamed().ToolResults()["x1"]; !strings.Contains(got, `unknown tool "diagnostics"`) {
		t.Errorf("x1: %q", got)
	}
	if asked := ed.requests(); len(asked) != 0 {
		t.Errorf("ctxls/diagnostics was sent: %+v", asked)
	}
	for _, m := range s.Received() {
		if m.Method == api.Diagnostics {
			t.Errorf("ctxls/diagnostics was sent: %s", m.Params)
		}
	}
}

// TestEditReportsErrors: after an edit of the model's is applied in the
// editor, its tool result carries the file's errors as the editor reports
// them once they settled: the daemon asks ctxls/diagnostics for that one
// file with waitMs, and a clean file is said to be clean. A client without
// the flag is never asked, and its result says nothing of errors.
func TestEditReportsErrors(t *testing.T) {
	parallel(t, waitTests)
	for _, flag := range []bool{true, false} {
		fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Title"}}))
		root, rootURI := workspace(t)
		s := lsptest.Binary(t, []string{"OPENAI_API_KEY=sk-test-not-real"}, "serve", "--data-dir", t.TempDir())
		ed := &bufferEditor{t: t, s: s, doc: map[string]*fakeDoc{}, answers: []string{"Accept", "Accept"}}
		mainURI := string(uri.File(filepath.Join(root, "main.go")))
		diags := &diagnosticsEditor{files: map[string][]api.Diagnostic{}}
		s.OnServerRequest(func(method string, params json.RawMessage) (any, *lsptest.RPCError) {
			if method == api.Diagnostics {
				// The editor's language server has checked the edited text.
				text, _ := ed.text(mainURI)
				diags.mu.Lock()
				diags.files[mainURI] = nil
				if strings.Contains(text, "run()") {
					diags.files[mainURI] = []api.Diagnostic{lspDiag(2, 14, api.SeverityError, "compiler", "", "undefined: run"), lspDiag(0, 0, api.SeverityWarning, "vet", "", "a warning, not told")}
				}
				diags.mu.Unlock()
				return diags.handle(method, params)
			}
			return ed.handle(method, params)
		})
		s.Initialize(lsptest.InitOptions{RootURI: rootURI, InitOptions: map[string]any{
			"provider": map[string]any{"baseURL": fake.URL, "model": "test-model"}, "diagnostics": flag,
		}, Workspace: map[string]any{"applyEdit": true, "workspaceEdit": map[string]any{"documentChanges": true}}})
		ed.open(mainURI, "package main\n\nfunc main() {}\n")
		fake.Enqueue(
			openaitest.Reply{ToolCalls: []openaitest.ToolCall{
				{ID: "e1", Name: "edit_file", Arguments: `{"path":"main.go","old_string":"func main() {}","new_string":"func main() { run() }"}`},
			}},
			openaitest.Reply{ToolCalls: []openaitest.ToolCall{
				{ID: "e2", Name: "edit_file", Arguments: `{"path":"main.go","old_string":"func main() { run() }","new_string":"func main() {}"}`},
			}},
			openaitest.Reply{Chunks: []string{"Fixed."}},
		)
		var res api.ChatResult
		s.MustCommand(api.Chat, map[string]any{"message": "call run"}, &res)
		reqs := fake.WaitRequests(3, 10*time.Second)
		e1 := reqs[1].ToolResults()["e1"]
		e2 := reqs[2].ToolResults()["e2"]
		asked := diags.requests()
		if !flag {
			if len(asked) != 0 || strings.Contains(e1, "The editor reports") || strings.Contains(e2, "The editor reports") {
				t.Errorf("without the flag: asked %+v; results %q, %q", asked, e1, e2)
			}
			continue
		}
		if !strings.Contains(e1, "edited ") || !strings.HasSuffix(e1, "The editor reports 1 error in the file now:\nmain.go:3:15 error compiler: undefined: run") {
			t.Errorf("e1: %q", e1)
		}
		if !strings.HasSuffix(e2, "The editor reports no errors in the file now.") {
			t.Errorf("e2: %q", e2)
		}
		if len(asked) != 2 || len(asked[0].URIs) != 1 || asked[0].URIs[0] != mainURI || asked[0].WaitMs != 2000 {
			t.Errorf("ctxls/diagnostics asked %+v", asked)
		}
	}
}
