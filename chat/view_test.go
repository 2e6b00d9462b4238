package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/prompts"
	"github.com/ctxls/ctxls/session"
)

// TestContextStaysWhereSent: a turn's block stays before its message in
// later turns, which send only what changed, so each turn's input begins
// with the whole of the previous one; a preview is exactly the next turn's
// input; a file removed from the context is named; and when superseded
// text outweighs the current text, the context is shown afresh.
func TestContextStaysWhereSent(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	root := t.TempDir()
	a, b := filepath.Join(root, "a.go"), filepath.Join(root, "b.go")
	os.WriteFile(a, []byte("package a\n"), 0o644)
	os.WriteFile(b, []byte(strings.Repeat("// b\n", 200)), 0o644)
	bufs := buffers{}
	e, st, _ := newEngine(t, bufs)
	ctx := context.Background()
	s, _ := st.Create(ctx, "named")
	st.UpdateContext(ctx, s.ID, "files", []string{a, b}, "", session.AddedByUser, nil)
	p := provider(t, fake, 64000)
	turn := func(q string) TurnSpec {
		return TurnSpec{SessionID: s.ID, Message: q, Roots: []string{root}, Provider: p}
	}
	ask := func(q string) openaitest.Request {
		t.Helper()
		fake.Enqueue(openaitest.Reply{Chunks: []string{"answer to " + q}})
		if _, err := e.Run(ctx, turn(q), &recorder{}); err != nil {
			t.Fatal(err)
		}
		reqs := fake.Requests()
		return reqs[len(reqs)-1]
	}
	prefix := func(prev, cur openaitest.Request) {
		t.Helper()
		x, _ := json.Marshal(prev.Parsed.Messages)
		y, _ := json.Marshal(cur.Parsed.Messages)
		x = x[:len(x)-1] // the array's closing bracket
		if !strings.HasPrefix(string(y), string(x)) {
			t.Errorf("%q does not begin with the previous turn's input", cur.Question())
		}
	}

	r1 := ask("one")
	if c := r1.TurnContext(); !strings.Contains(c, "package a") || !strings.Contains(c, "// b") {
		t.Fatalf("the first turn shows the files:\n%s", c)
	}
	// Nothing changed: the files are named, not repeated.
	pv, err := e.Preview(ctx, turn("two"))
	if err != nil {
		t.Fatal(err)
	}
	r2 := ask("two")
	prefix(r1, r2)
	if c := r2.TurnContext(); strings.Contains(c, "package a") || !strings.Contains(c, "Shown above and unchanged since") || strings.Contains(c, "## Session Context") {
		t.Errorf("a quiet turn repeats what the conversation holds:\n%s", c)
	}
	if !reflect.DeepEqual(pv.Messages, r2.Parsed.Messages) {
		t.Errorf("the preview is not the turn's input:\n%+v\n%+v", pv.Messages, r2.Parsed.Messages)
	}
	// An edit: the changed file alone goes, marked as changed.
	bufs[a] = "package a\n// edited\n"
	r3 := ask("three")
	prefix(r2, r3)
	if c := r3.TurnContext(); !strings.Contains(c, a+" (unsaved editor text) (changed since it was shown above") || strings.Contains(c, "// b\n") {
		t.Errorf("an edit sends the changed file alone:\n%s", c)
	}
	// A file removed from the context is named as no longer relevant.
	st.UpdateContext(ctx, s.ID, "files", []string{a}, "", session.AddedByUser, nil)
	r4 := ask("four")
	prefix(r3, r4)
	if c := r4.TurnContext(); !strings.Contains(c, "No longer relevant") || !strings.Contains(c, "- "+b) {
		t.Errorf("a removed file is not named:\n%s", c)
	}
	// Superseded text beyond the current text's (and minStale): afresh,
	// the history without its blocks.
	big := strings.Repeat("x := 1 // a long line of code\n", 200)
	var last openaitest.Request
	for i := range 4 {
		bufs[a] = fmt.Sprintf("package a\n// version %d\n%s", i, big)
		last = ask(fmt.Sprintf("edit %d", i))
	}
	blocks := 0
	for _, m := range last.Parsed.Messages {
		if strings.HasPrefix(m.Content, "<ctxls-context>") {
			blocks++
		}
	}
	if blocks >= 4 {
		t.Errorf("%d blocks: superseded text never shown afresh", blocks)
	}
	if c := last.TurnContext(); !strings.Contains(c, "// version 3") {
		t.Errorf("the current text is missing:\n%s", c)
	}
}

