package acp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/acp/acptest"
	"github.com/ctxls/ctxls/chat/openaitest"
)

// contentText is the text of a tool_call(_update)'s content.
func contentText(u acptest.Update) string {
	var v struct {
		Content []struct {
			Content struct{ Text string } `json:"content"`
		} `json:"content"`
	}
	json.Unmarshal(u.Raw, &v)
	var s []string
	for _, c := range v.Content {
		s = append(s, c.Content.Text)
	}
	return strings.Join(s, "")
}

// TestRunCommandOverACP: the model's run_command over ACP (no client
// terminal: ctxls runs the command itself) is asked with
// session/request_permission (allow once, reject, allow always), its
// output streamed in tool_call_update content as it comes and in the
// final update with the exit status; "always" holds for that exact command
// line in the session's next turn.
func TestRunCommandOverACP(t *testing.T) {
	t.Parallel()
	fake, dataDir, cwd := newFixture(t)
	a := mcpAgent(t, fake, dataDir, cwd)
	id := a.newSession()
	a.AnswerPermissions("allow_once", "reject_once", "allow_always")
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{
			{ID: "c1", Name: "run_command", Arguments: `{"command":"echo hi; sleep 1; echo there"}`},
			{ID: "c2", Name: "run_command", Arguments: `{"command":"touch denied"}`},
			{ID: "c3", Name: "run_command", Arguments: `{"command":"echo A"}`},
		}},
		openaitest.Reply{Chunks: []string{"Done."}},
	)
	if res, err := a.prompt(id, text("run them")); err != nil || res.StopReason != "end_turn" {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	results := fake.LastStreamed().ToolResults()
	if results["c1"] != "hi\nthere\n[exit status 0]" || !strings.HasPrefix(results["c2"], "The user declined to run this command") || results["c3"] != "A\n[exit status 0]" {
		t.Errorf("results %q", results)
	}
	if _, err := os.Stat(filepath.Join(cwd, "denied")); err == nil {
		t.Error("the denied command ran")
	}
	perms := a.Permissions()
	if len(perms) != 3 {
		t.Fatalf("%d permission requests", len(perms))
	}
	var p struct {
		ToolCall struct {
			ToolCallID, Title, Kind, Status string
			RawInput                        map[string]any
		}
	}
	json.Unmarshal(perms[0], &p)
	names := byCall(a.Updates(id), "c1", "c2", "c3")
	if names[p.ToolCall.ToolCallID] != "c1" || p.ToolCall.Title != "run_command echo hi; sleep 1; echo there" || p.ToolCall.Kind != "execute" ||
		p.ToolCall.Status != "pending" || p.ToolCall.RawInput["command"] != "echo hi; sleep 1; echo there" {
		t.Errorf("request_permission: %s", perms[0])
	}
	// c1's output arrives while it runs, then whole at its end.
	var c1 []string
	for _, u := range a.Updates(id) {
		if names[u.ToolCallID()] == "c1" && u.Kind == "tool_call_update" {
			c1 = append(c1, u.Status()+" "+contentText(u))
		}
	}
	if len(c1) < 3 || c1[0] != "in_progress " || c1[1] != "in_progress hi\n" || !strings.Contains(c1[len(c1)-1], "completed hi\nthere\n[exit status 0]") {
		t.Errorf("c1's updates: %q", c1)
	}
	a.waitModelTitle(id)

	// Always: the same line runs without asking; another is asked.
	a.AnswerPermissions("reject_once")
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{
			{ID: "d1", Name: "run_command", Arguments: `{"command":"echo A"}`},
			{ID: "d2", Name: "run_command", Arguments: `{"command":"echo B"}`},
		}},
		openaitest.Reply{Chunks: []string{"Again."}},
	)
	if _, err := a.prompt(id, text("again")); err != nil {
		t.Fatal(err)
	}
	results = fake.LastStreamed().ToolResults()
	if results["d1"] != "A\n[exit status 0]" || !strings.Contains(results["d2"], "declined") || len(a.Permissions()) != 4 {
		t.Errorf("after always: %q, %d permission requests", results, len(a.Permissions()))
	}
}
