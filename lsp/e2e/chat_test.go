package e2e_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
	"github.com/ctxls/ctxls/prompts"
	"github.com/ctxls/ctxls/service"
)

var update = flag.Bool("update", false, "rewrite golden files")

// startChat starts a server whose provider is the fake OpenAI server (it
// needs no API key: no t.Setenv, so the tests can run in parallel).
func startChat(t *testing.T, fake *openaitest.Server) (*lsptest.Server, string) {
	t.Helper()
	root, rootURI := workspace(t)
	s := lsptest.InProcess(t, service.Config{DataDir: t.TempDir(), Version: "test"})
	s.Initialize(lsptest.InitOptions{RootURI: rootURI, WorkDoneProgress: true, InitOptions: map[string]any{
		"provider": map[string]any{"baseURL": fake.URL, "model": "test-model", "contextWindow": 16000, "maxOutputTokens": 1000},
	}})
	return s, root
}

// progressFor collects the $/progress values of one token.
func progressFor(s *lsptest.Server, token string) (deltas string, kinds []string, end string) {
	for _, m := range s.Notifications("$/progress") {
		var p struct {
			Token json.RawMessage `json:"token"`
			Value struct {
				Kind    string `json:"kind"`
				Delta   string `json:"delta"`
				Message string `json:"message"`
			} `json:"value"`
		}
		json.Unmarshal(m.Params, &p)
		if string(p.Token) != token {
			continue
		}
		kinds = append(kinds, p.Value.Kind)
		deltas += p.Value.Delta
		if p.Value.Kind == "end" {
			end = p.Value.Message
		}
	}
	return
}

func TestChatStreamsWithUnsavedBufferAndTitles(t *testing.T) {
	fake := openaitest.New(t)
	fake.Enqueue(openaitest.Reply{Chunks: []string{"The ", "redirect ", "loops because ", "of 😀 middleware."}, Usage: &openai.Usage{PromptTokens: 120, CompletionTokens: 9,
		PromptTokensDetails: &openai.PromptTokensDetails{CachedTokens: 64}}},
		openaitest.Reply{Chunks: []string{"Login redirect loop fix"}})
	s, root := startChat(t, fake)
	main := filepath.Join(root, "main.go")
	s.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": "file://" + main, "languageId": "go", "version": 1, "text": "package main\n"}})
	s.Notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": "file://" + main, "version": 2},
		"contentChanges": []any{map[string]any{"text": "package main\n\n// UNSAVED EDIT\n"}}})
	s.MustCommand(api.ContextSet, map[string]any{"setName": "files", "items": []string{"main.go"}}, nil)

	var res api.ChatResult
	if err := s.Call("ctxls/chat", map[string]any{"message": "Why does login redirect twice?\nmore detail", "workDoneToken": "tok-1"}, &res); err != nil {
		t.Fatal(err)
	}
	want := "The redirect loops because of 😀 middleware."
	if res.Text != want || res.FinishReason != "stop" || res.Usage.PromptTokens != 120 || res.Usage.CompletionTokens != 9 || res.Usage.CachedTokens != 64 || res.V != 1 {
		t.Errorf("result %+v", res)
	}
	if !strings.Contains(progressMessagesRaw(s), `"usage":{"promptTokens":120,"completionTokens":9,"cachedTokens":64}`) {
		t.Errorf("no usage report in the progress: %s", progressMessagesRaw(s))
	}
	deltas, kinds, end := progressFor(s, `"tok-1"`)
	if deltas != want || kinds[0] != "begin" || kinds[len(kinds)-1] != "end" || end != "done" {
		t.Errorf("progress: deltas %q kinds %v end %q", deltas, kinds, end)
	}
	reqs := fake.WaitRequests(2, 5*time.Second)
	sys := reqs[0].ModelContext()
	if !strings.Contains(sys, "// UNSAVED EDIT") || !strings.Contains(sys, "(unsaved editor text)") {
		t.Errorf("the system prompt lacks the unsaved buffer:\n%s", sys)
	}
	last := reqs[0].Parsed.Messages[len(reqs[0].Parsed.Messages)-1]
	if last.Role != "user" || reqs[0].Question() != "Why does login redirect twice?\nmore detail" {
		t.Errorf("last message %+v", last)
	}
	// Instant title from the first line, then the model's title.
	first := s.WaitNotification(api.SessionUpdated, 1)
	if !strings.Contains(string(first.Params), `"Why does login redirect twice?"`) || !strings.Contains(string(first.Params), `"auto"`) {
		t.Errorf("first title: %s", first.Params)
	}
	second := s.WaitNotification(api.SessionUpdated, 2)
	if !strings.Contains(string(second.Params), `"Login redirect loop fix"`) || !strings.Contains(string(second.Params), `"model"`) {
		t.Errorf("model title: %s", second.Params)
	}
	var show api.ShowResult
	s.MustCommand(api.SessionShow, map[string]any{"sessionId": res.SessionID}, &show)
	if len(show.Messages) != 2 || show.Messages[1].Content != want || show.Messages[1].Status != api.StatusComplete || show.Messages[1].ID != res.MessageID {
		t.Errorf("stored: %+v", show.Messages)
	}
	// A user's rename is never overridden by a later model title.
	s.MustCommand(api.SessionRename, map[string]any{"title": "Mine"}, nil)
	fake.Enqueue(openaitest.Reply{Chunks: []string{"second answer"}}, openaitest.Reply{Chunks: []string{"Model Title"}})
	s.MustCommand(api.Chat, map[string]any{"message": "and then?"}, &res)
	time.Sleep(100 * time.Millisecond)
	s.MustCommand(api.SessionShow, map[string]any{"sessionId": res.SessionID}, &show)
	if show.Session.Title != "Mine" {
		t.Errorf("title after user rename: %q", show.Session.Title)
	}
	// The second turn carries the first as history.
	r := fake.WaitRequests(3, 5*time.Second)[2]
	if n := len(r.Parsed.Messages); n != 4 || r.Parsed.Messages[2].Content != want {
		t.Errorf("history: %d messages", n)
	}
}

