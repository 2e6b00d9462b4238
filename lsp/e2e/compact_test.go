package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/sashabaranov/go-openai"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
	"github.com/ctxls/ctxls/prompts"
	"github.com/ctxls/ctxls/service"
	"github.com/ctxls/ctxls/session"
	"github.com/ctxls/ctxls/session/backend"
)

const lspSummary = "## Goal\nShip the resumable importer.\n\n## Next steps\n1. Write the checkpoints migration."

// longSession makes a session of n messages (questions and answers) in the
// store of dataDir, straight through the store, before a daemon starts.
func longSession(t *testing.T, dataDir string, n int) string {
	t.Helper()
	st, err := backend.Open(context.Background(), dataDir, "")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	sess, err := st.Create(ctx, "Importer design")
	if err != nil {
		t.Fatal(err)
	}
	ms := make([]*session.Message, n)
	for i := range ms {
		m := &session.Message{SessionID: sess.ID, Role: session.RoleUser, Content: fmt.Sprintf("question %d: how should batch %d resume after a crash?", i/2, i/2)}
		if i%2 == 1 {
			m.Role, m.Content = session.RoleAssistant, fmt.Sprintf("answer %d: keep a checkpoint row for batch %d and retry it three times", i/2, i/2)
		}
		ms[i] = m
	}
	if err := session.AppendAll(ctx, st, ms); err != nil {
		t.Fatal(err)
	}
	return sess.ID
}

// requestTokens counts a request's input roughly as the engine does.
func requestTokens(msgs []openai.ChatCompletionMessage) int {
	counter := prompts.TokenizerFor("test-model")
	n := 0
	for _, m := range msgs {
		n += counter.Count(m.Content) + 4
	}
	return n
}

// TestCompactionOverLSP (the built binary): a 2,000-message session is
// compacted by its next turn (ctxls/sessionUpdated with compactedThrough,
// the input holds the summary and recent turns within the budget, show and
// export keep every original with the marker), then compacted again on
// demand with ctxls.session.compact, folding the first summary in.
func TestCompactionOverLSP(t *testing.T) {
	parallel(t, loadTests)
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{lspSummary}}))
	dataDir := t.TempDir()
	id := longSession(t, dataDir, 2000)
	_, rootURI := workspace(t)
	s := binaryChat(t, fake, dataDir, rootURI, 16000, 1000)
	budget := 16000 - 1000

	var res api.ChatResult
	if err := s.Call("ctxls/chat", map[string]any{"sessionId": id, "message": "What is the next step?", "workDoneToken": "tok-c"}, &res); err != nil {
		t.Fatal(err)
	}
	if res.FinishReason != "stop" {
		t.Fatalf("turn: %+v", res)
	}
	var show api.ShowResult
	s.MustCommand(api.SessionShow, map[string]any{"sessionId": id}, &show)
	if len(show.Messages) != 2003 {
		t.Fatalf("%d messages after the turn", len(show.Messages))
	}
	sum := show.Messages[2001]
	if !(sum.SummaryOf != nil) || sum.Content != lspSummary || sum.SummaryOf.First != show.Messages[0].ID {
		t.Fatalf("the summary: %+v", sum)
	}
	for i, m := range show.Messages[:2000] {
		if (m.SummaryOf != nil) || !strings.Contains(m.Content, fmt.Sprintf(" %d: ", i/2)) {
			t.Fatalf("original %d: %+v", i, m)
		}
	}
	up := s.WaitFor("sessionUpdated with compactedThrough", func(m *lsptest.Message) bool {
		return m.Method == api.SessionUpdated && strings.Contains(string(m.Params), "compactedThrough")
	})
	var params api.SessionUpdatedParams
	json.Unmarshal(up.Params, &params)
	if params.SessionID != id || params.CompactedThrough != sum.SummaryOf.Last || params.Title != "Importer design" {
		t.Errorf("sessionUpdated: %s", up.Params)
	}
	reported := false
	for _, m := range s.Notifications("$/progress") {
		reported = reported || strings.Contains(string(m.Params), `"tok-c"`) && strings.Contains(string(m.Params), "earlier turns summarised ("+session.FirstQuestions(sum.SummaryOf.Questions)+")")
	}
	if !reported {
		t.Error("the progress does not report the compaction")
	}

	reqs := fake.Requests()
	turnReq := reqs[len(reqs)-1].Parsed.Messages
	want := *sum.SummaryOf
	want.Covered = int(want.Last - want.First + 1) // every message of the range, none a summary
	marker := session.SummaryMarker(session.Span(want))
	if !strings.HasPrefix(turnReq[1].Content, marker) || !strings.Contains(turnReq[1].Content, lspSummary) {
		t.Fatalf("the input's second message is not the summary: %.200s", turnReq[1].Content)
	}
	if turnReq[2].Role != "user" || reqs[len(reqs)-1].Question() != "What is the next step?" {
		t.Errorf("the recent turns: %q … %q", turnReq[2].Content, turnReq[len(turnReq)-1].Content)
	}
	if n := requestTokens(turnReq); n > budget {
		t.Errorf("the input takes %d tokens, over %d", n, budget)
	}

	var exp api.ExportResult
	s.MustCommand(api.SessionExport, map[string]any{"sessionId": id}, &exp)
	if strings.Count(exp.Content, "\n## user ·") != 1001 || !strings.Contains(exp.Content, marker) {
		t.Errorf("export: %d questions, marker %v", strings.Count(exp.Content, "\n## user ·"), strings.Contains(exp.Content, marker))
	}

	// On demand: everything but the last turn (the question and answer
	// above), folding the first summary.
	before := len(fake.Requests())
	fake.Enqueue(openaitest.Reply{Chunks: []string{"## Goal\nFolded."}})
	var c api.SessionCompactResult
	s.MustCommand(api.SessionCompact, map[string]any{"sessionId": id}, &c)
	if c.V != 1 || c.Summary.Content != "## Goal\nFolded." || c.Summary.SummaryOf.First != sum.SummaryOf.First || c.CompactedThrough != show.Messages[1999].ID || c.Covered != 2000 {
		t.Errorf("compact: %+v %+v", c, c.Summary.SummaryOf)
	}
	reqs = fake.Requests()
	if len(reqs) != before+1 || !strings.Contains(reqs[before].Parsed.Messages[1].Content, "<previous-summary>\n"+lspSummary) {
		t.Errorf("the on-demand summary does not fold the first: %d requests", len(reqs)-before)
	}
	s.WaitFor("sessionUpdated for the on-demand compaction", func(m *lsptest.Message) bool {
		return m.Method == api.SessionUpdated && strings.Contains(string(m.Params), fmt.Sprintf(`"compactedThrough":%d`, c.CompactedThrough))
	})
	// Only the last turn is left: nothing more to compact.
	err := s.Command(api.SessionCompact, map[string]any{"sessionId": id}, nil)
	var rpcErr *lsptest.RPCError
	if !asRPC(err, &rpcErr) || rpcErr.Code != -32602 || !strings.Contains(rpcErr.Message, "nothing to compact") {
		t.Errorf("compact again: %v", err)
	}
}

