package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat/anthropictest"
	"github.com/ctxls/ctxls/prompts"
	"github.com/ctxls/ctxls/session"
)

const anthropicKey = "sk-ant-secret-do-not-log"

// anthropicProvider is the fake Anthropic server as a resolved provider.
func anthropicProvider(t *testing.T, fake *anthropictest.Server, window int) Resolved {
	t.Helper()
	r, err := Resolve(Provider{API: APIAnthropic, BaseURL: fake.URL, Model: "test-model", ContextWindow: window, MaxOutputTokens: 100}, func(k string) string {
		if k == "ANTHROPIC_API_KEY" {
			return anthropicKey
		}
		return ""
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestResolveAnthropic(t *testing.T) {
	t.Parallel()
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	r, err := Resolve(Provider{API: APIAnthropic}, env(map[string]string{"ANTHROPIC_API_KEY": "k", "OPENAI_BASE_URL": "http://openai.local/v1"}), nil)
	if err != nil || r.API != APIAnthropic || r.BaseURL != AnthropicBaseURL || r.Model != DefaultAnthropicModel || r.APIKey() != "k" || r.KeyEnv() != "ANTHROPIC_API_KEY" {
		t.Errorf("api anthropic: %+v %v", r, err)
	}
	// Inferred from the host; the key variable follows.
	r, err = Resolve(Provider{BaseURL: "https://api.anthropic.com/", Model: "m"}, env(map[string]string{"ANTHROPIC_API_KEY": "k"}), nil)
	if err != nil || r.API != APIAnthropic || r.BaseURL != AnthropicBaseURL || r.APIKey() != "k" {
		t.Errorf("inferred: %+v %v", r, err)
	}
	if _, err := Resolve(Provider{API: APIAnthropic}, env(map[string]string{"OPENAI_API_KEY": "k"}), nil); err == nil || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Errorf("no Anthropic key: %v", err)
	}
	r, err = Resolve(Provider{API: APIAnthropic, APIKeyEnv: "MY_KEY"}, env(map[string]string{"MY_KEY": "mine"}), nil)
	if err != nil || r.APIKey() != "mine" || r.KeyEnv() != "MY_KEY" {
		t.Errorf("apiKeyEnv: %+v %v", r, err)
	}
	// A local server speaking Anthropic's API (Ollama): a model, no key.
	r, err = Resolve(Provider{API: APIAnthropic, BaseURL: "http://127.0.0.1:11434", Model: "qwen3"}, env(nil), nil)
	if err != nil || r.APIKey() != "" {
		t.Errorf("local: %+v %v", r, err)
	}
	if _, err := Resolve(Provider{API: APIAnthropic, BaseURL: "http://127.0.0.1:11434"}, env(nil), nil); err == nil || !strings.Contains(err.Error(), "no model is configured") {
		t.Errorf("local without a model: %v", err)
	}
	// Everything else stays OpenAI's.
	r, err = Resolve(Provider{}, env(map[string]string{"OPENAI_API_KEY": "k"}), nil)
	if err != nil || r.API != APIOpenAI || r.KeyEnv() != "OPENAI_API_KEY" {
		t.Errorf("default: %+v %v", r, err)
	}
	if _, err := Resolve(Provider{API: "gemini"}, env(nil), nil); err == nil || !strings.Contains(err.Error(), `"anthropic"`) {
		t.Errorf("unknown api: %v", err)
	}
	if _, err := api.ParseProvider([]byte(`{"api":"antropic"}`)); err == nil {
		t.Error("a misspelt api accepted")
	}
	if p, err := api.ParseProvider([]byte(`{"api":"anthropic"}`)); err != nil || p.API != APIAnthropic || (api.Provider{}).Merge(p).API != APIAnthropic {
		t.Errorf("api setting: %+v %v", p, err)
	}
}

// TestAnthropicParams: the engine's input becomes a Messages request:
// the leading system messages the system parameter, tool calls tool_use
// blocks, consecutive tool results one user message, a later system
// message a note in a user message, the tools with their schemas; the
// fake accepts it (roles alternate, every tool_use answered).
func TestAnthropicParams(t *testing.T) {
	t.Parallel()
	calls := []openai.ToolCall{
		{ID: "c1", Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: "read_file", Arguments: `{"path":"a.go"}`}},
		{ID: "c2", Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: "get_relevant_context", Arguments: ``}},
	}
	msgs := []openai.ChatCompletionMessage{
		{Role: "system", Content: "the system prompt"},
		{Role: "system", Content: "[earlier turns summarised]"},
		{Role: "user", Content: "first question"},
		{Role: "assistant", Content: "let me look", ToolCalls: calls},
		{Role: "tool", ToolCallID: "c1", Content: "package a"},
		{Role: "tool", ToolCallID: "c2", Content: " \n"},
		{Role: "assistant", Content: "done"},
		{Role: "system", Content: "the workspace changed"},
		{Role: "user", Content: "second question"},
	}
	params := anthropicParams("m", 321, msgs, toolDefs)
	cacheBreakpoints(params.System, params.Tools, params.Messages)
	body, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	var got anthropictest.MessagesRequest
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if got.Model != "m" || got.MaxTokens != 321 || len(got.System) != 2 || got.System[1].Text != "[earlier turns summarised]" {
		t.Errorf("model, max_tokens, system: %s", body)
	}
	roles := []string{}
	for _, m := range got.Messages {
		roles = append(roles, m.Role)
	}
	if !slices.Equal(roles, []string{"user", "assistant", "user", "assistant", "user"}) {
		t.Fatalf("roles %v: %s", roles, body)
	}
	use := got.Messages[1].Content
	if len(use) != 3 || use[1].Type != "tool_use" || string(use[1].Input) != `{"path":"a.go"}` || string(use[2].Input) != `{}` || use[2].Name != "get_relevant_context" {
		t.Errorf("tool_use blocks: %+v", use)
	}
	results := got.Messages[2].Content
	if len(results) != 2 || results[0].ToolUseID != "c1" || results[0].Content.Text() != "package a" || results[1].ToolUseID != "c2" || len(results[1].Content) != 0 {
		t.Errorf("tool results in one user message: %+v", results)
	}
	last := got.Messages[4].Content
	if len(last) != 2 || !strings.Contains(last[0].Text, "the workspace changed") || last[1].Text != "second question" {
		t.Errorf("a later system message is a note before the question: %+v", last)
	}
	if len(got.Tools) != len(toolDefs) || got.Tools[0].Name != "set_relevant_context" || !strings.Contains(string(got.Tools[0].InputSchema), `"required":["setName","items"]`) ||
		!strings.Contains(string(got.Tools[0].InputSchema), `"type":"object"`) {
		t.Errorf("tools: %s", body)
	}
	// The fake checks what the API checks.
	fake := anthropictest.New(t)
	e, _, _ := newEngine(t, nil)
	var rec recorder
	text, _, _, _, err := e.stream(context.Background(), anthropicProvider(t, fake, 8000), msgs, func() error { return nil }, func(string) {}, &rec, toolDefs)
	if err != nil || text != "ok" {
		t.Fatalf("the fake refused the request: %q %v", text, err)
	}
}

