package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat"
	"github.com/ctxls/ctxls/session"
)

// The session's plan: the model keeps a list of steps with update_plan; the
// store keeps it with the session, every later turn shows it to the model
// (prompts.PlanSection), and the doors show it to the user (ctxls/plan,
// ACP's plan update).

type planArgs struct {
	Items []planItemArgs `json:"items" jsonschema:"the whole plan, in order; it replaces the one before ([] clears it)"`
}

type planItemArgs struct {
	Content  string `json:"content" jsonschema:"what to do, in one line"`
	Status   string `json:"status" jsonschema:"pending, in_progress or completed"`
	Priority string `json:"priority,omitempty" jsonschema:"high, medium (the default) or low"`
}

// updatePlanTool is update_plan (declared by definePlan below) with the
// enums of its items and what is stored of its arguments.
var updatePlanTool = func() Tool {
	t := withPlanEnums(definePlan)
	t.stored = storedPlan
	return t
}()

// maxStoredPlanArgs is the most of update_plan's arguments stored as they
// are: more than any plan within the limits takes (100 items of 2,000
// bytes, each byte at most tripled by JSON's \uXXXX escapes, the control
// characters that would take more being refused).
const maxStoredPlanArgs = 1 << 20

// storedPlan is what is stored of update_plan's arguments: arguments past
// any valid plan's size (refused, so nothing of them is kept in the plan)
// become a note of their size, so the history and history.md do not carry
// megabytes the model sent once.
func storedPlan(args string) string {
	if len(args) <= maxStoredPlanArgs {
		return args
	}
	b, _ := json.Marshal(map[string]string{"items": fmt.Sprintf("[%s of arguments, not stored: over the plan's limits, so the call was refused]", session.Bytes(int64(len(args))))})
	return string(b)
}

var definePlan = define(Tool{
	Name: "update_plan",
	Kind: "think",
	Description: fmt.Sprintf("Replace the session's plan: the steps of a longer task, each pending, in_progress or completed. "+
		"Give the whole plan each time (at most %d items of one line each); keep one item in_progress while you work on it and mark items completed as you finish them. "+
		"The user sees the plan, and it is shown to you in later turns.", session.MaxPlanItems),
	Harmless: true,
}, nil, func(ctx context.Context, c *Call, a planArgs) (string, error) {
	if a.Items == nil {
		return "", Refused(`error: "items" is required: the whole plan as a list ([] clears it)`)
	}
	items := make([]session.PlanItem, len(a.Items))
	for i, it := range a.Items {
		items[i] = session.PlanItem{Content: it.Content, Status: api.PlanStatus(it.Status), Priority: api.PlanPriority(it.Priority)}
	}
	if _, err := session.ValidPlan(items); err != nil {
		return "", Refused("error: the plan was not changed: " + trimInvalid(err))
	}
	if c.store() == nil {
		return "", Refused("error: this turn has no session to keep a plan in")
	}
	stored, err := c.store().SetPlan(ctx, c.TT.SessionID, items)
	if err != nil {
		return "", err
	}
	c.emit(chat.PlanChanged{SessionID: c.TT.SessionID, Plan: stored})
	done := 0
	for _, it := range stored {
		if it.Status == api.PlanCompleted {
			done++
		}
	}
	c.Summarize(fmt.Sprintf("%d/%d done", done, len(stored)))
	if len(stored) == 0 {
		return "The plan is cleared.", nil
	}
	return fmt.Sprintf("The plan is updated: %d items, %d completed.", len(stored), done), nil
})

// trimInvalid is a validation error's text without the sentinel's prefix.
func trimInvalid(err error) string {
	s, _ := strings.CutPrefix(err.Error(), session.ErrInvalid.Error()+": ")
	return s
}

// withPlanEnums adds the items' status and priority enums to the schema
// (define's enums name top-level fields only).
func withPlanEnums(t Tool) Tool {
	base := t.schema
	t.schema = sync.OnceValue(func() json.RawMessage {
		var s map[string]any
		if err := json.Unmarshal(base(), &s); err != nil {
			panic(err)
		}
		props, _ := s["properties"].(map[string]any)
		items, _ := props["items"].(map[string]any)
		item, _ := items["items"].(map[string]any)
		fields, _ := item["properties"].(map[string]any)
		if st, ok := fields["status"].(map[string]any); ok {
			st["enum"] = []string{string(api.PlanPending), string(api.PlanInProgress), string(api.PlanCompleted)}
		}
		if pr, ok := fields["priority"].(map[string]any); ok {
			pr["enum"] = []string{string(api.PlanHigh), string(api.PlanMedium), string(api.PlanLow)}
		}
		b, err := json.Marshal(s)
		if err != nil {
			panic(err)
		}
		return b
	})
	return t
}
