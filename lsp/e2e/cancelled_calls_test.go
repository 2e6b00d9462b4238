package e2e_test

import (
	"encoding/json"
	"testing"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// TestCancelledToolCallsReadCancelled: a call whose turn is cancelled while
// it waits for the user's permission, and one cancelled while it runs, end
// as ctxls/toolCall status "cancelled" (not "declined" or "failed"), and
// their stored results say "cancelled" too (ctxls.session.show).
func TestCancelledToolCallsReadCancelled(t *testing.T) {
	parallel(t, waitTests)
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Title"}}),
		openaitest.WithTitles(openaitest.Reply{Chunks: []string{"Title"}}))
	// The permission question of the first call is never answered; the
	// second call is allowed and hangs until cancelled.
	answers := &permissionAnswers{answers: []string{"", "Allow once"}}
	s := questionDaemon(t, fake, false, answers)
	s.SetTimeout(30 * 1e9)
	lastStatus := func(id string) api.ToolStatus {
		var st api.ToolStatus
		for _, m := range s.Notifications(api.ToolCall) {
			var p api.ToolCallParams
			json.Unmarshal(m.Params, &p)
			if p.ID == id {
				st = p.Status
			}
		}
		return st
	}
	waitCall := func(from int, status api.ToolStatus) api.ToolCallParams {
		var p api.ToolCallParams
		s.WaitForFrom(from, "a tool call "+string(status), func(m *lsptest.Message) bool {
			if m.Method != api.ToolCall {
				return false
			}
			var q api.ToolCallParams
			json.Unmarshal(m.Params, &q)
			if q.Status == status {
				p = q
				return true
			}
			return false
		})
		return p
	}

	// 1. Waiting for permission.
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: "mcp__t__add", Arguments: `{"a":1,"b":2}`}}},
	)
	from := s.ReceivedCount()
	wait := s.Send(71, "workspace/executeCommand", map[string]any{"command": api.Chat, "arguments": []any{map[string]any{"message": "add"}}})
	pending := waitCall(from, api.ToolPending)
	s.WaitFor("the permission question", func(m *lsptest.Message) bool { return m.Method == "window/showMessageRequest" })
	s.Notify("$/cancelRequest", map[string]any{"id": 71})
	if m := wait(); m.Error == nil || m.Error.Code != -32800 {
		t.Errorf("the cancelled turn: %+v", m)
	}
	if st := lastStatus(pending.ID); st != api.ToolCancelled {
		t.Errorf("a call cancelled while it waited for permission ends %q", st)
	}

	// 2. Running (allowed, hanging at its server).
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "c2", Name: "mcp__t__hang", Arguments: `{}`}}},
	)
	from = s.ReceivedCount()
	wait = s.Send(72, "workspace/executeCommand", map[string]any{"command": api.Chat, "arguments": []any{map[string]any{"message": "hang", "sessionId": pending.SessionID}}})
	running := waitCall(from, api.ToolRunning)
	s.Notify("$/cancelRequest", map[string]any{"id": 72})
	if m := wait(); m.Error == nil || m.Error.Code != -32800 {
		t.Errorf("the cancelled turn: %+v", m)
	}
	if st := lastStatus(running.ID); st != api.ToolCancelled {
		t.Errorf("a call cancelled while it ran ends %q", st)
	}

	// The stored results.
	var show api.ShowResult
	s.MustCommand(api.SessionShow, map[string]any{"sessionId": pending.SessionID}, &show)
	stored := map[string]api.Status{}
	for _, m := range show.Messages {
		if m.Role == api.RoleTool {
			stored[m.ToolCallID] = m.Status
		}
	}
	if stored[pending.ID] != api.StatusCancelled || stored[running.ID] != api.StatusCancelled {
		t.Errorf("stored results' statuses: %v", stored)
	}
}
