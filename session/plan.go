package session

import (
	"strings"
	"unicode/utf8"

	"github.com/ctxls/ctxls/api"
)

// PlanItem is one entry of a session's plan (Meta.Plan), declared with the
// wire's in package api: what to do, its status and its priority.
type PlanItem = api.PlanEntry

// The limits of a plan: at most MaxPlanItems entries of at most
// MaxPlanContent bytes each.
const (
	MaxPlanItems   = 100
	MaxPlanContent = 2000
)

// ValidPlan checks a plan and returns it as it is stored: each content
// trimmed, a missing priority made medium. An empty plan is valid (it
// clears the plan). The errors say what to change, for the model.
func ValidPlan(items []PlanItem) ([]PlanItem, error) {
	if len(items) > MaxPlanItems {
		return nil, Invalidf("the plan has %d items; the limit is %d: merge or drop some", len(items), MaxPlanItems)
	}
	out := make([]PlanItem, len(items))
	for i, it := range items {
		n := i + 1
		it.Content = strings.TrimSpace(it.Content)
		switch {
		case it.Content == "":
			return nil, Invalidf("item %d: content must not be empty", n)
		case len(it.Content) > MaxPlanContent:
			return nil, Invalidf("item %d: content is %d bytes long; the limit is %d: say it in a line", n, len(it.Content), MaxPlanContent)
		case !utf8.ValidString(it.Content):
			return nil, Invalidf("item %d: content is not valid UTF-8", n)
		case HasControl(it.Content):
			return nil, Invalidf("item %d: content must be one line without control characters", n)
		}
		switch it.Status {
		case api.PlanPending, api.PlanInProgress, api.PlanCompleted:
		default:
			return nil, Invalidf("item %d: status is %q, %q or %q, got %q", n, api.PlanPending, api.PlanInProgress, api.PlanCompleted, Truncate(string(it.Status), 20))
		}
		switch it.Priority {
		case "":
			it.Priority = api.PlanMedium
		case api.PlanHigh, api.PlanMedium, api.PlanLow:
		default:
			return nil, Invalidf("item %d: priority is %q, %q or %q (or left out), got %q", n, api.PlanHigh, api.PlanMedium, api.PlanLow, Truncate(string(it.Priority), 20))
		}
		out[i] = it
	}
	return out, nil
}
