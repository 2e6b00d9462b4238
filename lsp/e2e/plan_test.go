package e2e_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/sashabaranov/go-openai"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
	"github.com/ctxls/ctxls/session"
)

// turnRequest is the last streamed request of the turn whose question is
// question (its last user message ends with it).
func turnRequest(t *testing.T, fake *openaitest.Server, question string) openaitest.Request {
	t.Helper()
	reqs := fake.Streamed()
	for i := len(reqs) - 1; i >= 0; i-- {
		msgs := reqs[i].Parsed.Messages
		for j := len(msgs) - 1; j >= 0; j-- {
			if msgs[j].Role == openai.ChatMessageRoleUser {
				if strings.HasSuffix(openaitest.Text(msgs[j]), question) {
					return reqs[i]
				}
				break
			}
		}
	}
	t.Fatalf("no request of the turn %q among %d", question, len(reqs))
	return openaitest.Request{}
}

// lastUser is the text of a request's last user message.
func lastUser(r openaitest.Request) string {
	msgs := r.Parsed.Messages
	for j := len(msgs) - 1; j >= 0; j-- {
		if msgs[j].Role == openai.ChatMessageRoleUser {
			return openaitest.Text(msgs[j])
		}
	}
	return ""
}

// TestPlanOverLSP: over the built binary the model calls update_plan; the
// client gets ctxls/plan with the whole plan (a missing priority made
// medium) and the call's card; the next turn's request carries the plan in
// its last message, after the history, whose messages are sent as they
// were before the plan existed (the provider's cached prefix holds); after
// a restart of the daemon ctxls.session.show returns the plan and the next
// turn still carries it; an invalid plan is a tool error the model reads,
// and changes nothing.
func TestPlanOverLSP(t *testing.T) {
	parallel(t, waitTests)
	fake := openaitest.New(t)
	s, _, dataDir := startChatBinary(t, fake, nil, nil)

	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{call("p1", "update_plan",
			`{"items": [{"content": "Find where the redirect is issued", "status": "completed", "priority": "high"}, {"content": "Fix the double redirect", "status": "in_progress"}, {"content": "Add a test", "status": "pending", "priority": "low"}]}`)}},
		openaitest.Reply{Chunks: []string{"Planned."}},
		openaitest.Reply{Chunks: []string{"Login redirect"}},
	)
	var res api.ChatResult
	s.MustCommand(api.Chat, map[string]any{"message": "why does login redirect twice?"}, &res)
	want := []api.PlanEntry{
		{Content: "Find where the redirect is issued", Status: api.PlanCompleted, Priority: api.PlanHigh},
		{Content: "Fix the double redirect", Status: api.PlanInProgress, Priority: api.PlanMedium},
		{Content: "Add a test", Status: api.PlanPending, Priority: api.PlanLow},
	}
	var p api.PlanParams
	mustUnmarshal(t, s.WaitNotification(api.Plan, 1).Params, &p)
	if p.SessionID != res.SessionID || !reflect.DeepEqual(p.Entries, want) {
		t.Fatalf("ctxls/plan %+v, want session %s and %+v", p, res.SessionID, want)
	}
	var card api.ToolCallParams
	for _, m := range s.Notifications(api.ToolCall) {
		var c api.ToolCallParams
		if json.Unmarshal(m.Params, &c) == nil && c.Name == "update_plan" {
			card = c
		}
	}
	if card.Status != api.ToolDone || card.Summary != "1/3 done" {
		t.Errorf("update_plan's card %+v", card)
	}
	// The plan follows the card of the call that made it.
	cardAt, planAt := -1, -1
	for i, m := range s.Received() {
		var c api.ToolCallParams
		if m.Method == api.ToolCall && cardAt < 0 && json.Unmarshal(m.Params, &c) == nil && c.Name == "update_plan" {
			cardAt = i
		}
		if m.Method == api.Plan && planAt < 0 {
			planAt = i
		}
	}
	if cardAt < 0 || planAt < cardAt {
		t.Errorf("ctxls/plan (message %d) came before update_plan's card (message %d)", planAt, cardAt)
	}
	first := turnRequest(t, fake, "why does login redirect twice?")
	if strings.Contains(lastUser(first), "## Plan") {
		t.Fatalf("the first turn had a plan before the model made one:\n%s", lastUser(first))
	}
	// The tool result the model read.
	results := map[string]string{}
	for _, m := range fake.Streamed()[1].Parsed.Messages {
		if m.Role == openai.ChatMessageRoleTool {
			results[m.ToolCallID] = m.Content
		}
	}
	if !strings.Contains(results["p1"], "3 items, 1 completed") {
		t.Errorf("update_plan's result %q", results["p1"])
	}

	planText := "## Plan\n\nYour plan for this session, as you last set it with `update_plan` (call it again to change it):\n\n" +
		"- [completed] Find where the redirect is issued (high priority)\n- [in_progress] Fix the double redirect\n- [pending] Add a test (low priority)\n"
	fake.Enqueue(openaitest.Reply{Chunks: []string{"Fixed."}})
	s.MustCommand(api.Chat, map[string]any{"sessionId": res.SessionID, "message": "go on"}, &res)
	second := turnRequest(t, fake, "go on")
	if last := lastUser(second); !strings.Contains(last, planText) {
		t.Fatalf("the next turn's message lacks the plan:\n%s", last)
	}
	msgs := second.Parsed.Messages
	for i, m := range msgs[:len(msgs)-1] {
		if strings.Contains(openaitest.Text(m), "## Plan") {
			t.Errorf("message %d (%s) before the last holds the plan", i, m.Role)
		}
	}
	for i := range 2 { // the system prompt and the first question, as sent before the plan
		if a, b := openaitest.Text(first.Parsed.Messages[i]), openaitest.Text(msgs[i]); a != b {
			t.Errorf("message %d changed since the first turn:\n%s\n---\n%s", i, a, b)
		}
	}

	// A restart: the plan is kept with the session.
	s.Shutdown()
	s.Exit()
	s2 := lsptest.Binary(t, []string{"OPENAI_API_KEY=sk-test-not-real", session.SoftLimitEnv + "="}, "serve", "--data-dir", dataDir)
	_, rootURI := workspace(t)
	s2.Initialize(lsptest.InitOptions{RootURI: rootURI, InitOptions: map[string]any{
		"provider": map[string]any{"baseURL": fake.URL, "model": "test-model", "contextWindow": 16000, "maxOutputTokens": 1000}}})
	var show api.ShowResult
	s2.MustCommand(api.SessionShow, map[string]any{"sessionId": res.SessionID}, &show)
	if !reflect.DeepEqual(show.Session.Meta.Plan, want) {
		t.Fatalf("ctxls.session.show after a restart: plan %+v", show.Session.Meta.Plan)
	}
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{call("p2", "update_plan", `{"items": [{"content": "Fix it", "status": "done"}]}`)}},
		openaitest.Reply{Chunks: []string{"Still on it."}},
	)
	s2.MustCommand(api.Chat, map[string]any{"sessionId": res.SessionID, "message": "and now?"}, &res)
	third := turnRequest(t, fake, "and now?")
	if last := lastUser(third); !strings.Contains(last, planText) {
		t.Fatalf("after a restart the turn's message lacks the plan:\n%s", last)
	}
	after := fake.LastStreamed()
	var bad string
	for _, m := range after.Parsed.Messages {
		if m.Role == openai.ChatMessageRoleTool && m.ToolCallID == "p2" {
			bad = m.Content
		}
	}
	if !strings.HasPrefix(bad, "error: the plan was not changed: item 1: status is") || !strings.Contains(bad, `got "done"`) {
		t.Errorf("an invalid plan's result %q", bad)
	}
	if n := len(s2.Notifications(api.Plan)); n != 0 {
		t.Errorf("an invalid plan sent %d ctxls/plan", n)
	}
	s2.MustCommand(api.SessionShow, map[string]any{"sessionId": res.SessionID}, &show)
	if !reflect.DeepEqual(show.Session.Meta.Plan, want) {
		t.Errorf("an invalid plan changed it: %+v", show.Session.Meta.Plan)
	}
}