// TestCompactAtSetting: compactAt "off" (initializationOptions) leaves the
// oldest turns out instead of summarising; a bad value fails initialize,
// and in settings it is ignored with a warning.
func TestCompactAtSetting(t *testing.T) {
	parallel(t, waitTests)
	fake := openaitest.New(t)
	dataDir := t.TempDir()
	id := longSession(t, dataDir, 400)
	id2 := longSession(t, dataDir, 400)
	_, rootURI := workspace(t)
	prov := map[string]any{"baseURL": fake.URL, "model": "test-model", "contextWindow": 4000, "maxOutputTokens": 500}

	bad := lsptest.InProcess(t, service.Config{DataDir: t.TempDir(), Version: "test"})
	err := bad.Call("initialize", map[string]any{"capabilities": map[string]any{}, "initializationOptions": map[string]any{"compactAt": 0}}, nil)
	var rpcErr *lsptest.RPCError
	if !asRPC(err, &rpcErr) || rpcErr.Code != -32602 || !strings.Contains(rpcErr.Message, "initializationOptions.compactAt must be") {
		t.Errorf("compactAt 0: %v", err)
	}

	s := lsptest.InProcess(t, service.Config{DataDir: dataDir, Version: "test"})
	s.Initialize(lsptest.InitOptions{RootURI: rootURI, InitOptions: map[string]any{"provider": prov, "compactAt": "off"}})
	s.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"ctxls": map[string]any{"compactAt": "sometimes"}}})
	s.WaitFor("a warning", func(m *lsptest.Message) bool {
		return m.Method == "window/showMessage" && strings.Contains(string(m.Params), "compactAt must be")
	})
	var res api.ChatResult
	if err := s.Call("ctxls/chat", map[string]any{"sessionId": id, "message": "next?"}, &res); err != nil {
		t.Fatal(err)
	}
	reqs := fake.Requests()
	if len(reqs) != 1 || !strings.Contains(reqs[0].ModelContext(), "earlier messages not shown]") {
		t.Fatalf("compactAt off: %d requests", len(reqs))
	}

	// Settings turn it back on: the next turn compacts.
	s.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"ctxls": map[string]any{"compactAt": 50}}})
	if err := s.Call("ctxls/chat", map[string]any{"sessionId": id, "message": "and now?"}, &res); err != nil {
		t.Fatal(err)
	}
	reqs = fake.Requests()
	if len(reqs) < 3 || reqs[1].SystemPrompt() != prompts.SummarySystem(437*3/4) {
		t.Errorf("compactAt 50 from settings: %d requests, second %.80q", len(reqs), reqs[1].ModelContext())
	}

	// Off again; settings without compactAt, or with null, keep it off;
	// "" (an editor's empty setting) puts the default (80) back.
	for _, ctxls := range []map[string]any{{"compactAt": "off"}, {"viewIdleMs": 500}, {"compactAt": nil}} {
		s.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"ctxls": ctxls}})
	}
	before := len(fake.Requests())
	if err := s.Call("ctxls/chat", map[string]any{"sessionId": id2, "message": "still off?"}, &res); err != nil {
		t.Fatal(err)
	}
	if reqs = fake.Requests(); len(reqs) != before+1 || !strings.Contains(reqs[before].ModelContext(), "earlier messages not shown]") {
		t.Fatalf("compactAt off, then settings without it: %d requests, want 1 (no summary)", len(reqs)-before)
	}
	s.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"ctxls": map[string]any{"compactAt": ""}}})
	before = len(reqs)
	if err := s.Call("ctxls/chat", map[string]any{"sessionId": id2, "message": "and with the default?"}, &res); err != nil {
		t.Fatal(err)
	}
	if reqs = fake.Requests(); len(reqs) < before+2 || !strings.HasPrefix(reqs[before].ModelContext(), "You are compacting") {
		t.Errorf(`compactAt "" from settings: %d requests, the first %.80q; want a summary request`, len(reqs)-before, reqs[before].ModelContext())
	}
}
