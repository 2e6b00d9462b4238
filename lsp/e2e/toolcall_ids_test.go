package e2e_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// TestToolCallIDsUniqueInSession: a local server that numbers its calls
// call_1 in every turn. Each call gets an id of ctxls's own, unique in the
// session: the ctxls/toolCall notifications, the stored calls and their
// results (session.show) name two calls, while the provider is still given
// its own call_1 back as the results' tool_call_id in both turns.
func TestToolCallIDsUniqueInSession(t *testing.T) {
	parallel(t, waitTests)
	fake := openaitest.New(t)
	s, _, _ := startChatBinary(t, fake, nil, nil)
	call := openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "call_1", Name: "get_relevant_context", Arguments: `{}`}}}
	fake.Enqueue(call, openaitest.Reply{Chunks: []string{"One."}}, openaitest.Reply{Chunks: []string{"Title"}})
	var res api.ChatResult
	s.MustCommand(api.Chat, map[string]any{"message": "first"}, &res)
	fake.WaitRequests(3, 5*time.Second) // the title's, so the next turn gets its own replies
	fake.Enqueue(call, openaitest.Reply{Chunks: []string{"Two."}})
	s.MustCommand(api.Chat, map[string]any{"sessionId": res.SessionID, "message": "second"}, &res)

	// The notifications: two calls, each started and finished under its id.
	ids := map[string][]api.ToolStatus{}
	var order []string
	for _, m := range s.Notifications(api.ToolCall) {
		var p api.ToolCallParams
		json.Unmarshal(m.Params, &p)
		if _, seen := ids[p.ID]; !seen {
			order = append(order, p.ID)
		}
		ids[p.ID] = append(ids[p.ID], p.Status)
	}
	if len(order) != 2 || order[0] == "" || order[1] == "" {
		t.Fatalf("ctxls/toolCall ids %v: %v", order, ids)
	}
	for _, id := range order {
		if st := ids[id]; len(st) != 2 || st[1] != api.ToolDone {
			t.Errorf("call %s: statuses %v", id, st)
		}
	}

	// session.show: each answer's call under the id the notifications
	// gave, its result under the same id.
	var show api.ShowResult
	s.MustCommand(api.SessionShow, map[string]any{"sessionId": res.SessionID}, &show)
	var stored, results []string
	for _, m := range show.Messages {
		var calls []struct{ ID string }
		json.Unmarshal(m.ToolCalls, &calls)
		for _, c := range calls {
			stored = append(stored, c.ID)
		}
		if m.Role == api.RoleTool {
			results = append(results, m.ToolCallID)
		}
	}
	if len(stored) != 2 || stored[0] != order[0] || stored[1] != order[1] {
		t.Errorf("stored calls %v, notified %v", stored, order)
	}
	if len(results) != 2 || results[0] != order[0] || results[1] != order[1] {
		t.Errorf("stored results %v, notified %v", results, order)
	}

	// The provider: its own ids back, in each turn and in the history.
	reqs := fake.Streamed()
	for i, r := range reqs {
		for _, m := range r.Parsed.Messages {
			for _, c := range m.ToolCalls {
				if c.ID != "call_1" {
					t.Errorf("request %d: tool call id %q sent", i, c.ID)
				}
			}
			if m.Role == "tool" && m.ToolCallID != "call_1" {
				t.Errorf("request %d: tool_call_id %q sent", i, m.ToolCallID)
			}
		}
	}
	if n := len(reqs[len(reqs)-1].ToolResults()); n != 1 {
		t.Errorf("the last request has results under %d ids", n)
	}
	last := 0
	for _, m := range reqs[len(reqs)-1].Parsed.Messages {
		if m.Role == "tool" {
			last++
		}
	}
	if last != 2 {
		t.Errorf("the last request has %d tool results, want both turns'", last)
	}
}

// callNames names the calls of the ctxls/toolCall notifications so far by
// the provider's ids: the i-th id first seen is called[i]'s (the daemon's
// ids are its own, see TestToolCallIDsUniqueInSession).
func callNames(s *lsptest.Server, called ...string) map[string]string {
	names := map[string]string{}
	for _, m := range s.Notifications(api.ToolCall) {
		var p api.ToolCallParams
		json.Unmarshal(m.Params, &p)
		if _, ok := names[p.ID]; !ok && len(names) < len(called) {
			names[p.ID] = called[len(names)]
		}
	}
	return names
}
