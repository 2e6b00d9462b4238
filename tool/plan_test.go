package tool

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat"
	"github.com/ctxls/ctxls/session"
)

// planStore keeps one session's plan as the stores do (session.ValidPlan).
type planStore struct {
	fakeStore
	mu    sync.Mutex
	plan  []session.PlanItem
	calls int
}

func (s *planStore) SetPlan(_ context.Context, _ string, items []session.PlanItem) ([]session.PlanItem, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	items, err := session.ValidPlan(items)
	if err != nil {
		return nil, err
	}
	s.plan = items
	return items, nil
}

// planEvents records the turn's events.
type planEvents struct {
	mu  sync.Mutex
	evs []chat.Event
}

func (e *planEvents) Emit(ev chat.Event) {
	e.mu.Lock()
	e.evs = append(e.evs, ev)
	e.mu.Unlock()
}

func planRig(mode string) (*planStore, *planEvents, *TurnTools, *chat.ToolTurn) {
	st := &planStore{fakeStore: fakeStore{sess: &session.Session{ID: "s1", Meta: session.Meta{ReviewMode: mode}}}}
	ev := &planEvents{}
	b := New(BoxConfig{Store: st, Getenv: func(string) string { return "" }}) // no MCP servers
	return st, ev, b.Turn("s1", true), &chat.ToolTurn{SessionID: "s1", Events: ev}
}

func callPlan(t *testing.T, tr *TurnTools, tt *chat.ToolTurn, args string) chat.ToolResult {
	t.Helper()
	tr.Tools(context.Background(), tt) // what the turn offers, as the engine asks first
	return tr.Call(context.Background(), tt, chat.ToolCall{ID: "c1", Name: "update_plan", Arguments: args})
}

// TestUpdatePlanReplacesThePlan: a valid plan is stored whole (a missing
// priority made medium), reported as a PlanChanged event, and the model
// told; a second call replaces it; [] clears it.
func TestUpdatePlanReplacesThePlan(t *testing.T) {
	st, ev, tr, tt := planRig(session.ReviewAsk)
	res := callPlan(t, tr, tt, `{"items": [{"content": " Find the redirect ", "status": "completed", "priority": "high"}, {"content": "Fix it", "status": "in_progress"}, {"content": "Add a test", "status": "pending", "priority": "low"}]}`)
	if res.Failed || res.Declined || !strings.Contains(res.Output, "3 items, 1 completed") {
		t.Fatalf("result %+v", res)
	}
	want := []session.PlanItem{
		{Content: "Find the redirect", Status: api.PlanCompleted, Priority: api.PlanHigh},
		{Content: "Fix it", Status: api.PlanInProgress, Priority: api.PlanMedium},
		{Content: "Add a test", Status: api.PlanPending, Priority: api.PlanLow},
	}
	if !slices.Equal(st.plan, want) {
		t.Fatalf("stored %+v, want %+v", st.plan, want)
	}
	if len(ev.evs) != 1 {
		t.Fatalf("events %+v", ev.evs)
	}
	if pc, ok := ev.evs[0].(chat.PlanChanged); !ok || pc.SessionID != "s1" || !slices.Equal(pc.Plan, want) {
		t.Fatalf("event %#v", ev.evs[0])
	}
	if res := callPlan(t, tr, tt, `{"items": []}`); res.Failed || len(st.plan) != 0 || !strings.Contains(res.Output, "cleared") {
		t.Fatalf("clearing: %+v, stored %+v", res, st.plan)
	}
	if pc := ev.evs[len(ev.evs)-1].(chat.PlanChanged); len(pc.Plan) != 0 {
		t.Fatalf("clearing event %+v", pc)
	}
}

