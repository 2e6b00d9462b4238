package storetest

import (
	"os"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/session"
)

// readString returns a file's content, failing the test when it cannot.
func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
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
func modelView(msgs []session.Message) (summary *session.Message, rest []session.Message) {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].IsSummary() {
			summary = &msgs[i]
			break
		}
	}
	rest = make([]session.Message, 0, len(msgs))
	for _, m := range msgs {
		if m.IsSummary() || (summary != nil && m.ID <= summary.SummaryOf.Last) {
			continue
		}
		rest = append(rest, m)
	}
	return summary, rest
}
