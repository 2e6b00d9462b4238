package acp_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/acp/acptest"
	"github.com/ctxls/ctxls/chat/openaitest"
)

// planEntries are a plan update's entries.
func planEntries(t *testing.T, u acptest.Update) []map[string]string {
	t.Helper()
	var v struct {
		Entries []map[string]string `json:"entries"`
	}
	if err := json.Unmarshal(u.Raw, &v); err != nil {
		t.Fatalf("plan update %s: %v", u.Raw, err)
	}
	return v.Entries
}

// TestPlanUpdateAndReplay: the model's update_plan reaches the client as
// ACP's plan session update (every entry with content, priority and
// status; a missing priority made medium), after the call's tool_call; a
// restarted agent replays the plan on session/load, after the messages and
// before the answer, and sends it on session/resume; the next turn gives
// the model the plan.
func TestPlanUpdateAndReplay(t *testing.T) {
	t.Parallel()
	fake, dataDir, cwd := newFixture(t)
	a := startAgent(t, fake, dataDir, cwd, nil)
	id := a.newSession()
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "p1", Name: "update_plan",
			Arguments: `{"items": [{"content": "Read the rollout config", "status": "completed", "priority": "high"}, {"content": "Write the rollback steps", "status": "in_progress"}, {"content": "Dry-run it", "status": "pending", "priority": "low"}]}`}}},
		openaitest.Reply{Chunks: []string{"Planned."}},
	)
	if _, err := a.prompt(id, text("Plan a canary rollback")); err != nil {
		t.Fatal(err)
	}
	want := []map[string]string{
		{"content": "Read the rollout config", "priority": "high", "status": "completed"},
		{"content": "Write the rollback steps", "priority": "medium", "status": "in_progress"},
		{"content": "Dry-run it", "priority": "low", "status": "pending"},
	}
	var kinds []string
	var plans []acptest.Update
	for _, u := range a.Updates(id) {
		kinds = append(kinds, u.Kind)
		if u.Kind == "plan" {
			plans = append(plans, u)
		}
	}
	if len(plans) != 1 || !reflect.DeepEqual(planEntries(t, plans[0]), want) {
		t.Fatalf("plan updates %v (updates %v)", plans, kinds)
	}
	if i, j := strings.Index(strings.Join(kinds, " "), "tool_call "), strings.Index(strings.Join(kinds, " "), "plan"); i < 0 || j < i {
		t.Errorf("the plan update did not follow its tool_call: %v", kinds)
	}
	a.waitModelTitle(id)
	a.Close()

	b := startAgent(t, fake, dataDir, cwd, nil)
	load := <-b.Async("session/load", map[string]any{"sessionId": id, "cwd": cwd, "mcpServers": []any{}})
	if load.Error != nil {
		t.Fatal(load.Error)
	}
	var replayed []string
	var replayedPlan *acptest.Update
	for _, u := range b.Updates(id) {
		if u.Seq > load.Seq {
			break
		}
		replayed = append(replayed, u.Kind)
		if u.Kind == "plan" {
			replayedPlan = &u
		}
	}
	if replayedPlan == nil || !reflect.DeepEqual(planEntries(t, *replayedPlan), want) {
		t.Fatalf("session/load replayed no plan or another: %v", replayed)
	}
	if last := strings.LastIndex(strings.Join(replayed, " "), "agent_message_chunk"); last > strings.Index(strings.Join(replayed, " "), "plan") {
		t.Errorf("the plan was replayed before the messages: %v", replayed)
	}
	fake.Enqueue(openaitest.Reply{Chunks: []string{"Next step."}})
	if _, err := b.prompt(id, text("Where were we?")); err != nil {
		t.Fatal(err)
	}
	msgs := fake.LastStreamed().Parsed.Messages
	last := openaitest.Text(msgs[len(msgs)-1])
	if !strings.Contains(last, "## Plan") || !strings.Contains(last, "- [in_progress] Write the rollback steps\n") {
		t.Errorf("the turn after load lacks the plan:\n%s", last)
	}
	b.Close()

	c := startAgent(t, fake, dataDir, cwd, nil)
	resume := <-c.Async("session/resume", map[string]any{"sessionId": id, "cwd": cwd, "mcpServers": []any{}})
	if resume.Error != nil {
		t.Fatal(resume.Error)
	}
	var resumed []acptest.Update
	for _, u := range c.Updates(id) {
		if u.Seq < resume.Seq && u.Kind == "plan" {
			resumed = append(resumed, u)
		}
	}
	if len(resumed) != 1 || !reflect.DeepEqual(planEntries(t, resumed[0]), want) {
		t.Errorf("session/resume sent plans %v", resumed)
	}
}