// TestCacheBreakpoints: the system prompt's end, the final message's end,
// and the question that began the previous turn however many tool round
// trips that turn made; in a later round of a turn, the turn's own
// question; never more than the API's 4.
func TestCacheBreakpoints(t *testing.T) {
	t.Parallel()
	user := func(s string) openai.ChatCompletionMessage {
		return openai.ChatCompletionMessage{Role: "user", Content: s}
	}
	answer := func(s string) openai.ChatCompletionMessage {
		return openai.ChatCompletionMessage{Role: "assistant", Content: s}
	}
	round := func(id string) []openai.ChatCompletionMessage {
		return []openai.ChatCompletionMessage{
			{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: id, Type: "function", Function: openai.FunctionCall{Name: "read_file", Arguments: `{"path":"x"}`}}}},
			{Role: "tool", ToolCallID: id, Content: "text of x"},
		}
	}
	sys := openai.ChatCompletionMessage{Role: "system", Content: "system"}
	// Turn 1 made 12 tool round trips (24 messages, well past the API's
	// 20-block lookback from the new question).
	turn1 := []openai.ChatCompletionMessage{sys, user("q1")}
	for i := range 12 {
		turn1 = append(turn1, round(fmt.Sprint("t1-", i))...)
	}
	turn1 = append(turn1, answer("a1"))
	for _, tc := range []struct {
		name string
		msgs []openai.ChatCompletionMessage
		want []anthropictest.Breakpoint // besides the system block's
	}{
		{"first turn", []openai.ChatCompletionMessage{sys, user("q1")}, []anthropictest.Breakpoint{{In: "messages", Message: 0}}},
		{"first turn, second round", append([]openai.ChatCompletionMessage{sys, user("q1")}, round("r")...),
			[]anthropictest.Breakpoint{{In: "messages", Message: 0}, {In: "messages", Message: 2}}},
		{"second turn after many round trips", append(slices.Clone(turn1), user("q2")),
			[]anthropictest.Breakpoint{{In: "messages", Message: 0}, {In: "messages", Message: 26}}},
		{"second turn, a later round", append(append(slices.Clone(turn1), user("q2")), round("r")...),
			[]anthropictest.Breakpoint{{In: "messages", Message: 26}, {In: "messages", Message: 28}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			params := anthropicParams("m", 100, tc.msgs, toolDefs)
			cacheBreakpoints(params.System, params.Tools, params.Messages)
			body, _ := json.Marshal(params)
			var req anthropictest.Request
			if err := json.Unmarshal(body, &req.Parsed); err != nil {
				t.Fatal(err)
			}
			want := append([]anthropictest.Breakpoint{{In: "system", Index: 0}}, tc.want...)
			for i := range want {
				if want[i].In == "messages" { // the message's last block
					want[i].Index = len(req.Parsed.Messages[want[i].Message].Content) - 1
				}
			}
			if got := req.Breakpoints(); !slices.Equal(got, want) {
				t.Errorf("breakpoints %+v, want %+v", got, want)
			}
		})
	}
	// Without a system prompt, the tools are cached up to the last one.
	params := anthropicParams("m", 100, []openai.ChatCompletionMessage{user("q")}, toolDefs)
	cacheBreakpoints(params.System, params.Tools, params.Messages)
	body, _ := json.Marshal(params)
	var req anthropictest.Request
	json.Unmarshal(body, &req.Parsed)
	if got := req.Breakpoints(); len(got) != 2 || got[0] != (anthropictest.Breakpoint{In: "tools", Index: len(toolDefs) - 1}) {
		t.Errorf("no system prompt: %+v", got)
	}
}

