package session

import (
	"cmp"
	"fmt"
	"slices"
)

// Compaction keeps every message: a summary of earlier turns is one more
// message (role "system", SummaryOf set) stored after the turn's user
// message, covering a range of ids. These are the rules every reader of a
// session's messages shares: what the model sees (Store.ModelHistory,
// ViewStart) and where a summary is shown among the originals
// (InConversationOrder).

// ViewStart takes what a store's query for a session's newest summary
// found (none or one) and returns that summary and the id after which the
// model's messages start (Store.ModelHistory: the newest summary, then the
// messages after the range it covers, summaries left out).
func ViewStart(newest []Message) (summary *Message, after int64) {
	if len(newest) == 0 {
		return nil, 0
	}
	return &newest[0], newest[0].SummaryOf.Last
}

// SummaryMarker is the line that marks a summary among the originals (in
// show, export and history.md) and opens it in the model's input: where
// the model's view of the session starts. A summary covers the session
// from its first message (each folds the one before), so it counts the
// messages as the user does, within the session (summaries left out),
// not by the store's ids.
func SummaryMarker(sp Span) string {
	return fmt.Sprintf("[earlier turns summarised: the first %d messages]", sp.Covered)
}

// InConversationOrder returns msgs with each summary moved to right after
// the last message it covers: where the model's view started when it was
// made (it is stored later, after the user message of the turn that made
// it). Everything else keeps its order.
func InConversationOrder(msgs []Message) []Message {
	out := make([]Message, 0, len(msgs))
	var summaries []Message
	for _, m := range msgs {
		if m.IsSummary() {
			summaries = append(summaries, m)
		}
	}
	if len(summaries) == 0 {
		return append(out, msgs...)
	}
	slices.SortStableFunc(summaries, func(a, b Message) int { return cmp.Compare(a.SummaryOf.Last, b.SummaryOf.Last) })
	next := 0 // the next summary to place
	for _, m := range msgs {
		if m.IsSummary() {
			continue
		}
		for next < len(summaries) && summaries[next].SummaryOf.Last < m.ID {
			out = append(out, summaries[next])
			next++
		}
		out = append(out, m)
	}
	return append(out, summaries[next:]...)
}
