package cli_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/session"
	"github.com/ctxls/ctxls/session/backend"
)

// TestSessionsCompact: "ctxls chat --compact-at" compacts a turn past that
// share of the window ("off" never); "ctxls sessions compact" summarises
// every turn but the last, folding the previous summary in; "sessions show"
// keeps every original and marks where the model's view started; a bad
// --compact-at is a usage error.
func TestSessionsCompact(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"## Goal\nShip the importer."}}))
	env := chatEnv(dir, fake)
	st, err := backend.Open(context.Background(), dir, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sess, _ := st.Create(ctx, "Importer design")
	for i := 0; i < 400; i++ {
		m := session.Message{SessionID: sess.ID, Role: session.RoleUser, Content: fmt.Sprintf("question %d: how should batch %d resume?", i/2, i/2)}
		if i%2 == 1 {
			m.Role, m.Content = session.RoleAssistant, fmt.Sprintf("answer %d: checkpoint batch %d and retry it", i/2, i/2)
		}
		if err := st.AppendMessage(ctx, &m); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()

	// A turn past 1% of the window summarises every earlier turn first.
	fake.Enqueue(openaitest.Reply{Chunks: []string{"## Goal\nShip the importer."}}, openaitest.Reply{Chunks: []string{"the answer"}})
	out, errOut, code := run(t, env, "chat", "--session", sess.ID[:8], "--compact-at", "1%", "what next?")
	if code != 0 || !strings.Contains(out, "the answer") || !strings.Contains(errOut, "[earlier turns summarised: the first 400 messages]") {
		t.Fatalf("chat --compact-at 1%%: %d %q %q", code, out, errOut)
	}
	reqs := fake.Requests()
	if len(reqs) != 2 || reqs[0].Parsed.Stream || !strings.Contains(reqs[0].Parsed.Messages[1].Content, "[#1 user]\nquestion 0:") ||
		!strings.HasPrefix(reqs[1].Parsed.Messages[1].Content, "[earlier turns summarised: the first 400 messages]") {
		t.Fatalf("requests: %d", len(reqs))
	}
	fake.Enqueue(openaitest.Reply{Chunks: []string{"second answer"}})
	if out, errOut, code = run(t, env, "chat", "--session", sess.ID, "--compact-at", "off", "and then?"); code != 0 || strings.Contains(errOut, "summarised") {
		t.Fatalf("chat --compact-at off: %d %q %q", code, out, errOut)
	}

	// On demand: everything but the last turn, folding the summary in.
	fake.Enqueue(openaitest.Reply{Chunks: []string{"## Goal\nFolded."}})
	out, errOut, code = run(t, env, "sessions", "compact", sess.ID[:8])
	if code != 0 || !strings.HasPrefix(out, "[earlier turns summarised: the first 402 messages]") || !strings.Contains(out, "## Goal\nFolded.") {
		t.Fatalf("compact: %d %q %q", code, out, errOut)
	}
	reqs = fake.Requests()
	if len(reqs) != 4 || !strings.Contains(reqs[3].Parsed.Messages[1].Content, "<previous-summary>\n## Goal\nShip the importer.") {
		t.Fatalf("the on-demand summary does not fold the first: %d requests", len(reqs))
	}
	out, _, _ = run(t, env, "sessions", "show", sess.ID)
	if strings.Count(out, "\n[user ·") != 202 {
		t.Errorf("show lost originals: %d questions", strings.Count(out, "\n[user ·"))
	}
	checkInOrder(t, out, "answer 199: checkpoint", "[earlier turns summarised: the first 400 messages]", "## Goal\nShip the importer.", "what next?", "the answer",
		"[earlier turns summarised: the first 402 messages]", "## Goal\nFolded.", "and then?", "second answer")
	_, msgs := showJSON(t, env, sess.ID)
	if len(msgs) != 406 || msgs[401].SummaryOf == nil || msgs[405].SummaryOf == nil || msgs[405].SummaryOf.Last != 403 {
		t.Errorf("show --json: %d messages", len(msgs))
	}
	if _, errOut, code = run(t, env, "chat", "--session", sess.ID, "--compact-at", "sometimes", "hi"); code != 2 || !strings.Contains(errOut, "compactAt must be") {
		t.Errorf("--compact-at sometimes: %d %q", code, errOut)
	}
	if _, errOut, code = run(t, env, "sessions", "compact", "zzzzzz"); code == 0 {
		t.Errorf("compact of an unknown session: %q", errOut)
	}
}

// checkInOrder fails unless each of parts occurs in text after the one before.
func checkInOrder(t *testing.T, text string, parts ...string) {
	t.Helper()
	at := 0
	for _, p := range parts {
		i := strings.Index(text[at:], p)
		if i < 0 {
			t.Errorf("%q missing after offset %d", p, at)
			return
		}
		at += i + len(p)
	}
}