// TestAnthropicTurnsCacheAndTools: turns over the Anthropic fake stream
// their answers (deltas are the text), run a tool round trip, carry the
// breakpoints, and the second turn reads the first's prefix from the
// cache: the fake reports cached tokens and they are stored with the
// answer. The key goes only to the provider, in x-api-key.
func TestAnthropicTurnsCacheAndTools(t *testing.T) {
	t.Parallel()
	fake := anthropictest.New(t, anthropictest.WithAPIKey(anthropicKey))
	e, st, logs := newEngine(t, nil)
	ctx := context.Background()
	s, _ := st.Create(ctx, "cached")
	p := anthropicProvider(t, fake, 16000)
	// A long system prompt: put a big relevant file in the session's view.
	fake.Enqueue(anthropictest.Reply{Chunks: []string{"The ", "answer ", "is 42."}})
	rec := &recorder{}
	res, err := e.Run(ctx, TurnSpec{SessionID: s.ID, Message: "first question", Provider: p, Tools: contextTools{st}}, rec)
	if err != nil || res.Text != "The answer is 42." || rec.deltas.String() != res.Text || res.FinishReason != FinishStop {
		t.Fatalf("turn 1: %+v %v (deltas %q)", res, err, rec.deltas.String())
	}
	first := fake.Requests()[0]
	if first.Header.Get("x-api-key") != anthropicKey || first.Header.Get("anthropic-version") == "" || first.Header.Get("Authorization") != "" {
		t.Errorf("headers: %v", first.Header)
	}
	if first.Usage.CacheReadInputTokens != 0 || first.Usage.CacheCreationInputTokens == 0 || res.Usage.CachedTokens != 0 ||
		res.Usage.PromptTokens != first.Usage.InputTokens+first.Usage.CacheCreationInputTokens || res.Usage.CompletionTokens != 3 {
		t.Errorf("turn 1 usage %+v, reported %+v", res.Usage, first.Usage)
	}

	// Turn 2: a tool round trip, then the answer.
	fake.Enqueue(
		anthropictest.Reply{Chunks: []string{"Let me check."}, ToolCalls: []anthropictest.ToolCall{{ID: "toolu_1", Name: "get_relevant_context", Arguments: `{}`}}},
		anthropictest.Reply{Chunks: []string{"Nothing is set."}},
	)
	rec = &recorder{}
	res, err = e.Run(ctx, TurnSpec{SessionID: s.ID, Message: "second question", Provider: p, Tools: contextTools{st}}, rec)
	if err != nil || res.Text != "Let me check.Nothing is set." {
		t.Fatalf("turn 2: %+v %v", res, err)
	}
	reqs := fake.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	r2, r3 := reqs[1], reqs[2]
	if r2.Question() != "second question" || len(r2.Parsed.Messages) != 3 || len(r2.Parsed.Tools) != len(toolDefs) {
		t.Errorf("turn 2's request: %s", r2.Body)
	}
	// Breakpoints: the system prompt, the previous turn's question and this
	// request's end.
	bps := r2.Breakpoints()
	if len(bps) != 3 || bps[0].In != "system" || bps[1].Message != 0 || bps[2].Message != 2 {
		t.Errorf("turn 2's breakpoints: %+v", bps)
	}
	if bps := r3.Breakpoints(); len(bps) != 3 || bps[1].Message != 2 || bps[2].Message != 4 {
		t.Errorf("the tool round's breakpoints: %+v", bps)
	}
	// The cache: turn 2 reads turn 1's whole prefix, its tool round reads
	// turn 2's.
	if r2.Usage.CacheReadInputTokens == 0 || r2.Usage.CacheReadInputTokens < first.Usage.CacheCreationInputTokens || r3.Usage.CacheReadInputTokens <= r2.Usage.CacheReadInputTokens {
		t.Errorf("cache reads: turn 1 wrote %+v, turn 2 %+v, its tool round %+v", first.Usage, r2.Usage, r3.Usage)
	}
	want := session.Usage{
		PromptTokens:     r2.Usage.InputTokens + r2.Usage.CacheCreationInputTokens + r2.Usage.CacheReadInputTokens + r3.Usage.InputTokens + r3.Usage.CacheCreationInputTokens + r3.Usage.CacheReadInputTokens,
		CompletionTokens: r2.Usage.OutputTokens + r3.Usage.OutputTokens,
		CachedTokens:     r2.Usage.CacheReadInputTokens + r3.Usage.CacheReadInputTokens,
	}
	if res.Usage != want {
		t.Errorf("turn 2's usage %+v, want %+v", res.Usage, want)
	}
	// Stored with the answers.
	msgs, _ := st.Messages(ctx, s.ID)
	last := msgs[len(msgs)-1]
	if last.Content != "Nothing is set." || last.Usage == nil || last.Usage.CachedTokens != r3.Usage.CacheReadInputTokens || last.Usage.CachedTokens == 0 {
		t.Errorf("stored answer: %+v %+v", last, last.Usage)
	}
	var tools int
	for _, m := range msgs {
		if m.Role == session.RoleTool {
			tools++
			// Stored under ctxls's id, sent back under the provider's.
			if got := r3.ToolResults()["toolu_1"]; m.ToolCallID == "toolu_1" || got != m.Content || got == "" {
				t.Errorf("the tool result sent back: %q, stored %+v", got, m)
			}
		}
	}
	if tools != 1 {
		t.Errorf("%d tool results stored", tools)
	}
	if strings.Contains(logs.String(), anthropicKey) {
		t.Error("the key reached the log")
	}
}