func TestChatCancelStopsUpstream(t *testing.T) {
	fake := openaitest.New(t)
	fake.Enqueue(openaitest.Reply{Chunks: []string{"partial ", "never"}, Fault: openaitest.FaultStall, FaultAfter: 1})
	s, _ := startChat(t, fake)
	wait := s.Send(77, "ctxls/chat", map[string]any{"message": "long question", "workDoneToken": "tok-c"})
	s.WaitFor("first delta", func(m *lsptest.Message) bool {
		return m.Method == "$/progress" && strings.Contains(string(m.Params), `"delta":"partial "`)
	})
	// Everything else is served while the turn streams.
	start := time.Now()
	var got api.ContextGetResult
	s.MustCommand(api.ContextGet, map[string]any{}, &got)
	s.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": "file:///x.txt", "languageId": "text", "version": 1, "text": "x"}})
	s.Notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": "file:///x.txt", "version": 2},
		"contentChanges": []any{map[string]any{"range": map[string]any{"start": map[string]any{"line": 0, "character": 1}, "end": map[string]any{"line": 0, "character": 1}}, "text": "yz"}}})
	var doc api.DocumentGetResult
	s.MustCommand(api.DocumentGet, map[string]any{"uri": "file:///x.txt"}, &doc)
	if time.Since(start) > 2*time.Second || doc.Text != "xyz" {
		t.Errorf("serving during a turn took %v", time.Since(start))
	}
	// A second turn in the same session is refused.
	err := s.Call("ctxls/chat", map[string]any{"message": "again"}, nil)
	if err == nil || !strings.Contains(err.Error(), "already running") {
		t.Errorf("second turn: %v", err)
	}
	cancelAt := time.Now()
	s.Notify("$/cancelRequest", map[string]any{"id": 77})
	m := wait()
	if m.Error == nil || m.Error.Code != -32800 {
		t.Fatalf("cancelled turn: %+v", m)
	}
	_, _, end := progressFor(s, `"tok-c"`)
	if end != "cancelled" {
		t.Errorf("progress end %q", end)
	}
	if r := fake.WaitCancelled(0, 2*time.Second); r.CancelledAt.Sub(cancelAt) > 100*time.Millisecond {
		t.Errorf("upstream stream ended %v after the cancel, want within 100ms", r.CancelledAt.Sub(cancelAt))
	}
	var list api.SessionListResult
	s.MustCommand(api.SessionList, map[string]any{}, &list)
	var show api.ShowResult
	s.MustCommand(api.SessionShow, map[string]any{"sessionId": list.Sessions[0].ID}, &show)
	if len(show.Messages) != 2 || show.Messages[1].Content != "partial " || show.Messages[1].Status != api.StatusCancelled {
		t.Errorf("kept partial answer: %+v", show.Messages)
	}
	// window/workDoneProgress/cancel cancels too.
	fake.Enqueue(openaitest.Reply{Chunks: []string{"p2 ", "never"}, Fault: openaitest.FaultStall, FaultAfter: 1})
	wait = s.Send(78, "ctxls/chat", map[string]any{"message": "again", "workDoneToken": "tok-d"})
	s.WaitFor("delta p2", func(m *lsptest.Message) bool {
		return m.Method == "$/progress" && strings.Contains(string(m.Params), `"delta":"p2 "`)
	})
	s.Notify("window/workDoneProgress/cancel", map[string]any{"token": "tok-d"})
	if m := wait(); m.Error == nil || m.Error.Code != -32800 {
		t.Errorf("cancel by token: %+v", m)
	}
	// The next turn gives the model the cancelled answers marked as cut
	// off (the stored answers stay as they were).
	fake.Enqueue(openaitest.Reply{Chunks: []string{"whole"}})
	s.MustCommand(api.Chat, map[string]any{"message": "go on"}, nil)
	var cut int
	var goOn openaitest.Request
	for _, r := range fake.Streamed() {
		if r.Question() == "go on" {
			goOn = r
		}
	}
	for _, m := range goOn.Parsed.Messages {
		if m.Role == "assistant" && strings.HasSuffix(m.Content, prompts.CutOffNote) {
			cut++
		}
	}
	if cut != 2 {
		t.Errorf("%d cancelled answers marked as cut off, want 2: %+v", cut, goOn.Parsed.Messages)
	}
}

