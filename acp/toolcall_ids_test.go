package acp_test

import (
	"testing"

	"github.com/ctxls/ctxls/acp/acptest"
	"github.com/ctxls/ctxls/chat/openaitest"
)

// TestToolCallIDsUniqueOverACP: two turns whose replies both call call_1
// give two tool calls with distinct toolCallIds, live and in session/load's
// replay (one tool_call and one result each), while the provider gets its
// own call_1 back.
func TestToolCallIDsUniqueOverACP(t *testing.T) {
	t.Parallel()
	fake, dataDir, cwd := newFixture(t)
	a := startAgent(t, fake, dataDir, cwd, nil)
	id := a.newSession()
	call := openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "call_1", Name: "get_relevant_context", Arguments: `{}`}}}
	fake.Enqueue(call, openaitest.Reply{Chunks: []string{"One."}})
	if _, err := a.prompt(id, text("first")); err != nil {
		t.Fatal(err)
	}
	a.waitModelTitle(id)
	fake.Enqueue(call, openaitest.Reply{Chunks: []string{"Two."}})
	if _, err := a.prompt(id, text("second")); err != nil {
		t.Fatal(err)
	}
	if got := fake.LastStreamed().ToolResults(); len(got) != 1 || got["call_1"] == "" {
		t.Errorf("the provider's results: %q", got)
	}
	calls := func(from int) (starts, dones map[string]int) {
		starts, dones = map[string]int{}, map[string]int{}
		for _, u := range a.Updates(id) {
			if u.Seq <= from {
				continue
			}
			switch {
			case u.Kind == "tool_call":
				starts[u.ToolCallID()]++
			case u.Kind == "tool_call_update" && u.Status() == "completed":
				dones[u.ToolCallID()]++
			}
		}
		return starts, dones
	}
	starts, dones := calls(0)
	if len(starts) != 2 || len(dones) != 2 {
		t.Errorf("live: tool_call %v, completed %v", starts, dones)
	}
	seen := a.Received()
	from, fromUpdate := seen[len(seen)-1].Seq, len(a.Updates(""))
	if err := a.Call("session/load", map[string]any{"sessionId": id, "cwd": cwd, "mcpServers": []any{}}, nil); err != nil {
		t.Fatal(err)
	}
	a.WaitUpdateFrom(fromUpdate, "the replayed second answer", func(u acptest.Update) bool {
		return u.Kind == "agent_message_chunk" && u.Text() == "Two."
	})
	replayed, results := calls(from)
	if len(replayed) != 2 || len(results) != 2 {
		t.Errorf("replay: tool_call %v, results %v", replayed, results)
	}
	for id, n := range replayed {
		if n != 1 || results[id] != 1 {
			t.Errorf("replay of %s: %d tool_call, %d results", id, n, results[id])
		}
		if _, live := starts[id]; !live {
			t.Errorf("replayed id %s was not the live one (%v)", id, starts)
		}
	}
}
