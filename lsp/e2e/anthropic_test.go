package e2e_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat/anthropictest"
	"github.com/ctxls/ctxls/lsp/lsptest"
	"github.com/ctxls/ctxls/prompts"
	"github.com/ctxls/ctxls/session"
)

// The chat tests of the OpenAI path, over the built binary and real
// stdio, with the provider speaking Anthropic's Messages API (the fake in
// chat/anthropictest).

const antKey = "sk-ant-test-not-real-0123456789"

// anthropicProvider is initializationOptions.provider for the fake.
func anthropicProvider(fake *anthropictest.Server, window, output int) map[string]any {
	return map[string]any{"api": "anthropic", "baseURL": fake.URL, "model": "test-model", "contextWindow": window, "maxOutputTokens": output}
}

// startAnthropic starts the built binary on dataDir (a new one when "")
// with the fake as its provider and a workspace folder; the key is in
// ANTHROPIC_API_KEY, where an Anthropic provider reads it by default.
func startAnthropic(t *testing.T, fake *anthropictest.Server, dataDir string, window, output int) (*lsptest.Server, string, string) {
	t.Helper()
	if dataDir == "" {
		dataDir = t.TempDir()
	}
	root, rootURI := workspace(t)
	s := lsptest.Binary(t, []string{"ANTHROPIC_API_KEY=" + antKey, "OPENAI_API_KEY=", "OPENAI_BASE_URL=", session.SoftLimitEnv + "="}, "serve", "--data-dir", dataDir)
	s.Initialize(lsptest.InitOptions{RootURI: rootURI, WorkDoneProgress: true, InitOptions: map[string]any{"provider": anthropicProvider(fake, window, output)}})
	return s, root, dataDir
}

// TestAnthropicChatStreamsTitlesAndCaches: a streamed answer with its
// deltas and usage, the model's title (a request that does not stream),
// and a second turn whose request carries the cache breakpoints (the
// system prompt, the first question, its own end) and reads the first
// turn's prefix from the cache: the fake's cached tokens reach the result,
// the progress report and the stored answer.
func TestAnthropicChatStreamsTitlesAndCaches(t *testing.T) {
	parallel(t, waitTests)
	fake := anthropictest.New(t, anthropictest.WithAPIKey(antKey))
	fake.Enqueue(anthropictest.Reply{Chunks: []string{"The ", "redirect ", "loops because ", "of 😀 middleware."}},
		anthropictest.Reply{Chunks: []string{"Login redirect loop fix"}})
	s, _, _ := startAnthropic(t, fake, "", 16000, 1000)

	var res api.ChatResult
	if err := s.Call("ctxls/chat", map[string]any{"message": "Why does login redirect twice?", "workDoneToken": "tok-1"}, &res); err != nil {
		t.Fatal(err)
	}
	want := "The redirect loops because of 😀 middleware."
	first := fake.Requests()[0]
	if res.Text != want || res.FinishReason != "stop" || res.Usage.CompletionTokens != 4 ||
		res.Usage.PromptTokens != first.Usage.InputTokens+first.Usage.CacheCreationInputTokens || res.Usage.CachedTokens != 0 {
		t.Errorf("result %+v (the fake reported %+v)", res, first.Usage)
	}
	deltas, kinds, end := progressFor(s, `"tok-1"`)
	if deltas != want || kinds[0] != "begin" || end != "done" {
		t.Errorf("progress: deltas %q kinds %v end %q", deltas, kinds, end)
	}
	if !first.Parsed.Stream || first.Question() != "Why does login redirect twice?" || first.Parsed.MaxTokens != 1000 || first.Header.Get("x-api-key") != antKey {
		t.Errorf("the turn's request: %.300s", first.Body)
	}
	waitTitle(t, s, "Login redirect loop fix", "model")
	title := fake.WaitRequests(2, 5*time.Second)[1]
	if title.Parsed.Stream || !strings.Contains(title.Parsed.Messages[0].Content.Text(), want) {
		t.Errorf("the title request: %.300s", title.Body)
	}

	fake.Enqueue(anthropictest.Reply{Chunks: []string{"Clear the cookie."}})
	if err := s.Call("ctxls/chat", map[string]any{"sessionId": res.SessionID, "message": "and the cookie?", "workDoneToken": "tok-2"}, &res); err != nil {
		t.Fatal(err)
	}
	second := fake.Requests()[2]
	bps := second.Breakpoints()
	if len(bps) != 3 || bps[0].In != "system" || bps[1] != (anthropictest.Breakpoint{In: "messages", Message: 0, Index: len(second.Parsed.Messages[0].Content) - 1}) ||
		bps[2].Message != len(second.Parsed.Messages)-1 {
		t.Errorf("breakpoints %+v in %s", bps, second.Body)
	}
	if len(second.Parsed.Messages) != 3 || second.Parsed.Messages[1].Content.Text() != want {
		t.Errorf("history: %s", second.Body)
	}
	cached := second.Usage.CacheReadInputTokens
	if cached == 0 || res.Usage.CachedTokens != cached || res.Usage.PromptTokens != second.Usage.InputTokens+second.Usage.CacheCreationInputTokens+cached {
		t.Errorf("second turn: usage %+v, the fake reported %+v", res.Usage, second.Usage)
	}
	if !strings.Contains(progressMessagesRaw(s), fmt.Sprintf(`"cachedTokens":%d`, cached)) {
		t.Errorf("the progress does not report the cached tokens")
	}
	var show api.ShowResult
	s.MustCommand(api.SessionShow, map[string]any{"sessionId": res.SessionID}, &show)
	last := show.Messages[len(show.Messages)-1]
	if len(show.Messages) != 4 || last.Content != "Clear the cookie." || last.Usage == nil || last.Usage.CachedTokens != cached {
		t.Errorf("stored: %+v", show.Messages)
	}
	if strings.Contains(s.Stderr(), antKey) {
		t.Error("the key is in the daemon's log")
	}
}

