package storetest

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/session"
)

// testPlan: SetPlan replaces a session's plan whole and returns it as
// stored (a missing priority made medium, content trimmed); the session
// carries it (Get, a turn's TurnState, a store opened again); the other
// meta fields stay and the session's activity does not move; an invalid
// plan changes nothing; [] clears it.
func testPlan(t *testing.T, e *Env) {
	s := e.S
	ss, err := s.Create(ctx, "Planned")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetEnvHint(ctx, ss.ID, "vim 9; workspace /w"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetReviewMode(ctx, ss.ID, session.ReviewOff); err != nil {
		t.Fatal(err)
	}
	before, _ := s.Get(ctx, ss.ID)
	if before.Meta.Plan != nil {
		t.Fatalf("a new session has a plan: %+v", before.Meta.Plan)
	}
	want := []session.PlanItem{
		{Content: "Find the redirect — «ünïcode»", Status: api.PlanCompleted, Priority: api.PlanHigh},
		{Content: "Fix it", Status: api.PlanInProgress, Priority: api.PlanMedium},
		{Content: "Add a test", Status: api.PlanPending, Priority: api.PlanLow},
	}
	got, err := s.SetPlan(ctx, ss.ID, []session.PlanItem{
		{Content: "Find the redirect — «ünïcode»", Status: api.PlanCompleted, Priority: api.PlanHigh},
		{Content: "  Fix it ", Status: api.PlanInProgress},
		{Content: "Add a test", Status: api.PlanPending, Priority: api.PlanLow},
	})
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("SetPlan: %+v %v", got, err)
	}
	after, err := s.Get(ctx, ss.ID)
	if err != nil || !reflect.DeepEqual(after.Meta.Plan, want) {
		t.Fatalf("Get: %+v %v", after, err)
	}
	if after.Meta.EnvHint != "vim 9; workspace /w" || after.Meta.ReviewMode != session.ReviewOff {
		t.Errorf("the other meta fields changed: %+v", after.Meta)
	}
	if !after.UpdatedAt.Equal(before.UpdatedAt) {
		t.Errorf("SetPlan moved the activity: %v → %v", before.UpdatedAt, after.UpdatedAt)
	}
	// The other meta writers leave the plan.
	if _, err := s.SetModel(ctx, ss.ID, "m2"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetToolPermission(ctx, ss.ID, "mcp__fs__read", session.ToolAllow); err != nil {
		t.Fatal(err)
	}
	st, err := s.TurnState(ctx, ss.ID, nil, nil)
	if err != nil || !reflect.DeepEqual(st.Session.Meta.Plan, want) {
		t.Fatalf("TurnState's session: %+v %v", st, err)
	}
	again := e.Reopen()
	if got, err := again.Get(ctx, ss.ID); err != nil || !reflect.DeepEqual(got.Meta.Plan, want) {
		t.Fatalf("opened again: %+v %v", got, err)
	}

	// Refused, and nothing changed.
	many := make([]session.PlanItem, session.MaxPlanItems+1)
	for i := range many {
		many[i] = session.PlanItem{Content: "step", Status: api.PlanPending}
	}
	for name, bad := range map[string][]session.PlanItem{
		"unknown status":   {{Content: "a", Status: "done"}},
		"unknown priority": {{Content: "a", Status: api.PlanPending, Priority: "urgent"}},
		"empty content":    {{Content: " ", Status: api.PlanPending}},
		"control":          {{Content: "a\x1b[2J", Status: api.PlanPending}},
		"not UTF-8":        {{Content: "a\xff", Status: api.PlanPending}},
		"huge content":     {{Content: strings.Repeat("x", session.MaxPlanContent+1), Status: api.PlanPending}},
		"too many":         many,
	} {
		if _, err := s.SetPlan(ctx, ss.ID, bad); !errors.Is(err, session.ErrInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if got, _ := s.Get(ctx, ss.ID); !reflect.DeepEqual(got.Meta.Plan, want) {
		t.Errorf("a refused plan changed it: %+v", got.Meta.Plan)
	}
	if _, err := s.SetPlan(ctx, "nope", want); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("unknown session: %v", err)
	}
	// The limits themselves are accepted.
	full := make([]session.PlanItem, session.MaxPlanItems)
	for i := range full {
		full[i] = session.PlanItem{Content: strings.Repeat("é", session.MaxPlanContent/2), Status: api.PlanPending, Priority: api.PlanMedium}
	}
	if got, err := s.SetPlan(ctx, ss.ID, full); err != nil || len(got) != session.MaxPlanItems {
		t.Fatalf("a plan at the limits: %d %v", len(got), err)
	}
	if got, _ := s.Get(ctx, ss.ID); !reflect.DeepEqual(got.Meta.Plan, full) {
		t.Errorf("a plan at the limits, read back: %d items", len(got.Meta.Plan))
	}
	// Cleared.
	if got, err := s.SetPlan(ctx, ss.ID, []session.PlanItem{}); err != nil || len(got) != 0 {
		t.Fatalf("clearing: %+v %v", got, err)
	}
	if got, _ := s.Get(ctx, ss.ID); got.Meta.Plan != nil || got.Meta.Model != "m2" || got.Meta.Tools["mcp__fs__read"] != session.ToolAllow {
		t.Errorf("after clearing: %+v", got.Meta)
	}
}
