package chat

import (
	"encoding/json"

	"github.com/sashabaranov/go-openai"

	"github.com/ctxls/ctxls/prompts"
	"github.com/ctxls/ctxls/session"
)

// perMessage is what a message costs beyond its text (role and framing).
const perMessage = 4

// histTurn is one whole turn of the stored history: a user message and
// everything up to the next user message (or the messages before the first
// question), as the model is given them and as they are stored.
type histTurn struct {
	msgs   []openai.ChatCompletionMessage // what the model is given
	stored []session.Message              // every stored message of the turn, those left out included
	cost   int                            // the tokens msgs take
}

// trimHistory turns a session's stored messages (oldest first) into the
// model's history within budget tokens. It keeps whole turns — a user
// message with everything up to the next user message — newest first and
// drops the oldest turns that do not fit, so an answer never goes without
// its question and a tool call never without its result. Stored system
// messages (context switches) are kept in their place; failed answers
// (their text is the error) are left out, and so are tool calls whose
// results were never stored (a daemon killed between the two). It returns
// the messages kept, how many were dropped, and the tokens the kept ones
// take.
func trimHistory(history []session.Message, budget int, counter prompts.Counter) (kept []openai.ChatCompletionMessage, dropped, used int) {
	return trimTurns(groupTurns(history, counter, nil, nil), budget)
}

// groupTurns splits stored messages (summaries left out, see
// Store.ModelHistory) into whole turns, with what each costs the model.
// blocks holds user messages as they were sent, their context block
// before them (see modelView), given again so; view (nil: none) keeps the costs
// counted, so a turn counts only messages new to it.
func groupTurns(history []session.Message, counter prompts.Counter, blocks map[int64]string, view *modelView) []histTurn {
	var turns []histTurn
	results := map[string]bool{} // tool call ids with a stored result
	for _, m := range history {
		if m.Role == session.RoleTool && m.ToolCallID != "" {
			results[m.ToolCallID] = true
		}
	}
	called := map[string]string{} // tool call ids of the answers kept: the provider's by ctxls's
	for _, m := range history {
		if m.IsSummary() {
			continue
		}
		if m.Role == session.RoleUser || len(turns) == 0 {
			turns = append(turns, histTurn{}) // a question, or the messages before the first one
		}
		cur := &turns[len(turns)-1]
		cur.stored = append(cur.stored, m)
		var om openai.ChatCompletionMessage
		switch m.Role {
		case session.RoleUser:
			om = openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: m.Content}
			if sent, ok := blocks[m.ID]; ok {
				om.Content = sent // with its block, as sent
			}
		case session.RoleSystem:
			om = openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: m.Content}
		case session.RoleAssistant:
			if m.Status == session.StatusError {
				continue
			}
			om = openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: m.Content}
			if (m.Status == session.StatusInterrupted || m.Status == session.StatusCancelled) && m.Content != "" {
				// Stopped (cancelled, or its daemon died): the model is told
				// the answer is not whole, so it does not build on its end.
				om.Content += prompts.CutOffNote
			}
			var calls []StoredCall
			if len(m.ToolCalls) > 0 && json.Unmarshal(m.ToolCalls, &calls) == nil {
				for _, c := range calls {
					if results[c.ID] {
						// The provider is given its own ids back.
						pc := c.providerCall()
						om.ToolCalls = append(om.ToolCalls, pc)
						called[c.ID] = pc.ID
					}
				}
			}
			if om.Content == "" && len(om.ToolCalls) == 0 {
				continue
			}
		case session.RoleTool:
			providerID, ok := called[m.ToolCallID]
			if !ok {
				continue
			}
			om = openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, Content: m.Content, ToolCallID: providerID}
		default:
			continue
		}
		cur.msgs = append(cur.msgs, om)
		_, block := blocks[m.ID]
		cur.cost += view.costOf(counter, costKey{m.ID, block && m.Role == session.RoleUser}, func() int { return messageCost(om, counter) })
	}
	return turns
}

// trimTurns keeps the newest whole turns that fit in budget tokens (see
// trimHistory).
func trimTurns(turns []histTurn, budget int) (kept []openai.ChatCompletionMessage, dropped, used int) {
	first := len(turns)
	for first > 0 && turns[first-1].cost <= budget-used {
		first--
		used += turns[first].cost
	}
	n := 0
	for _, t := range turns[first:] {
		n += len(t.msgs)
	}
	// One allocation: appending turn by turn grew and copied the slice a
	// dozen times on a long session.
	kept = make([]openai.ChatCompletionMessage, 0, n)
	for i, t := range turns {
		if i < first {
			dropped += len(t.msgs)
		} else {
			kept = append(kept, t.msgs...)
		}
	}
	return kept, dropped, used
}

// messageCost is the tokens a message takes in the input.
func messageCost(m openai.ChatCompletionMessage, counter prompts.Counter) int {
	n := counter.Count(m.Content) + perMessage
	if m.Role == openai.ChatMessageRoleUser {
		n += ImageTokens * len(ImageNames(m.Content))
	}
	for _, c := range m.ToolCalls {
		n += counter.Count(c.Function.Name) + counter.Count(c.Function.Arguments) + perMessage
	}
	return n
}
