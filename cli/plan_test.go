package cli_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat/openaitest"
)

// TestSessionsShowPrintsThePlan: the model's update_plan in "ctxls chat"
// is printed on stderr as it changes; "ctxls sessions show" prints the
// session's plan (marks for the statuses, the priority when not medium,
// a hostile content made safe for the terminal) and --json carries it in
// the session's meta.
func TestSessionsShowPrintsThePlan(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	dir := t.TempDir()
	env := chatEnv(dir, fake)
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "p1", Name: "update_plan",
			Arguments: `{"items": [{"content": "Reproduce the bug", "status": "completed"}, {"content": "Fix the parser \u001b]0;owned\u0007", "status": "in_progress", "priority": "high"}, {"content": "Fix the parser", "status": "in_progress", "priority": "high"}, {"content": "Write the changelog", "status": "pending", "priority": "low"}]}`}}},
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "p2", Name: "update_plan",
			Arguments: `{"items": [{"content": "Reproduce the bug", "status": "completed"}, {"content": "Fix the parser", "status": "in_progress", "priority": "high"}, {"content": "Write the changelog", "status": "pending", "priority": "low"}]}`}}},
		openaitest.Reply{Chunks: []string{"On it."}},
		openaitest.Reply{Chunks: []string{"Parser fix"}},
	)
	out, errOut, code := run(t, env, "chat", "fix the parser")
	if code != 0 || out != "On it.\n" {
		t.Fatalf("chat: %d %q %q", code, out, errOut)
	}
	printed := "  plan:\n    [x] Reproduce the bug\n    [~] Fix the parser (high)\n    [ ] Write the changelog (low)\n"
	if !strings.Contains(errOut, "[plan]\n"+printed) {
		t.Errorf("chat's stderr lacks the plan:\n%s", errOut)
	}
	if strings.Contains(errOut, "\x1b") || strings.Contains(errOut, "owned") {
		t.Errorf("the refused plan (a control character) reached the terminal:\n%q", errOut)
	}
	id := sessionOf(t, errOut)
	out, errOut, code = run(t, env, "sessions", "show", id)
	if code != 0 || !strings.Contains(out, printed) {
		t.Fatalf("sessions show: %d\n%s\n%s", code, out, errOut)
	}
	if strings.Index(out, "  plan:") > strings.Index(out, "fix the parser") {
		t.Errorf("the plan is not printed with the session's fields, before the messages:\n%s", out)
	}
	out, _, code = run(t, env, "sessions", "show", id, "--json")
	var v struct {
		Session api.Session `json:"session"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil {
		t.Fatalf("show --json: %d %s", code, out)
	}
	want := []api.PlanEntry{
		{Content: "Reproduce the bug", Status: api.PlanCompleted, Priority: api.PlanMedium},
		{Content: "Fix the parser", Status: api.PlanInProgress, Priority: api.PlanHigh},
		{Content: "Write the changelog", Status: api.PlanPending, Priority: api.PlanLow},
	}
	if !reflect.DeepEqual(v.Session.Meta.Plan, want) {
		t.Errorf("--json's plan %+v", v.Session.Meta.Plan)
	}
}