// TestAnthropicChatToolRoundTrip: the model reads a session file and a
// workspace file with read_file; the results go back as tool_result blocks
// of one user message, and the calls and results are stored.
func TestAnthropicChatToolRoundTrip(t *testing.T) {
	parallel(t, waitTests)
	fake := anthropictest.New(t, anthropictest.WithDefault(anthropictest.Reply{Chunks: []string{"A title"}}))
	s, root, _ := startAnthropic(t, fake, "", 16000, 1000)
	s.MustCommand(api.FilesAdd, map[string]any{"name": "data.csv", "contentBase64": "YSxiCjEsMgo="}, nil)
	os.WriteFile(filepath.Join(root, "main.go"), []byte("package main // on disk\n"), 0o644)
	fake.Enqueue(
		anthropictest.Reply{Chunks: []string{"Reading."}, ToolCalls: []anthropictest.ToolCall{
			{ID: "toolu_a", Name: "read_file", Arguments: `{"path":"sources/data.csv"}`},
			{ID: "toolu_b", Name: "read_file", Arguments: `{"path":"main.go"}`},
		}},
		anthropictest.Reply{Chunks: []string{"Both read."}},
	)
	var res api.ChatResult
	s.MustCommand(api.Chat, map[string]any{"message": "read the data and main.go"}, &res)
	if res.Text != "Reading.Both read." || res.FinishReason != "stop" {
		t.Fatalf("result %+v", res)
	}
	reqs := fake.WaitRequests(2, 5*time.Second)
	if len(reqs[0].Parsed.Tools) < 5 || !strings.Contains(string(reqs[0].Parsed.Tools[2].InputSchema), `"path"`) {
		t.Errorf("tools offered: %+v", reqs[0].Parsed.Tools)
	}
	round := reqs[1]
	msgs := round.Parsed.Messages
	results := round.ToolResults()
	if len(msgs) != 3 || msgs[1].Role != "assistant" || len(msgs[1].Content) != 3 || msgs[1].Content[1].Type != "tool_use" ||
		len(msgs[2].Content) != 2 || results["toolu_a"] != "a,b\n1,2\n" || !strings.Contains(results["toolu_b"], "package main // on disk") {
		t.Errorf("the tool round: %s", round.Body)
	}
	var show api.ShowResult
	s.MustCommand(api.SessionShow, map[string]any{"sessionId": res.SessionID}, &show)
	tools := 0
	for _, m := range show.Messages {
		if m.Role == api.RoleTool {
			tools++
		}
	}
	if tools != 2 || !strings.Contains(string(show.Messages[1].ToolCalls), "toolu_a") {
		t.Errorf("stored: %+v", show.Messages)
	}
	// The models, from GET /v1/models.
	var models api.ModelsListResult
	s.MustCommand(api.ModelsList, map[string]any{}, &models)
	if len(models.Models) != 1 || models.Models[0] != "test-model" || models.Current != "test-model" {
		t.Errorf("models: %+v", models)
	}
}

