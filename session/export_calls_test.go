package session

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestMarkdownToolCalls: an export (and history.md) shows an answer's tool
// calls as the tools called with their arguments, and each result headed
// by its tool, not the calls' raw JSON.
func TestMarkdownToolCalls(t *testing.T) {
	at := time.Date(2026, 11, 29, 4, 0, 0, 0, time.UTC)
	calls, _ := json.Marshal([]map[string]any{
		{"id": "7:0", "type": "function", "function": map[string]any{"name": "grep", "arguments": `{"pattern":"a` + "```" + `b"}`}, "providerId": "call_1"},
		{"id": "7:1", "type": "function", "function": map[string]any{"name": "list_files", "arguments": "{}"}},
	})
	msgs := []Message{
		{ID: 6, Role: RoleUser, Content: "find it", Status: StatusComplete, CreatedAt: at},
		{ID: 7, Role: RoleAssistant, Status: StatusComplete, ToolCalls: calls, CreatedAt: at},
		{ID: 8, Role: RoleTool, Content: "x.go:1: ab", ToolCallID: "7:0", Status: StatusComplete, CreatedAt: at},
		{ID: 9, Role: RoleTool, Content: "x.go", ToolCallID: "7:1", Status: StatusComplete, CreatedAt: at},
	}
	md := Markdown(&Session{ID: "s", Title: "T", CreatedAt: at, UpdatedAt: at}, nil, msgs)
	for _, want := range []string{
		"- called `grep` with:\n\n  ````json\n  {\"pattern\":\"a```b\"}\n  ````\n",
		"- called `list_files`\n",
		"## tool `grep` · 2026-11-29 04:00:00\n\nx.go:1: ab\n",
		"## tool `list_files` · 2026-11-29 04:00:00\n\nx.go\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "providerId") {
		t.Errorf("raw call JSON in the Markdown:\n%s", md)
	}
}