// TestUpdatePlanRefusesInvalidPlans: each invalid plan is a tool error that
// says what is wrong; the stored plan is left as it was and no event is
// sent.
func TestUpdatePlanRefusesInvalidPlans(t *testing.T) {
	items := func(n int, content string) string {
		its := make([]map[string]string, n)
		for i := range its {
			its[i] = map[string]string{"content": content, "status": "pending"}
		}
		b, _ := json.Marshal(map[string]any{"items": its})
		return string(b)
	}
	for _, c := range []struct{ name, args, says string }{
		{"unknown status", `{"items": [{"content": "a", "status": "done"}]}`, `item 1: status is "pending", "in_progress" or "completed", got "done"`},
		{"no status", `{"items": [{"content": "a"}]}`, `item 1: status is`},
		{"unknown priority", `{"items": [{"content": "a", "status": "pending"}, {"content": "b", "status": "pending", "priority": "urgent"}]}`, `item 2: priority is "high", "medium" or "low"`},
		{"empty content", `{"items": [{"content": "  ", "status": "pending"}]}`, "item 1: content must not be empty"},
		{"two lines", `{"items": [{"content": "a\nb", "status": "pending"}]}`, "item 1: content must be one line"},
		{"too many items", items(session.MaxPlanItems+1, "step"), "the plan has 101 items; the limit is 100"},
		{"huge content", items(1, strings.Repeat("x", 1<<20)), "item 1: content is 1048576 bytes long; the limit is 2000"},
		{"no items", `{}`, `"items" is required`},
		{"items not a list", `{"items": "a, b"}`, "the arguments are not valid JSON"},
		{"not JSON", `{"items": [`, "the arguments are not valid JSON"},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, ev, tr, tt := planRig(session.ReviewAsk)
			st.plan = []session.PlanItem{{Content: "keep me", Status: api.PlanPending, Priority: api.PlanMedium}}
			res := callPlan(t, tr, tt, c.args)
			if !res.Failed || !strings.Contains(res.Output, c.says) {
				t.Fatalf("result %+v, want a failure saying %q", res, c.says)
			}
			if len(res.Output) > 500 {
				t.Errorf("the error is %d bytes long: it must not quote the content", len(res.Output))
			}
			if len(st.plan) != 1 || st.plan[0].Content != "keep me" || len(ev.evs) != 0 {
				t.Fatalf("plan %+v, events %+v", st.plan, ev.evs)
			}
		})
	}
}

// TestUpdatePlanOfferedInEveryMode: update_plan changes nothing on disk, so
// the review mode off, which offers only tools that read, offers it too; it
// runs without asking; its schema lists the statuses and priorities.
func TestUpdatePlanOfferedInEveryMode(t *testing.T) {
	for _, mode := range []string{session.ReviewAsk, session.ReviewAuto, session.ReviewOff} {
		_, _, tr, tt := planRig(mode)
		var names []string
		var schema string
		for _, d := range tr.Tools(context.Background(), tt) {
			names = append(names, d.Function.Name)
			if d.Function.Name == "update_plan" {
				b, _ := json.Marshal(d.Function.Parameters)
				schema = string(b)
			}
		}
		if !slices.Contains(names, "update_plan") {
			t.Fatalf("mode %s offers %v", mode, names)
		}
		if mode == session.ReviewOff && slices.Contains(names, "edit_file") {
			t.Fatalf("mode off offers edit_file: %v", names)
		}
		for _, want := range []string{`"enum":["pending","in_progress","completed"]`, `"enum":["high","medium","low"]`, `"required":["items"]`} {
			if !strings.Contains(schema, want) {
				t.Errorf("the schema %s lacks %s", schema, want)
			}
		}
		if _, _, info, ok := tr.Describe("update_plan"); !ok || info.Asks {
			t.Errorf("update_plan asks: %+v", info)
		}
	}
}

// TestUpdatePlanStoredArguments: the arguments of a plan within the limits
// are stored as they are; arguments past any valid plan's size (refused)
// are stored as a note of their size, still a JSON object.
func TestUpdatePlanStoredArguments(t *testing.T) {
	tr := New(BoxConfig{}).Turn("s1", false)
	its := make([]map[string]string, session.MaxPlanItems)
	for i := range its {
		its[i] = map[string]string{"content": strings.Repeat("é", session.MaxPlanContent/2), "status": "pending", "priority": "medium"}
	}
	b, _ := json.Marshal(map[string]any{"items": its})
	if got := tr.Stored("update_plan", string(b)); got != string(b) {
		t.Errorf("a plan at the limits (%d bytes) was stored as %d bytes", len(b), len(got))
	}
	huge := `{"items": [{"content": "` + strings.Repeat("x", 3<<20) + `", "status": "pending"}]}`
	got := tr.Stored("update_plan", huge)
	var v map[string]any
	if len(got) > 200 || json.Unmarshal([]byte(got), &v) != nil || !strings.Contains(got, "not stored") {
		t.Errorf("3 MiB of arguments stored as %q", got)
	}
}