// TestAnthropicChatCancel: $/cancelRequest ends the turn at once: the fake
// sees its request's context end, the partial answer is kept interrupted,
// and the session's next turn works.
func TestAnthropicChatCancel(t *testing.T) {
	parallel(t, waitTests)
	fake := anthropictest.New(t, anthropictest.WithDefault(anthropictest.Reply{Chunks: []string{"A title"}}))
	fake.Enqueue(anthropictest.Reply{Chunks: []string{"partial ", "never"}, Fault: anthropictest.FaultStall, FaultAfter: 1})
	s, _, _ := startAnthropic(t, fake, "", 16000, 1000)
	wait := s.Send(77, "ctxls/chat", map[string]any{"message": "long question", "workDoneToken": "tok-c"})
	s.WaitFor("first delta", func(m *lsptest.Message) bool {
		return m.Method == "$/progress" && strings.Contains(string(m.Params), `"delta":"partial "`)
	})
	cancelAt := time.Now()
	s.Notify("$/cancelRequest", map[string]any{"id": 77})
	if m := wait(); m.Error == nil || m.Error.Code != -32800 {
		t.Fatalf("cancelled turn: %+v", m)
	}
	if _, _, end := progressFor(s, `"tok-c"`); end != "cancelled" {
		t.Errorf("progress end %q", end)
	}
	if r := fake.WaitCancelled(0, 2*time.Second); r.CancelledAt.Sub(cancelAt) > time.Second {
		t.Errorf("the upstream stream ended %v after the cancel", r.CancelledAt.Sub(cancelAt))
	}
	var list api.SessionListResult
	s.MustCommand(api.SessionList, map[string]any{}, &list)
	var show api.ShowResult
	s.MustCommand(api.SessionShow, map[string]any{"sessionId": list.Sessions[0].ID}, &show)
	if len(show.Messages) != 2 || show.Messages[1].Content != "partial " || show.Messages[1].Status != api.StatusCancelled {
		t.Errorf("kept partial answer: %+v", show.Messages)
	}
	fake.Enqueue(anthropictest.Reply{Chunks: []string{"fine now"}})
	var res api.ChatResult
	if err := s.Call("ctxls/chat", map[string]any{"message": "again"}, &res); err != nil || res.Text != "fine now" {
		t.Errorf("next turn: %+v %v", res, err)
	}
	// The interrupted answer is history, marked as cut off: the fake
	// accepted the request.
	if r := fake.LastStreamed(); len(r.Parsed.Messages) != 3 || r.Parsed.Messages[1].Content.Text() != "partial "+prompts.CutOffNote {
		t.Errorf("the next request: %s", r.Body)
	}
}

