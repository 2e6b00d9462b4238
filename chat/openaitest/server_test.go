package openaitest

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"
)

func client(s *Server, key string) *openai.Client {
	cfg := openai.DefaultConfig(key)
	cfg.BaseURL = s.URL
	return openai.NewClientWithConfig(cfg)
}

func collect(t *testing.T, s *Server, req openai.ChatCompletionRequest) (string, []openai.ToolCall, *openai.Usage, error) {
	t.Helper()
	req.Stream = true
	st, err := client(s, "").CreateChatCompletionStream(context.Background(), req)
	if err != nil {
		return "", nil, nil, err
	}
	defer st.Close()
	var text strings.Builder
	var calls []openai.ToolCall
	var usage *openai.Usage
	for {
		r, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return text.String(), calls, usage, nil
		}
		if err != nil {
			return text.String(), calls, usage, err
		}
		if r.Usage != nil {
			usage = r.Usage
		}
		for _, c := range r.Choices {
			text.WriteString(c.Delta.Content)
			for _, tc := range c.Delta.ToolCalls {
				for len(calls) <= *tc.Index {
					calls = append(calls, openai.ToolCall{})
				}
				if tc.ID != "" {
					calls[*tc.Index].ID = tc.ID
				}
				calls[*tc.Index].Function.Name += tc.Function.Name
				calls[*tc.Index].Function.Arguments += tc.Function.Arguments
			}
		}
	}
}

var basic = openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "system", Content: "sys"}, {Role: "user", Content: "hi"}},
	StreamOptions: &openai.StreamOptions{IncludeUsage: true}}

func TestStreamTextToolsUsage(t *testing.T) {
	s := New(t)
	s.Enqueue(Reply{Chunks: []string{"a", "b😀"}, Usage: &openai.Usage{PromptTokens: 3, CompletionTokens: 2}},
		Reply{ToolCalls: []ToolCall{{ID: "1", Name: "read_file", Arguments: `{"path":"x"}`}, {ID: "2", Name: "f", Arguments: `{}`}}},
		Reply{Chunks: []string{"split ", "works"}, Fault: FaultSplit})
	text, _, usage, err := collect(t, s, basic)
	if err != nil || text != "ab😀" || usage == nil || usage.PromptTokens != 3 {
		t.Errorf("text %q usage %+v err %v", text, usage, err)
	}
	_, calls, _, err := collect(t, s, basic)
	if err != nil || len(calls) != 2 || calls[0].Function.Arguments != `{"path":"x"}` || calls[1].ID != "2" {
		t.Errorf("tool calls %+v %v", calls, err)
	}
	if text, _, _, err := collect(t, s, basic); err != nil || text != "split works" {
		t.Errorf("split: %q %v", text, err)
	}
	if r := s.Requests()[0]; r.SystemPrompt() != "sys" || !strings.Contains(string(r.Body), `"include_usage":true`) {
		t.Errorf("recorded %s", r.Body)
	}
}

func TestErrorsAndFaults(t *testing.T) {
	s := New(t)
	s.Enqueue(Reply{Status: 429, ErrorMessage: "slow", RetryAfter: "3"}, Reply{Status: 500, ErrorMessage: "boom", TextErrorBody: true},
		Reply{Chunks: []string{"x", "y"}, Fault: FaultReset, FaultAfter: 1},
		Reply{Chunks: []string{"x", "y"}, Fault: FaultMalformed, FaultAfter: 1},
		Reply{Chunks: []string{"x"}, Fault: FaultMidStreamError, FaultAfter: 1})
	_, _, _, err := collect(t, s, basic)
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 429 {
		t.Errorf("429: %T %v", err, err)
	}
	_, _, _, err = collect(t, s, basic)
	var reqErr *openai.RequestError
	if !errors.As(err, &reqErr) || reqErr.HTTPStatusCode != 500 {
		t.Errorf("500 text: %T %v", err, err)
	}
	for _, name := range []string{"reset", "malformed", "mid-stream error"} {
		if text, _, _, err := collect(t, s, basic); err == nil || text != "x" {
			t.Errorf("%s: text %q err %v", name, text, err)
		}
	}
}

func TestStallCancelledAndAuth(t *testing.T) {
	s := New(t, WithAPIKey("sk-test"), WithModels("a", "b"))
	s.Enqueue(Reply{Chunks: []string{"x", "y"}, Fault: FaultStall, FaultAfter: 1})
	ctx, cancel := context.WithCancel(context.Background())
	req := basic
	req.Stream = true
	st, err := client(s, "sk-test").CreateChatCompletionStream(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	st.Recv()
	st.Recv()
	at := time.Now()
	cancel()
	// A stalled reply ends only when the client leaves: the fake records
	// that moment. (How soon the daemon's own cancel reaches a provider is
	// lsp/e2e's to check; this one ran under -race on a loaded machine,
	// where 1 s for the fake to see it was once not enough.)
	if r := s.WaitCancelled(0, 10*time.Second); !r.Cancelled || r.CancelledAt.Before(at) {
		t.Errorf("the cancel recorded as %v at %v, the client cancelled at %v", r.Cancelled, r.CancelledAt, at)
	}
	if _, err := client(s, "wrong").ListModels(context.Background()); err == nil {
		t.Error("wrong key accepted")
	}
	models, err := client(s, "sk-test").ListModels(context.Background())
	if err != nil || len(models.Models) != 2 {
		t.Errorf("models %+v %v", models, err)
	}
	s.Enqueue(Reply{Chunks: []string{"non", "stream"}})
	resp, err := client(s, "sk-test").CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{Model: "m", Messages: basic.Messages})
	if err != nil || resp.Choices[0].Message.Content != "nonstream" {
		t.Errorf("non-streaming %+v %v", resp, err)
	}
}

func TestHoldAtWaitsForRelease(t *testing.T) {
	s := New(t)
	s.Enqueue(Reply{Chunks: []string{"a", "b", "c"}, HoldAt: []int{1, 2}})
	req := basic
	req.Stream = true
	st, err := client(s, "").CreateChatCompletionStream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	got := make(chan string, 8)
	go func() {
		for {
			r, err := st.Recv()
			if err != nil {
				close(got)
				return
			}
			if len(r.Choices) > 0 && r.Choices[0].Delta.Content != "" {
				got <- r.Choices[0].Delta.Content
			}
		}
	}()
	next := func(want string) {
		t.Helper()
		select {
		case c := <-got:
			if c != want {
				t.Fatalf("chunk %q, want %q", c, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no chunk %q", want)
		}
	}
	quiet := func() {
		t.Helper()
		select {
		case c := <-got:
			t.Fatalf("chunk %q sent while held", c)
		case <-time.After(200 * time.Millisecond):
		}
	}
	next("a")
	quiet()
	s.Release()
	next("b")
	quiet()
	s.Release()
	next("c")
}
