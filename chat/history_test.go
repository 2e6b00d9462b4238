package chat

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sashabaranov/go-openai"

	"github.com/ctxls/ctxls/prompts"
	"github.com/ctxls/ctxls/session"
)

func TestTrimHistoryWholeTurns(t *testing.T) {
	t.Parallel()
	counter := prompts.TokenizerFor("gpt-4o-mini")
	calls := func(ids ...string) json.RawMessage {
		var cs []openai.ToolCall
		for _, id := range ids {
			cs = append(cs, openai.ToolCall{ID: id, Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: "read_file", Arguments: `{"path":"a"}`}})
		}
		b, _ := json.Marshal(cs)
		return b
	}
	long := strings.Repeat("word ", 100)
	h := []session.Message{
		{Role: session.RoleUser, Content: "q1 " + long},
		{Role: session.RoleAssistant, Content: "a1 " + long},
		{Role: session.RoleSystem, Content: "Workspace folders changed: added /b"},
		{Role: session.RoleUser, Content: "q2"},
		{Role: session.RoleAssistant, ToolCalls: calls("c1", "c2")}, // c2's result was never stored
		{Role: session.RoleTool, ToolCallID: "c1", Content: "file a"},
		{Role: session.RoleAssistant, Content: "a2"},
		{Role: session.RoleUser, Content: "q3"},
		{Role: session.RoleAssistant, Content: "Error: the provider failed", Status: session.StatusError},
	}
	roles := func(ms []openai.ChatCompletionMessage) string {
		var r []string
		for _, m := range ms {
			r = append(r, m.Role)
		}
		return strings.Join(r, ",")
	}

	kept, dropped, used := trimHistory(h, 100000, counter)
	if got := roles(kept); got != "user,assistant,system,user,assistant,tool,assistant,user" || dropped != 0 {
		t.Fatalf("everything fits: %s, dropped %d", got, dropped)
	}
	if len(kept[4].ToolCalls) != 1 || kept[4].ToolCalls[0].ID != "c1" || kept[5].ToolCallID != "c1" {
		t.Errorf("the call without a result is left out: %+v", kept[4].ToolCalls)
	}
	total := 0
	for _, m := range kept {
		total += messageCost(m, counter)
	}
	if used != total {
		t.Errorf("used %d, the messages cost %d", used, total)
	}

	// Room for the last two turns only: the first goes whole, with the
	// system message that came after its answer.
	kept, dropped, _ = trimHistory(h, 120, counter)
	if got := roles(kept); got != "user,assistant,tool,assistant,user" || dropped != 3 || kept[0].Content != "q2" {
		t.Errorf("trimmed: %s, dropped %d", got, dropped)
	}
	// No room at all: nothing is kept, and nothing is split.
	kept, dropped, used = trimHistory(h, 5, counter)
	if len(kept) != 0 || dropped != 8 || used != 0 {
		t.Errorf("no room: %d kept, %d dropped, %d used", len(kept), dropped, used)
	}
}