// TestAnthropicSIGKILLMidStream kills the daemon while an Anthropic answer
// streams: after a restart the question and the checkpointed partial
// answer are there, and the next turn works.
func TestAnthropicSIGKILLMidStream(t *testing.T) {
	parallel(t, waitTests)
	fake := anthropictest.New(t, anthropictest.WithDefault(anthropictest.Reply{Chunks: []string{"A title"}}))
	var chunks []string
	for i := range 40 {
		chunks = append(chunks, "w"+string(rune('a'+i%26))+" ")
	}
	fake.Enqueue(anthropictest.Reply{Chunks: chunks, Delay: 50 * time.Millisecond})
	s, _, dataDir := startAnthropic(t, fake, "", 16000, 1000)
	var created api.SessionResult
	s.MustCommand(api.SessionNew, map[string]any{}, &created)
	s.Send(1000, "ctxls/chat", map[string]any{"message": "stream a long answer", "workDoneToken": "k"})
	deltas := 0
	s.WaitFor("20 deltas", func(m *lsptest.Message) bool {
		if m.Method == "$/progress" && strings.Contains(string(m.Params), `"delta"`) {
			deltas++
		}
		return deltas >= 20
	})
	s.Kill()
	s.Exit()

	s2, _, _ := startAnthropic(t, fake, dataDir, 16000, 1000)
	var show api.ShowResult
	s2.MustCommand(api.SessionShow, map[string]any{"sessionId": created.Session.ID}, &show)
	if len(show.Messages) != 2 || show.Messages[0].Content != "stream a long answer" {
		t.Fatalf("messages after the kill: %+v", show.Messages)
	}
	partial := show.Messages[1].Content
	if !strings.HasPrefix(strings.Join(chunks, ""), partial) || len(partial) < 5*3 {
		t.Errorf("checkpointed partial answer %q", partial)
	}
	fake.Enqueue(anthropictest.Reply{Chunks: []string{"back"}})
	var res api.ChatResult
	s2.MustCommand(api.Chat, map[string]any{"sessionId": created.Session.ID, "message": "again"}, &res)
	if res.Text != "back" {
		t.Errorf("next turn %+v", res)
	}
	s2.MustCommand(api.SessionShow, map[string]any{"sessionId": created.Session.ID}, &show)
	if show.Messages[1].Status != api.StatusInterrupted {
		t.Errorf("the killed answer ends interrupted, got %s", show.Messages[1].Status)
	}
}

// TestAnthropicCompaction: a long session is compacted by its next turn
// (summary requests that do not stream, ctxls/sessionUpdated with
// compactedThrough), the turn's request carries the summary as a second
// system block, and ctxls.session.compact works on demand.
func TestAnthropicCompaction(t *testing.T) {
	parallel(t, loadTests)
	fake := anthropictest.New(t, anthropictest.WithDefault(anthropictest.Reply{Chunks: []string{lspSummary}}))
	dataDir := t.TempDir()
	id := longSession(t, dataDir, 600)
	s, _, _ := startAnthropic(t, fake, dataDir, 16000, 1000)
	var res api.ChatResult
	if err := s.Call("ctxls/chat", map[string]any{"sessionId": id, "message": "What is the next step?", "workDoneToken": "tok-c"}, &res); err != nil || res.FinishReason != "stop" {
		t.Fatalf("turn: %+v %v", res, err)
	}
	up := s.WaitFor("sessionUpdated with compactedThrough", func(m *lsptest.Message) bool {
		return m.Method == api.SessionUpdated && strings.Contains(string(m.Params), "compactedThrough")
	})
	var params api.SessionUpdatedParams
	json.Unmarshal(up.Params, &params)
	reqs := fake.Requests()
	turn := reqs[len(reqs)-1]
	summaries := 0
	for _, r := range reqs[:len(reqs)-1] {
		if !r.Parsed.Stream && strings.HasPrefix(r.SystemPrompt(), "You are compacting") {
			summaries++
		}
	}
	if summaries == 0 || !turn.Parsed.Stream || len(turn.Parsed.System) != 2 || !strings.Contains(turn.Parsed.System[1].Text, lspSummary) ||
		params.CompactedThrough == 0 || turn.Question() != "What is the next step?" {
		t.Fatalf("%d summary requests; the turn's system blocks: %.300s", summaries, turn.Body)
	}
	if bps := turn.Breakpoints(); len(bps) == 0 || bps[0] != (anthropictest.Breakpoint{In: "system", Index: 1}) {
		t.Errorf("breakpoints %+v", bps)
	}
	fake.Enqueue(anthropictest.Reply{Chunks: []string{"## Goal\nFolded."}})
	var c api.SessionCompactResult
	s.MustCommand(api.SessionCompact, map[string]any{"sessionId": id}, &c)
	if c.Summary.Content != "## Goal\nFolded." || c.CompactedThrough <= params.CompactedThrough {
		t.Errorf("compact: %+v", c)
	}
}