// TestAnthropicFailures: errors before the first token are retried (429
// with Retry-After, 529 overloaded, an overloaded error event before any
// text); a refused key is described without the key, as go-openai's; an
// error event after text keeps the text; a stall ends the turn.
func TestAnthropicFailures(t *testing.T) {
	t.Parallel()
	t.Run("429 with Retry-After", func(t *testing.T) {
		fake := anthropictest.New(t)
		fake.Enqueue(anthropictest.Reply{Status: 429, ErrorMessage: "slow down", RetryAfter: "1"}, anthropictest.Reply{Chunks: []string{"ok after retry"}})
		e, st, _ := newEngine(t, nil)
		s, _ := st.Create(context.Background(), "x")
		rec := &recorder{}
		start := time.Now()
		res, err := e.Run(context.Background(), TurnSpec{SessionID: s.ID, Message: "q", Provider: anthropicProvider(t, fake, 8000)}, rec)
		if err != nil || res.Text != "ok after retry" {
			t.Fatalf("%+v %v", res, err)
		}
		if d := time.Since(start); d < 900*time.Millisecond {
			t.Errorf("Retry-After not honoured: %v", d)
		}
		if len(rec.activity) != 1 || !strings.Contains(rec.activity[0], "retrying in 1s") {
			t.Errorf("activity %q", rec.activity)
		}
	})
	t.Run("overloaded before the first token", func(t *testing.T) {
		fake := anthropictest.New(t)
		fake.Enqueue(anthropictest.Reply{Status: 529, RetryAfter: "1", ErrorMessage: "Overloaded"},
			anthropictest.Reply{Chunks: []string{"never"}, Fault: anthropictest.FaultErrorEvent, FaultAfter: 0},
			anthropictest.Reply{Chunks: []string{"fine"}})
		e, st, _ := newEngine(t, nil)
		s, _ := st.Create(context.Background(), "x")
		res, err := e.Run(context.Background(), TurnSpec{SessionID: s.ID, Message: "q", Provider: anthropicProvider(t, fake, 8000)}, &recorder{})
		if err != nil || res.Text != "fine" || len(fake.Requests()) != 3 {
			t.Fatalf("%+v %v, %d requests", res, err, len(fake.Requests()))
		}
	})
	for _, tc := range []struct {
		name  string
		reply anthropictest.Reply
		want  string
		text  string
	}{
		{"401", anthropictest.Reply{Status: 401, ErrorMessage: "invalid x-api-key " + anthropicKey}, "refused the API key (HTTP 401): check ANTHROPIC_API_KEY (invalid x-api-key [API key])", ""},
		{"404 model", anthropictest.Reply{Status: 404, ErrorMessage: "model: test-model"}, `does not know model "test-model"`, ""},
		{"500 every time", anthropictest.Reply{Status: 500, ErrorMessage: "boom"}, "failed (HTTP 500): boom", ""},
		{"a text body", anthropictest.Reply{Status: 502, TextErrorBody: true, ErrorMessage: "Bad Gateway from the proxy"}, "failed (HTTP 502): Bad Gateway from the proxy", ""},
		{"error event after text", anthropictest.Reply{Chunks: []string{"half ", "rest"}, Fault: anthropictest.FaultErrorEvent, FaultAfter: 1}, "failed (HTTP 529): Overloaded", "half "},
		{"reset mid-stream", anthropictest.Reply{Chunks: []string{"half ", "rest"}, Fault: anthropictest.FaultReset, FaultAfter: 1}, "the stream from", "half "},
		{"malformed SSE", anthropictest.Reply{Chunks: []string{"half ", "rest"}, Fault: anthropictest.FaultMalformed, FaultAfter: 1}, "the stream from", "half "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fake := anthropictest.New(t)
			fake.Enqueue(tc.reply, tc.reply, tc.reply, tc.reply)
			e, st, logs := newEngine(t, nil)
			s, _ := st.Create(context.Background(), "x")
			e.Stall = 5 * time.Second
			res, err := e.Run(context.Background(), TurnSpec{SessionID: s.ID, Message: "q", Provider: anthropicProvider(t, fake, 8000)}, &recorder{})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrProviderFailed) || res.Text != tc.text || res.FinishReason != FinishError {
				t.Fatalf("%+v %v, want %q", res, err, tc.want)
			}
			if strings.Contains(err.Error(), anthropicKey) || strings.Contains(logs.String(), anthropicKey) {
				t.Error("the key is in the error or the log")
			}
			if n := len(fake.Requests()); (tc.reply.Status >= 500) != (n == 4) {
				t.Errorf("%d requests (retried only before the first token on 5xx)", n)
			}
			msgs, _ := st.Messages(context.Background(), s.ID)
			if msgs[1].Status != session.StatusError || !strings.HasPrefix(msgs[1].Content, tc.text) || strings.Contains(msgs[1].Content, anthropicKey) {
				t.Errorf("stored %+v", msgs[1])
			}
		})
	}
	t.Run("stall", func(t *testing.T) {
		fake := anthropictest.New(t)
		fake.Enqueue(anthropictest.Reply{Chunks: []string{"some ", "more"}, Fault: anthropictest.FaultStall, FaultAfter: 1})
		e, st, _ := newEngine(t, nil)
		e.Stall = 300 * time.Millisecond
		s, _ := st.Create(context.Background(), "x")
		res, err := e.Run(context.Background(), TurnSpec{SessionID: s.ID, Message: "q", Provider: anthropicProvider(t, fake, 8000)}, &recorder{})
		if err == nil || !strings.Contains(err.Error(), "sent nothing for 300ms") || res.Text != "some " || res.FinishReason != FinishError {
			t.Fatalf("stall: %+v %v", res, err)
		}
		fake.WaitCancelled(0, 2*time.Second)
	})
}