func TestChatProviderFailures(t *testing.T) {
	parallel(t, waitTests)
	for _, tc := range []struct {
		name  string
		reply openaitest.Reply
		want  string
		text  string
	}{
		{"401", openaitest.Reply{Status: 401, ErrorMessage: "Incorrect API key", ErrorType: "invalid_request_error", ErrorCode: "invalid_api_key"}, "refused the API key", ""},
		{"404 model", openaitest.Reply{Status: 404, ErrorMessage: "model not found", ErrorCode: "model_not_found"}, "does not know model", ""},
		{"500", openaitest.Reply{Status: 500, ErrorMessage: "boom"}, "failed (HTTP 500)", ""},
		{"reset mid-stream", openaitest.Reply{Chunks: []string{"half ", "rest"}, Fault: openaitest.FaultReset, FaultAfter: 1}, "stream", "half "},
		{"malformed SSE", openaitest.Reply{Chunks: []string{"half ", "rest"}, Fault: openaitest.FaultMalformed, FaultAfter: 1}, "stream", "half "},
		{"error event mid-stream", openaitest.Reply{Chunks: []string{"half ", "rest"}, Fault: openaitest.FaultMidStreamError, FaultAfter: 1, ErrorMessage: "overloaded"}, "overloaded", "half "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := openaitest.New(t)
			if tc.reply.Status >= 500 {
				// Retried before the first token: fail every attempt.
				fake.Enqueue(tc.reply, tc.reply, tc.reply, tc.reply)
			} else {
				fake.Enqueue(tc.reply)
			}
			s, _ := startChat(t, fake)
			var res api.ChatResult
			if err := s.Call("ctxls/chat", map[string]any{"message": "q", "workDoneToken": "t"}, &res); err != nil {
				t.Fatalf("want a result with finishReason error, got %v", err)
			}
			if res.FinishReason != "error" || res.Text != tc.text {
				t.Errorf("result %+v", res)
			}
			_, _, end := progressFor(s, `"t"`)
			if !strings.HasPrefix(end, "error: ") || !strings.Contains(end, tc.want) {
				t.Errorf("progress end %q, want it to mention %q", end, tc.want)
			}
			msg := s.WaitNotification("window/showMessage", 1)
			if !strings.Contains(string(msg.Params), tc.want) {
				t.Errorf("showMessage %s", msg.Params)
			}
			// The session is usable for the next turn.
			fake.Enqueue(openaitest.Reply{Chunks: []string{"fine now"}})
			if err := s.Call("ctxls/chat", map[string]any{"message": "again"}, &res); err != nil || res.Text != "fine now" {
				t.Errorf("next turn: %+v %v", res, err)
			}
		})
	}
}

