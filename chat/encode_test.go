package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sashabaranov/go-openai"
	"github.com/sashabaranov/go-openai/jsonschema"
)

// encodeCases are requests of every kind of message the engine sends.
func encodeCases() []openai.ChatCompletionRequest {
	msgs := []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: "You are <ctxls> & friends: \"quoted\", \u2028 line sep, é, 😀, \x01 control"},
		{Role: openai.ChatMessageRoleUser, Content: "question with </script> and a tab\t"},
		{Role: openai.ChatMessageRoleAssistant, Content: "", ToolCalls: []openai.ToolCall{{ID: "c1", Type: openai.ToolTypeFunction,
			Function: openai.FunctionCall{Name: "read_file", Arguments: `{"path":"a<b>.go"}`}}}},
		{Role: openai.ChatMessageRoleTool, Content: "file text\nwith lines", ToolCallID: "c1"},
		{Role: openai.ChatMessageRoleUser, MultiContent: []openai.ChatMessagePart{
			{Type: openai.ChatMessagePartTypeText, Text: "look"},
			{Type: openai.ChatMessagePartTypeImageURL, ImageURL: &openai.ChatMessageImageURL{URL: "data:image/png;base64,iVBORw0KGgo="}}}},
		{Role: openai.ChatMessageRoleAssistant, Content: "an answer", ReasoningContent: "thought", Name: "n"},
	}
	tools := []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
		Name: "read_file", Description: "reads <a> file",
		Parameters: jsonschema.Definition{Type: jsonschema.Object, Properties: map[string]jsonschema.Definition{"path": {Type: jsonschema.String}}}}}}
	return []openai.ChatCompletionRequest{
		{Model: "gpt-4o", Messages: msgs, Stream: true, StreamOptions: &openai.StreamOptions{IncludeUsage: true}, Tools: tools},
		{Model: `we"ird<model>`, Messages: msgs[:2], Stream: true},
		{Model: "m", Messages: []openai.ChatCompletionMessage{}, Stream: true},
		{Model: "m", Messages: msgs, MaxTokens: 10, Temperature: 0.5},
	}
}

// TestEncodedBodyIsGoOpenAIs: the body the engine sends is the one
// go-openai would have encoded (encoding/json of the request), byte for
// byte, whether its messages come from the cache or not.
func TestEncodedBodyIsGoOpenAIs(t *testing.T) {
	var c msgCache
	for round := range 2 { // the second round's plain messages come from the cache
		for i, req := range encodeCases() {
			want, err := json.Marshal(req)
			if err != nil {
				t.Fatal(err)
			}
			got, ok, err := c.requestBody(req)
			if err != nil || !ok {
				t.Fatalf("round %d case %d: ok %v err %v", round, i, ok, err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("round %d case %d:\n got %s\nwant %s", round, i, got, want)
			}
		}
	}
	if len(c.cur) == 0 {
		t.Fatal("nothing was cached")
	}
	// A message that go-openai refuses is an error, as go-openai's own.
	bad := openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "x",
		MultiContent: []openai.ChatMessagePart{{Type: openai.ChatMessagePartTypeText, Text: "y"}}}}}
	if _, _, err := c.requestBody(bad); err == nil {
		t.Fatal("a message with both content and parts was encoded")
	}
}

// TestEncodedCacheBounded: the cache keeps at most about maxEncodedBytes,
// and what the last turns sent stays in it.
func TestEncodedCacheBounded(t *testing.T) {
	var c msgCache
	big := strings.Repeat("x", 64<<10)
	var buf bytes.Buffer
	var msg openai.ChatCompletionMessage
	for i := range 1000 { // 64 MB of messages
		msg = openai.ChatCompletionMessage{Role: "user", Content: big + string(rune('a'+i%26)) + strings.Repeat("y", i)}
		buf.Reset()
		if err := c.encodeMessages(&buf, []openai.ChatCompletionMessage{msg}); err != nil {
			t.Fatal(err)
		}
	}
	total := 0
	for _, m := range []map[textID]encodedMsg{c.cur, c.prev} {
		for _, e := range m {
			total += len(e.json) + len(e.key.content)
		}
	}
	if total > maxEncodedBytes {
		t.Fatalf("the cache holds %d bytes, over %d", total, maxEncodedBytes)
	}
	k, _ := plainKey(&msg)
	if _, ok := c.get(k); !ok {
		t.Fatal("the last message sent is not cached")
	}
	// The same text elsewhere in memory is not taken for it (it is
	// encoded again, to the same JSON).
	again := msg
	again.Content = strings.Clone(msg.Content)
	k, _ = plainKey(&again)
	if _, ok := c.get(k); ok {
		t.Fatal("a copy of a text was found by the original's address")
	}
}

// TestStreamSendsPreparedBody: a turn's request reaches the provider with
// every message, through go-openai, its retries included.
func TestStreamSendsPreparedBody(t *testing.T) {
	var bodies [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, b)
		if len(bodies) == 1 {
			w.Header().Set("Retry-After", "0")
			http.Error(w, `{"error":{"message":"busy"}}`, http.StatusTooManyRequests)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	e := &Engine{Log: slog.New(slog.DiscardHandler)}
	req := encodeCases()[0]
	text, _, _, _, err := e.stream(context.Background(), Resolved{Provider: Provider{BaseURL: srv.URL + "/v1", Model: req.Model}}, req.Messages, func() error { return nil }, func(string) {}, nopEvents{}, req.Tools)
	if err != nil || text != "hi" {
		t.Fatalf("text %q err %v", text, err)
	}
	if len(bodies) != 2 {
		t.Fatalf("%d requests, want 2 (one retried)", len(bodies))
	}
	for i, b := range bodies {
		var got openai.ChatCompletionRequest
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("request %d: %v: %s", i, err, b)
		}
		if len(got.Messages) != len(req.Messages) || got.Messages[0].Content != req.Messages[0].Content || !got.Stream || len(got.Tools) != 1 {
			t.Fatalf("request %d lost something: %s", i, b)
		}
	}
}

type nopEvents struct{}

func (nopEvents) Emit(Event) {}