// TestAnthropicCancel: cancelling the turn's context closes the stream
// (the fake sees the client go) and keeps the partial answer, interrupted;
// the text streamed before a pause is checkpointed meanwhile.
func TestAnthropicCancel(t *testing.T) {
	t.Parallel()
	fake := anthropictest.New(t)
	chunks := []string{"one ", "two ", "three "}
	fake.Enqueue(anthropictest.Reply{Chunks: chunks, Delay: 5 * time.Millisecond, Fault: anthropictest.FaultStall, FaultAfter: len(chunks)})
	e, st, _ := newEngine(t, nil)
	e.Checkpoint = 200 * time.Millisecond
	s, _ := st.Create(context.Background(), "x")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	rec := &recorder{}
	go func() {
		_, err := e.Run(ctx, TurnSpec{SessionID: s.ID, Message: "q", Provider: anthropicProvider(t, fake, 8000)}, rec)
		done <- err
	}()
	want := strings.Join(chunks, "")
	waitDeltas(t, rec, want)
	if stored := waitStored(t, st, s.ID, want, e.Checkpoint+2*time.Second); stored.Content != want || stored.Status != session.StatusStreaming {
		t.Errorf("during the pause: %+v", stored)
	}
	cancelAt := time.Now()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("the cancelled turn returned %v", err)
	}
	if r := fake.WaitCancelled(0, 2*time.Second); r.CancelledAt.Sub(cancelAt) > time.Second {
		t.Errorf("the upstream stream ended %v after the cancel", r.CancelledAt.Sub(cancelAt))
	}
	msgs, _ := st.Messages(context.Background(), s.ID)
	if msgs[1].Content != want || msgs[1].Status != session.StatusCancelled {
		t.Errorf("after the cancel: %+v", msgs[1])
	}
}

