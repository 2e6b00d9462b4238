package e2e_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/internal/testmcp"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// TestUnansweredQuestionsAreNotRejections: a permission question and an
// edit's review (ctxls/reviewEdit) nobody answers end with
// toolPermissionTimeoutSeconds, and the model is told they were not
// answered (it may ask the user), never that the user rejected or declined
// them and it must not try again.
func TestUnansweredQuestionsAreNotRejections(t *testing.T) {
	parallel(t, waitTests)
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Title"}}))
	_, rootURI := workspace(t)
	s := lsptest.Binary(t, []string{"OPENAI_API_KEY=sk-test-not-real"}, "serve", "--data-dir", t.TempDir())
	var mu sync.Mutex
	var asked []string
	s.OnServerRequest(func(method string, params json.RawMessage) (any, *lsptest.RPCError) {
		if method == api.ReviewEdit || method == "window/showMessageRequest" {
			mu.Lock()
			asked = append(asked, method)
			mu.Unlock()
			return lsptest.NoAnswer, nil
		}
		return lsptest.DefaultServerRequests(method, params)
	})
	s.Initialize(lsptest.InitOptions{RootURI: rootURI, InitOptions: map[string]any{
		"provider":                     map[string]any{"baseURL": fake.URL, "model": "test-model"},
		"mcpServers":                   map[string]any{"t": testmcp.Server(t, "t", t.TempDir())},
		"toolPermissionTimeoutSeconds": 1,
		"reviewEdits":                  true,
	}, Workspace: map[string]any{"applyEdit": true, "workspaceEdit": map[string]any{"documentChanges": true}}})
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{
			{ID: "p1", Name: "mcp__t__add", Arguments: `{"a":1,"b":2}`},
			{ID: "e1", Name: "edit_file", Arguments: `{"path":"main.go","old_string":"package main","new_string":"package app"}`},
		}},
		openaitest.Reply{Chunks: []string{"Waited."}},
	)
	var res api.ChatResult
	s.MustCommand(api.Chat, map[string]any{"message": "add and edit"}, &res)
	results := fake.LastStreamed().ToolResults()
	for id, want := range map[string]string{
		"p1": "The user did not answer the permission question in time; the call did not run. You may ask the user",
		"e1": "The user did not answer the review of this edit in time; nothing changed. You may ask the user",
	} {
		got := results[id]
		if !strings.Contains(got, want) || strings.Contains(got, "Do not") || strings.Contains(got, "rejected") || strings.Contains(got, "declined") {
			t.Errorf("%s: the model was told %q", id, got)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 2 {
		t.Errorf("asked %v", asked)
	}
}
