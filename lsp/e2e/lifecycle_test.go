package e2e_test

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/lsp/lsptest"
	"github.com/ctxls/ctxls/service"
)

func startInProcess(t *testing.T) *lsptest.Server {
	t.Helper()
	return lsptest.InProcess(t, service.Config{DataDir: t.TempDir(), Version: "test"})
}

// rpcCode returns the JSON-RPC error code of err, or 0.
func rpcCode(t *testing.T, err error) int {
	t.Helper()
	var rerr *lsptest.RPCError
	if !errors.As(err, &rerr) {
		t.Fatalf("want a JSON-RPC error, got %v", err)
	}
	return rerr.Code
}

func TestInitializeNegotiatesEncoding(t *testing.T) {
	parallel(t, waitTests)
	for _, tc := range []struct {
		name    string
		offered []string
		want    string
	}{
		{"utf-8 offered", []string{"utf-16", "utf-8"}, "utf-8"},
		{"only utf-16", []string{"utf-16"}, "utf-16"},
		{"only utf-32", []string{"utf-32"}, "utf-16"},
		{"none (Neovim 0.7)", nil, "utf-16"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startInProcess(t)
			res := s.Initialize(lsptest.InitOptions{PositionEncodings: tc.offered})
			caps := res["capabilities"].(map[string]any)
			if got := caps["positionEncoding"]; got != tc.want {
				t.Errorf("positionEncoding = %v, want %s", got, tc.want)
			}
			sync := caps["textDocumentSync"].(map[string]any)
			if sync["openClose"] != true || sync["change"] != float64(2) {
				t.Errorf("textDocumentSync = %v", sync)
			}
			if save, _ := sync["save"].(map[string]any); save == nil || save["includeText"] != false {
				t.Errorf("textDocumentSync.save = %v, want {includeText: false}", sync["save"])
			}
			var cmds []string
			for _, c := range caps["executeCommandProvider"].(map[string]any)["commands"].([]any) {
				cmds = append(cmds, c.(string))
			}
			if !slices.Equal(cmds, api.IDs()) {
				t.Errorf("commands = %v, want %v", cmds, api.IDs())
			}
			info := res["serverInfo"].(map[string]any)
			if info["name"] != "ctxls" || info["version"] != "test" {
				t.Errorf("serverInfo = %v", info)
			}
			s.Shutdown()
			if code := s.Exit(); code != 0 {
				t.Errorf("exit code after shutdown = %d, want 0", code)
			}
		})
	}
}