// TestAnthropicTitleAndCompaction: the model's title and the compaction's
// summaries are asked for without streaming, through the same fake, with
// max_tokens and the prompts as for OpenAI; the turn after a compaction
// carries the summary as a second system block.
func TestAnthropicTitleAndCompaction(t *testing.T) {
	t.Parallel()
	fake := anthropictest.New(t, anthropictest.WithDefault(anthropictest.Reply{Chunks: []string{fakeSummary}}))
	e, st, _ := newEngine(t, nil)
	ctx := context.Background()
	s, _ := st.Create(ctx, "")
	p := anthropicProvider(t, fake, 16000)

	// The title: after the first complete answer.
	fake.Enqueue(anthropictest.Reply{Chunks: []string{"Roll the canary back."}}, anthropictest.Reply{Chunks: []string{"Canary rollback plan"}})
	rec := &recorder{}
	if _, err := e.Run(ctx, TurnSpec{SessionID: s.ID, Message: "How do I undo the canary deploy?", Provider: p}, rec); err != nil {
		t.Fatal(err)
	}
	if !e.WaitBackground(ctx, 5*time.Second) {
		t.Fatal("the title job did not end")
	}
	titled, _ := st.Get(ctx, s.ID)
	if titled.Title != "Canary rollback plan" || titled.TitleSource != session.TitleModel {
		t.Fatalf("title %q (%s)", titled.Title, titled.TitleSource)
	}
	tr := fake.Requests()[1]
	if tr.Parsed.Stream || tr.SystemPrompt() != prompts.TitleSystem() || tr.Parsed.MaxTokens != p.MaxOutputTokens ||
		!strings.Contains(tr.Parsed.Messages[0].Content.Text(), "Roll the canary back.") || len(tr.Breakpoints()) != 0 {
		t.Errorf("title request: %s", tr.Body)
	}

	// A compaction of a long session.
	fillSession(t, st, s.ID, 700, 0) // over the compaction limit with or without tools
	before := len(fake.Requests())
	rec = &recorder{}
	fake.Enqueue() // the default reply, the summary, for every request
	res, err := e.Run(ctx, TurnSpec{SessionID: s.ID, Message: "What is the next step?", Provider: p, Tools: contextTools{st}}, rec)
	if err != nil || len(rec.compacted) != 1 {
		t.Fatalf("turn: %+v %v, %d compactions", res, err, len(rec.compacted))
	}
	reqs := fake.Requests()[before:]
	sum := prompts.SummarySystem(summaryCap(p.ContextWindow-p.MaxOutputTokens) * 3 / 4)
	for _, r := range reqs[:len(reqs)-1] {
		if r.Parsed.Stream || r.SystemPrompt() != sum {
			t.Fatalf("not a summary request: %.300s", r.Body)
		}
	}
	turn := reqs[len(reqs)-1]
	marker := session.SummaryMarker(*rec.compacted[0].Summary.SummaryOf)
	if !turn.Parsed.Stream || len(turn.Parsed.System) != 2 || !strings.HasPrefix(turn.Parsed.System[1].Text, marker) || !strings.Contains(turn.Parsed.System[1].Text, fakeSummary) {
		t.Fatalf("the turn after the compaction: %.500s", turn.Body)
	}
	if bps := turn.Breakpoints(); bps[0] != (anthropictest.Breakpoint{In: "system", Index: 1}) || turn.Question() != "What is the next step?" {
		t.Errorf("breakpoints %+v", bps)
	}
	// On demand, through Compact.
	if _, err := e.Compact(ctx, s.ID, p); err != nil {
		t.Errorf("compact: %v", err)
	}
}

