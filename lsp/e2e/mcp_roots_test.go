package e2e_test

import (
	"strings"
	"testing"
	"time"

	"go.lsp.dev/uri"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/internal/testmcp"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// TestMCPRootsAreTheWorkspaceFolders: an MCP server that asks for the
// client's roots (roots/list) gets the workspace folders' file URIs, and
// when a folder is added it is told the list changed and gets both.
func TestMCPRootsAreTheWorkspaceFolders(t *testing.T) {
	parallel(t, waitTests)
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Title"}}))
	root, rootURI := workspace(t)
	s := lsptest.Binary(t, []string{"OPENAI_API_KEY=sk-test-not-real"}, "serve", "--data-dir", t.TempDir())
	s.Initialize(lsptest.InitOptions{RootURI: rootURI, InitOptions: map[string]any{
		"provider":           map[string]any{"baseURL": fake.URL, "model": "test-model"},
		"mcpServers":         map[string]any{"t": testmcp.Server(t, "t", t.TempDir(), "-roots")},
		"allowReadOnlyTools": true,
	}})
	roots := func(id string) string {
		t.Helper()
		fake.Enqueue(openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: id, Name: "mcp__t__roots", Arguments: `{}`}}},
			openaitest.Reply{Chunks: []string{"Listed."}})
		var res api.ChatResult
		s.MustCommand(api.Chat, map[string]any{"message": "roots?"}, &res)
		return fake.LastStreamed().ToolResults()[id]
	}
	if got, want := roots("r1"), "roots: "+string(uri.File(root))+" (list changed 0 times)"; got != want {
		t.Errorf("roots:\n got %q\nwant %q", got, want)
	}
	fake.WaitRequests(3, 10*time.Second) // the title's, so it takes none of the next turn's replies
	other := t.TempDir()
	s.Notify("workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{
		"added": []any{map[string]any{"uri": string(uri.File(other)), "name": "other"}}, "removed": []any{}}})
	got := roots("r2")
	if !strings.Contains(got, string(uri.File(root))) || !strings.Contains(got, string(uri.File(other))) || strings.Contains(got, "changed 0 times") {
		t.Errorf("roots after a folder was added: %q", got)
	}
}