func TestLifecycleErrors(t *testing.T) {
	parallel(t, waitTests)
	s := startInProcess(t)
	// Before initialize: -32002, notifications are dropped without harm.
	s.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": "file:///x", "languageId": "go", "version": 1, "text": "x"}})
	if err := s.Command(api.ContextGet, map[string]any{}, nil); rpcCode(t, err) != -32002 {
		t.Errorf("command before initialize: code %d, want -32002", rpcCode(t, err))
	}
	if err := s.Call("shutdown", nil, nil); rpcCode(t, err) != -32002 {
		t.Errorf("shutdown before initialize: want -32002")
	}
	s.Initialize(lsptest.InitOptions{})
	if err := s.Call("initialize", map[string]any{"capabilities": map[string]any{}}, nil); rpcCode(t, err) != -32600 {
		t.Errorf("second initialize: want -32600")
	}
	if err := s.Call("textDocument/hover", map[string]any{}, nil); rpcCode(t, err) != -32601 {
		t.Errorf("unknown method: want -32601")
	}
	if err := s.Call("ctxls/doesNotExist", map[string]any{}, nil); rpcCode(t, err) != -32601 {
		t.Errorf("unknown custom method: want -32601")
	}
	// Unknown notifications, $/ notifications and cancels of unknown ids are ignored.
	s.Notify("$/setTrace", map[string]any{"value": "verbose"})
	s.Notify("custom/whatever", map[string]any{"a": 1})
	s.Notify("$/cancelRequest", map[string]any{"id": 999})
	s.Notify("$/cancelRequest", map[string]any{"id": "nope"})
	s.Notify("$/cancelRequest", map[string]any{"id": map[string]any{"bad": true}})
	s.Notify("$/cancelRequest", "garbage")
	s.Notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": "file:///never-opened", "version": 2}, "contentChanges": []any{map[string]any{"text": "x"}}})
	var got api.ContextGetResult
	s.MustCommand(api.ContextGet, map[string]any{}, &got)
	if got.V != 1 {
		t.Errorf("v = %d", got.V)
	}
	if err := s.Call("shutdown", nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Command(api.ContextGet, map[string]any{}, nil); rpcCode(t, err) != -32600 {
		t.Errorf("request after shutdown: want -32600")
	}
	s.Notify("exit", nil)
	if code := s.Exit(); code != 0 {
		t.Errorf("exit code = %d, want 0", code)
	}
}

func TestExitWithoutShutdown(t *testing.T) {
	parallel(t, waitTests)
	s := startInProcess(t)
	s.Initialize(lsptest.InitOptions{})
	s.Notify("exit", nil)
	if code := s.Exit(); code != 1 {
		t.Errorf("exit code = %d, want 1", code)
	}
}

func TestStringAndNumberIDs(t *testing.T) {
	parallel(t, waitTests)
	s := startInProcess(t)
	s.Initialize(lsptest.InitOptions{})
	m := s.Send("abc-1", "workspace/executeCommand", map[string]any{"command": api.ContextGet, "arguments": []any{map[string]any{}}})()
	if string(m.ID) != `"abc-1"` || m.Error != nil {
		t.Errorf("string id response: id %s err %v", m.ID, m.Error)
	}
	var res struct {
		V int `json:"v"`
	}
	if err := json.Unmarshal(m.Result, &res); err != nil || res.V != 1 {
		t.Errorf("result %s", m.Result)
	}
}

// TestMessagesBeforeInitializeIsAnswered: a client that does not wait for
// initialize's answer (Neovim 0.7 sends a command run right after start-up
// at once) has its requests run once the store is open, and its document
// notifications applied in wire order with the negotiated encoding, over
// real stdio to the built binary.
func TestMessagesBeforeInitializeIsAnswered(t *testing.T) {
	parallel(t, waitTests)
	for i := range 5 {
		s := lsptest.Binary(t, nil, "serve", "--data-dir", t.TempDir())
		init := s.Send(1, "initialize", map[string]any{"processId": nil,
			"capabilities": map[string]any{"general": map[string]any{"positionEncodings": []string{"utf-8"}}}})
		uri := "file:///tmp/early.txt"
		s.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
			"uri": uri, "languageId": "plaintext", "version": 1, "text": "😀ab"}})
		// In UTF-8 the emoji is 4 units: this removes the "a".
		s.Notify("textDocument/didChange", map[string]any{
			"textDocument": map[string]any{"uri": uri, "version": 2},
			"contentChanges": []any{map[string]any{"range": map[string]any{
				"start": map[string]any{"line": 0, "character": 4}, "end": map[string]any{"line": 0, "character": 5}}, "text": ""}},
		})
		created := s.Send(2, "workspace/executeCommand", map[string]any{"command": api.SessionNew, "arguments": []any{map[string]any{}}})
		doc := s.Send(3, "workspace/executeCommand", map[string]any{"command": api.DocumentGet, "arguments": []any{map[string]any{"uri": uri}}})
		if m := init(); m.Error != nil {
			t.Fatalf("run %d: initialize: %v", i, m.Error)
		}
		if m := created(); m.Error != nil {
			t.Fatalf("run %d: a command sent before initialize's answer failed: %v", i, m.Error)
		}
		m := doc()
		var got api.DocumentGetResult
		if m.Error != nil || json.Unmarshal(m.Result, &got) != nil || got.Text != "😀b" {
			t.Fatalf("run %d: the document edited before initialize's answer: %q (error %v), want %q", i, got.Text, m.Error, "😀b")
		}
		s.Notify("initialized", map[string]any{})
		s.Shutdown()
		if code := s.Exit(); code != 0 {
			t.Errorf("exit code %d", code)
		}
	}
}