// TestAnthropicListModels: GET /v1/models, every page; a refused key is
// described.
func TestAnthropicListModels(t *testing.T) {
	t.Parallel()
	fake := anthropictest.New(t, anthropictest.WithModels("claude-a", "claude-b"), anthropictest.WithAPIKey(anthropicKey))
	p := anthropicProvider(t, fake, 8000)
	names, err := ListModels(context.Background(), p)
	if err != nil || !slices.Equal(names, []string{"claude-a", "claude-b"}) {
		t.Errorf("models %v %v", names, err)
	}
	p.apiKey = "sk-ant-wrong-key-here"
	if _, err := ListModels(context.Background(), p); err == nil || !strings.Contains(err.Error(), "refused the API key") || strings.Contains(err.Error(), p.apiKey) {
		t.Errorf("a wrong key: %v", err)
	}
}

// TestAnthropicIgnoresTheEnvironment: the SDK's own defaults
// (ANTHROPIC_BASE_URL, ANTHROPIC_AUTH_TOKEN, a profile) never apply: the
// provider's URL and key are used, and a local server gets no key.
func TestAnthropicIgnoresTheEnvironment(t *testing.T) {
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "env-token")
	t.Setenv("ANTHROPIC_API_KEY", "env-key")
	fake := anthropictest.New(t)
	r, err := Resolve(Provider{API: APIAnthropic, BaseURL: fake.URL + "/v1", Model: "m"}, func(string) string { return "" }, nil)
	if err != nil {
		t.Fatal(err)
	}
	e, _, _ := newEngine(t, nil)
	if _, err := e.complete(context.Background(), r, r.Model, "system", "input"); err != nil {
		t.Fatal(err)
	}
	h := fake.Requests()[0].Header
	if h.Get("x-api-key") != "" || h.Get("Authorization") != "" {
		t.Errorf("credentials from the environment were sent: %v", h)
	}
}

