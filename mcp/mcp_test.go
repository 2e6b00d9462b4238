package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/lsp/lsptest"
	"github.com/ctxls/ctxls/mcp/mcptest"
)

// connect runs `ctxls mcp serve` on dir over stdio with the SDK's client.
func connect(t *testing.T, dir string, args ...string) *sdk.ClientSession {
	t.Helper()
	cmd := exec.Command(lsptest.BuildBinary(t), append([]string{"mcp", "serve", "--data-dir", dir}, args...)...)
	cmd.Env = append(os.Environ(), "CTXLS_STORE=")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool and decodes its structured result into out; it
// returns the result (IsError for a failed operation).
func call(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any, out any) *sdk.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if out != nil && !res.IsError {
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: %s: %v", name, b, err)
		}
	}
	return res
}

func text(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func toolNames(t *testing.T, cs *sdk.ClientSession) []string {
	t.Helper()
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
		if tool.Annotations == nil || !tool.Annotations.ReadOnlyHint && tool.Name != "set_relevant_context" {
			t.Errorf("%s is not marked read-only", tool.Name)
		}
	}
	slices.Sort(names)
	return names
}

// TestServeStdio: an agent reaches the user's sessions through the SDK's
// own client over stdio: the read-only tools by default, the session as a
// resource, a clear tool error, and set_relevant_context only with --write.
func TestServeStdio(t *testing.T) {
	dir, id := mcptest.Fixture(t)
	cs := connect(t, dir)
	readOnly := []string{"get_relevant_context", "list_session_files", "list_sessions", "read_session_file", "search_sessions", "show_session"}
	if got := toolNames(t, cs); !slices.Equal(got, readOnly) {
		t.Errorf("tools %v, want %v", got, readOnly)
	}

	var hits api.SearchResult
	call(t, cs, "search_sessions", map[string]any{"query": "middlew"}, &hits)
	if len(hits.Hits) != 1 || hits.Hits[0].SessionID != id || !strings.Contains(hits.Hits[0].Snippet, "middleware") {
		t.Errorf("search: %+v", hits)
	}
	var list api.SessionListResult
	call(t, cs, "list_sessions", nil, &list)
	if len(list.Sessions) != 1 || list.Sessions[0].Title != "Fix login redirect" || list.Sessions[0].MessageCount != 2 {
		t.Errorf("list: %+v", list)
	}
	var show api.ShowResult
	call(t, cs, "show_session", map[string]any{"sessionId": id[:6]}, &show)
	if show.Session.ID != id || len(show.Messages) != 2 || show.Messages[1].Content != "Because the middleware runs twice." {
		t.Errorf("show by prefix: %+v", show)
	}
	var sets api.ContextGetResult
	call(t, cs, "get_relevant_context", map[string]any{"sessionId": id}, &sets)
	if !slices.Equal(sets.Context[api.SetFiles], []string{"/w/login.go"}) {
		t.Errorf("context: %+v", sets)
	}
	var files api.FilesListResult
	call(t, cs, "list_session_files", map[string]any{"sessionId": id}, &files)
	if !slices.Equal(files.Files, []string{"notes.md"}) {
		t.Errorf("files: %+v", files)
	}
	var read api.FilesReadResult
	call(t, cs, "read_session_file", map[string]any{"sessionId": id, "name": "notes.md"}, &read)
	if read.Content != "# Notes\nthe cookie path" || read.Size != 23 {
		t.Errorf("read: %+v", read)
	}
	for _, bad := range []map[string]any{
		{"sessionId": id, "name": "../history.md"},
		{"sessionId": "zzzzzzzz", "name": "notes.md"},
	} {
		if res := call(t, cs, "read_session_file", bad, nil); !res.IsError || !strings.Contains(text(res), "(notFound)") {
			t.Errorf("read %v: %+v %q", bad, res.IsError, text(res))
		}
	}
	if res := call(t, cs, "show_session", map[string]any{"sessionId": ""}, nil); !res.IsError || !strings.Contains(text(res), "sessionId is required") {
		t.Errorf("show without an id: %q", text(res))
	}
	if _, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "set_relevant_context", Arguments: map[string]any{"sessionId": id, "setName": "ports", "items": []string{"8080"}}}); err == nil {
		t.Error("set_relevant_context answered without --write")
	}

	rr, err := cs.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: "ctxls://session/" + id})
	if err != nil || len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, "# Fix login redirect") || !strings.Contains(rr.Contents[0].Text, "Why does login redirect twice?") {
		t.Errorf("the session as a resource: %v %+v", err, rr)
	}
	if _, err := cs.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: "ctxls://session/nope"}); err == nil {
		t.Error("an unknown session as a resource")
	}
	if _, err := os.Stat(filepath.Join(show.Session.Folder, "export.md")); !os.IsNotExist(err) {
		t.Errorf("reading the resource wrote export.md: %v", err)
	}

	w := connect(t, dir, "--write")
	if got := toolNames(t, w); !slices.Contains(got, "set_relevant_context") {
		t.Errorf("tools with --write: %v", got)
	}
	var set api.ContextSetResult
	call(t, w, "set_relevant_context", map[string]any{"sessionId": id, "setName": "ports", "items": []string{"8080", "5432"}}, &set)
	call(t, cs, "get_relevant_context", map[string]any{"sessionId": id, "setName": "ports"}, &sets)
	if !slices.Equal(set.Items, []string{"8080", "5432"}) || !slices.Equal(sets.Context["ports"], []string{"8080", "5432"}) {
		t.Errorf("set: %+v, then %+v", set, sets)
	}
}

// bearer adds the token to each request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestServeHTTP: over streamable HTTP on a loopback port the SDK's client
// with the token is served; a request without it gets 401, one whose Host
// or Origin is not localhost 403 (DNS rebinding); a non-loopback address is
// refused at start.
func TestServeHTTP(t *testing.T) {
	dir, id := mcptest.Fixture(t)
	url := mcptest.ServeHTTP(t, dir, "s3cret-token")

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{"s3cret-token"}}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var show api.ShowResult
	call(t, cs, "show_session", map[string]any{"sessionId": id}, &show)
	if show.Session.Title != "Fix login redirect" {
		t.Errorf("show over HTTP: %+v", show.Session)
	}

	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	post := func(mod func(*http.Request)) int {
		req, _ := http.NewRequest("POST", url, strings.NewReader(initialize))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer s3cret-token")
		mod(req)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post(func(*http.Request) {}); code != http.StatusOK {
		t.Errorf("a good request: %d", code)
	}
	for name, mod := range map[string]func(*http.Request){
		"no token":      func(r *http.Request) { r.Header.Del("Authorization") },
		"a wrong token": func(r *http.Request) { r.Header.Set("Authorization", "Bearer guess") },
	} {
		if code := post(mod); code != http.StatusUnauthorized {
			t.Errorf("%s: %d, want 401", name, code)
		}
	}
	for name, mod := range map[string]func(*http.Request){
		"a foreign Host":   func(r *http.Request) { r.Host = "evil.example:80" },
		"a foreign Origin": func(r *http.Request) { r.Header.Set("Origin", "http://evil.example") },
	} {
		if code := post(mod); code != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", name, code)
		}
	}

	out, err := exec.Command(lsptest.BuildBinary(t), "mcp", "serve", "--data-dir", dir, "--http", "0.0.0.0:0").CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "loopback") {
		t.Errorf("a non-loopback address: %v %s", err, out)
	}
}
