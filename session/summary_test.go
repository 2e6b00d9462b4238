package session

import (
	"strings"
	"testing"
)

// TestInConversationOrder: summaries move to right after the last message
// they cover, in the order of their ranges; nothing else moves.
func TestInConversationOrder(t *testing.T) {
	msgs := []Message{
		{ID: 1}, {ID: 2}, {ID: 3}, {ID: 4},
		{ID: 5, Role: RoleSystem, SummaryOf: &Span{First: 1, Last: 2}},
		{ID: 6}, {ID: 7},
		{ID: 8, Role: RoleSystem, SummaryOf: &Span{First: 1, Last: 6}},
		{ID: 9},
	}
	var got []int64
	for _, m := range InConversationOrder(msgs) {
		got = append(got, m.ID)
	}
	want := []int64{1, 2, 5, 3, 4, 6, 8, 7, 9}
	if len(got) != len(want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("order %v, want %v", got, want)
		}
	}
	summary, rest := modelView(msgs)
	if summary.ID != 8 || len(rest) != 2 || rest[0].ID != 7 || rest[1].ID != 9 {
		t.Errorf("model view: %+v %+v", summary, rest)
	}
}

// checkOrder fails unless each of parts occurs in text after the one before.
func checkOrder(t *testing.T, what, text string, parts ...string) {
	t.Helper()
	at := 0
	for _, p := range parts {
		i := strings.Index(text[at:], p)
		if i < 0 {
			t.Errorf("%s: %q missing after offset %d:\n%s", what, p, at, text)
			return
		}
		at += i + len(p)
	}
}

// modelView is the rule Store.ModelHistory reads in SQL, over every
// message: it splits a session's messages (oldest first, as Messages returns
// them) into what the model is given: the newest summary, if any, and the
// messages after the range it covers, summaries left out. Without a summary
// rest is every message but summaries.
func modelView(msgs []Message) (summary *Message, rest []Message) {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].IsSummary() {
			summary = &msgs[i]
			break
		}
	}
	rest = make([]Message, 0, len(msgs))
	for _, m := range msgs {
		if m.IsSummary() || (summary != nil && m.ID <= summary.SummaryOf.Last) {
			continue
		}
		rest = append(rest, m)
	}
	return summary, rest
}