// TestAnthropicChatFailures: a 429 with Retry-After is retried after the
// time it says; a refused key is described as for OpenAI, naming
// ANTHROPIC_API_KEY, never the key, even when the provider echoes it.
func TestAnthropicChatFailures(t *testing.T) {
	parallel(t, waitTests)
	fake := anthropictest.New(t, anthropictest.WithDefault(anthropictest.Reply{Chunks: []string{"A title"}}))
	fake.Enqueue(anthropictest.Reply{Status: 429, ErrorMessage: "slow down", RetryAfter: "1"}, anthropictest.Reply{Chunks: []string{"ok after retry"}})
	s, _, _ := startAnthropic(t, fake, "", 16000, 1000)
	// Titled by the user: no title request in the background takes a reply
	// meant for a turn.
	s.MustCommand(api.SessionNew, map[string]any{"title": "failures"}, nil)
	var res api.ChatResult
	start := time.Now()
	if err := s.Call("ctxls/chat", map[string]any{"message": "q", "workDoneToken": "t1"}, &res); err != nil || res.Text != "ok after retry" {
		t.Fatalf("%+v %v", res, err)
	}
	if d := time.Since(start); d < 900*time.Millisecond {
		t.Errorf("Retry-After not honoured: retried after %v", d)
	}
	if !strings.Contains(progressMessagesRaw(s), "the provider is busy; retrying in 1s") {
		t.Errorf("the retry is not reported: %s", progressMessagesRaw(s))
	}

	fake.Enqueue(anthropictest.Reply{Status: 401, ErrorType: "authentication_error", ErrorMessage: "invalid x-api-key " + antKey})
	if err := s.Call("ctxls/chat", map[string]any{"message": "again", "workDoneToken": "t2"}, &res); err != nil {
		t.Fatalf("want a result with finishReason error, got %v", err)
	}
	want := fmt.Sprintf("the provider at %s refused the API key (HTTP 401): check ANTHROPIC_API_KEY (invalid x-api-key [API key])", fake.URL)
	_, _, end := progressFor(s, `"t2"`)
	if res.FinishReason != "error" || end != "error: "+want {
		t.Errorf("result %+v, progress end %q, want %q", res, end, want)
	}
	msg := s.WaitNotification("window/showMessage", 1)
	if !strings.Contains(string(msg.Params), "ANTHROPIC_API_KEY") || strings.Contains(string(msg.Params), antKey) {
		t.Errorf("showMessage %s", msg.Params)
	}
	var show api.ShowResult
	s.MustCommand(api.SessionShow, map[string]any{"sessionId": res.SessionID}, &show)
	for _, m := range show.Messages {
		if strings.Contains(m.Content, antKey) {
			t.Errorf("the key was stored: %+v", m)
		}
	}
	if strings.Contains(s.Stderr(), antKey) {
		t.Error("the key is in the daemon's log")
	}
}