// TestAnthropicHTTPClient: the engine's HTTP client carries the requests.
func TestAnthropicHTTPClient(t *testing.T) {
	t.Parallel()
	fake := anthropictest.New(t)
	e, st, _ := newEngine(t, nil)
	var seen []string
	e.HTTPClient = &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		seen = append(seen, r.URL.Path)
		return http.DefaultTransport.RoundTrip(r)
	})}
	s, _ := st.Create(context.Background(), "x")
	if _, err := e.Run(context.Background(), TurnSpec{SessionID: s.ID, Message: "q", Provider: anthropicProvider(t, fake, 8000)}, &recorder{}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(seen, []string{"/v1/messages"}) {
		t.Errorf("requests through the engine's client: %v", seen)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestAnthropicRelevantFileCached: a session with a relevant file sends
// its text in the first turn; later turns read from the cache what they
// repeat of the requests before (the fake counts it): always the tools and
// the system prompt, and, when the file's text stays in the message that
// first sent it rather than being sent again with every question, most of
// the input.
func TestAnthropicRelevantFileCached(t *testing.T) {
	t.Parallel()
	fake := anthropictest.New(t)
	root := t.TempDir()
	file := filepath.Join(root, "big.go")
	os.WriteFile(file, bytes.Repeat([]byte("// a line of a big file\n"), 400), 0o644)
	e, st, _ := newEngine(t, nil)
	ctx := context.Background()
	s, _ := st.Create(ctx, "files")
	st.UpdateContext(ctx, s.ID, "files", []string{file}, "", session.AddedByUser, nil)
	p := anthropicProvider(t, fake, 32000)
	var results []*Result
	for _, q := range []string{"first", "second", "third"} {
		res, err := e.Run(ctx, TurnSpec{SessionID: s.ID, Message: q, Roots: []string{root}, Provider: p}, &recorder{})
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, res)
	}
	reqs := fake.Requests()
	if !strings.Contains(reqs[0].ModelContext(), "a line of a big file") {
		t.Fatalf("the file was not sent:\n%.500s", reqs[0].ModelContext())
	}
	fixed := len(reqs[0].Parsed.System[0].Text) / 8 // the system prompt, at least half of it in the fake's tokens
	for i := 1; i < 3; i++ {
		u := reqs[i].Usage
		total := u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
		kept := !strings.Contains(reqs[i].TurnContext(), "a line of a big file")
		t.Logf("turn %d: %d of %d input tokens read from the cache, the file kept where first sent: %v", i+1, u.CacheReadInputTokens, total, kept)
		if results[i].Usage.CachedTokens != u.CacheReadInputTokens || u.CacheReadInputTokens < fixed || kept && u.CacheReadInputTokens < total/2 {
			t.Errorf("turn %d: %d of %d input tokens read from the cache (%+v; the file kept where first sent: %v)", i+1, u.CacheReadInputTokens, total, results[i].Usage, kept)
		}
	}
}