// TestHeldHistoryReadsOnlyWhatIsNew: a turn reads only the messages after
// those its view holds, and still gives the model every message, those
// another process (a second engine on the same store) added included, in
// order; a session's first turn after the other engine's compaction reads
// it whole.
func TestHeldHistoryReadsOnlyWhatIsNew(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	e1, st, _ := newEngine(t, nil)
	e2 := &Engine{Store: st, Log: e1.Log}
	ctx := context.Background()
	s, _ := st.Create(ctx, "named")
	p := provider(t, fake, 64000)
	var want []string
	for i := range 6 {
		e := e1
		if i%3 == 2 {
			e = e2 // another daemon's turn in the same session
		}
		q := fmt.Sprintf("question %d", i)
		// What an engine holding nothing would send (no relevant files:
		// no blocks either way).
		pv, err := (&Engine{Store: st, Log: e1.Log}).Preview(ctx, TurnSpec{SessionID: s.ID, Message: q, Provider: p})
		if err != nil {
			t.Fatal(err)
		}
		if i == 3 { // a tool round: the turn's messages go on after its answer
			fake.Enqueue(openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: "get_relevant_context", Arguments: `{}`}}})
		}
		fake.Enqueue(openaitest.Reply{Chunks: []string{"answer " + q}})
		if _, err := e.Run(ctx, TurnSpec{SessionID: s.ID, Message: q, Provider: p}, &recorder{}); err != nil {
			t.Fatal(err)
		}
		reqs := fake.Requests()
		first := reqs[len(reqs)-1] // the turn's first request
		if i == 3 {
			first = reqs[len(reqs)-2]
		}
		if !reflect.DeepEqual(pv.Messages, first.Parsed.Messages) {
			t.Errorf("turn %d: the input differs from one built from nothing held:\n%+v\n%+v", i, pv.Messages, first.Parsed.Messages)
		}
		var got []string
		for _, m := range reqs[len(reqs)-1].Parsed.Messages[1:] {
			if _, text := prompts.SplitContext(m.Content); m.Role == "user" || m.Role == "assistant" && text != "" {
				got = append(got, text)
			}
		}
		want = append(want, q)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("turn %d gave the model %q, want %q", i, got, want)
		}
		want = append(want, "answer "+q)
		if i >= 1 && e == e1 {
			if m := e1.viewFor(s.ID).mark(); m == nil || m.Through == 0 {
				t.Errorf("turn %d: the view holds no history", i)
			}
		}
	}
}

// TestViewsBoundedInBytes: past maxViewBytes of blocks in all, the least
// recently used sessions' views are dropped, not the one in use.
func TestViewsBoundedInBytes(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	e := &Engine{now: func() time.Time { return now }}
	tk := prompts.TokenizerFor("gpt-4o")
	big := prompts.WithContext(strings.Repeat("x", maxViewBytes/4-100), "q")
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		now = now.Add(time.Minute)
		e.viewFor(id).record(1, big, prompts.Input{}, false, func(int64) bool { return true }, tk)
	}
	now = now.Add(time.Minute)
	e.viewFor("e")
	if _, ok := e.views["a"]; ok || len(e.views) != 4 {
		t.Errorf("views kept: %d (a among them: %v)", len(e.views), ok)
	}
}