// TestChatStreamsThatEndOddly: events split across reads, and a body that
// ends after the last chunk without a finish chunk or data: [DONE] (as some
// local servers do), are whole answers; the next turn works.
func TestChatStreamsThatEndOddly(t *testing.T) {
	parallel(t, waitTests)
	for _, tc := range []struct {
		name  string
		fault openaitest.Fault
	}{{"split across reads", openaitest.FaultSplit}, {"no [DONE]", openaitest.FaultNoDone}} {
		t.Run(tc.name, func(t *testing.T) {
			// The title request after the first answer gets the default.
			fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"A title"}}))
			fake.Enqueue(openaitest.Reply{Chunks: []string{"one ", "two ", "three"}, Fault: tc.fault, FaultAfter: 100})
			s, _ := startChat(t, fake)
			var res api.ChatResult
			if err := s.Call("ctxls/chat", map[string]any{"message": "q", "workDoneToken": "t"}, &res); err != nil {
				t.Fatal(err)
			}
			deltas, _, end := progressFor(s, `"t"`)
			if res.FinishReason != "stop" || res.Text != "one two three" || deltas != res.Text || end != "done" {
				t.Errorf("result %+v, deltas %q, end %q", res, deltas, end)
			}
			fake.WaitRequests(2, 5*time.Second) // the title request
			fake.Enqueue(openaitest.Reply{Chunks: []string{"fine now"}})
			if err := s.Call("ctxls/chat", map[string]any{"message": "again"}, &res); err != nil || res.Text != "fine now" {
				t.Errorf("next turn: %+v %v", res, err)
			}
		})
	}
}

func TestChat429RetriesWithRetryAfter(t *testing.T) {
	parallel(t, waitTests)
	fake := openaitest.New(t)
	fake.Enqueue(openaitest.Reply{Status: 429, ErrorMessage: "slow down", RetryAfter: "1"}, openaitest.Reply{Chunks: []string{"ok after retry"}})
	s, _ := startChat(t, fake)
	var res api.ChatResult
	start := time.Now()
	if err := s.Call("ctxls/chat", map[string]any{"message": "q"}, &res); err != nil || res.Text != "ok after retry" {
		t.Fatalf("%+v %v", res, err)
	}
	if d := time.Since(start); d < 900*time.Millisecond {
		t.Errorf("Retry-After not honoured: retried after %v", d)
	}
}

// TestChatSystemPromptGolden pins the exact system prompt bytes the provider
// receives with 0, 3 and 55 session files and an unsaved buffer.
func TestChatSystemPromptGolden(t *testing.T) {
	parallel(t, waitTests)
	for _, n := range []int{0, 3, 55} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			fake := openaitest.New(t)
			s, root := startChat(t, fake)
			for i := range n {
				s.MustCommand(api.FilesAdd, map[string]any{"name": fmt.Sprintf("data%02d.csv", i), "contentBase64": "YQ=="}, nil)
			}
			readme := filepath.Join(root, "README.md")
			s.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": "file://" + readme, "languageId": "markdown", "version": 1, "text": "# app\n\nunsaved line\n"}})
			s.MustCommand(api.ContextSet, map[string]any{"setName": "files", "items": []string{"README.md", "docs/spec.md"}}, nil)
			s.MustCommand(api.ContextSet, map[string]any{"setName": "ports", "items": []string{"8080"}}, nil)
			s.MustCommand(api.Chat, map[string]any{"message": "hello"}, nil)
			got := strings.ReplaceAll(fake.Requests()[0].ModelContext(), root, "/WORKSPACE")
			path := filepath.Join("testdata", fmt.Sprintf("system_prompt_%d_files.golden", n))
			if *update {
				os.WriteFile(path, []byte(got), 0o644)
				return
			}
			want, err := os.ReadFile(path)
			if err != nil || string(want) != got {
				t.Errorf("system prompt differs from %s (go test ./lsp -run Golden -update):\n%s", path, got)
			}
		})
	}
}

// progressMessagesRaw is every $/progress notification's params.
func progressMessagesRaw(s *lsptest.Server) string {
	var out []string
	for _, m := range s.Notifications("$/progress") {
		out = append(out, string(m.Params))
	}
	return strings.Join(out, "\n")
}
