package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/sashabaranov/go-openai"
	"github.com/sashabaranov/go-openai/jsonschema"
)

// longText is a long message (history, a file's text).
var longText = strings.Repeat("a line of <code> & \"text\" é\n", 10000)

// encodeCases are requests of every kind of message the engine sends.
func encodeCases() []openai.ChatCompletionRequest {
	long := longText
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
		{Role: openai.ChatMessageRoleUser, Content: long},
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
	if len(c.reqs[(c.next+keptRequests-1)%keptRequests]) == 0 {
		t.Fatal("nothing was cached")
	}
	// A message that go-openai refuses is an error, as go-openai's own.
	bad := openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: longText,
		MultiContent: []openai.ChatMessagePart{{Type: openai.ChatMessagePartTypeText, Text: "y"}}}}}
	if _, _, err := c.requestBody(bad); err == nil {
		t.Fatal("a message with both content and parts was encoded")
	}
}

// TestEncodedCacheBounded: the cache holds the messages of the last
// keptRequests requests and no more, found again by their texts' address.
func TestEncodedCacheBounded(t *testing.T) {
	var c msgCache
	var buf bytes.Buffer
	send := func(msgs ...openai.ChatCompletionMessage) {
		t.Helper()
		buf.Reset()
		if err := c.encodeMessages(&buf, msgs); err != nil {
			t.Fatal(err)
		}
	}
	msg := func(i int) openai.ChatCompletionMessage {
		return openai.ChatCompletionMessage{Role: "user", Content: fmt.Sprintf("message %d %s", i, strings.Repeat("x", 1000))}
	}
	first := msg(0)
	send(first)
	for i := 1; i < 100; i++ {
		send(msg(i))
	}
	held := 0
	for _, r := range c.reqs {
		held += len(r)
	}
	if held != keptRequests {
		t.Fatalf("the cache holds %d messages after 100 requests of one each, want %d", held, keptRequests)
	}
	k, _ := plainKey(&first)
	for _, r := range c.reqs {
		if _, ok := r[idOf(&k)]; ok {
			t.Fatal("the first request's message is still held")
		}
	}
	// What the last request sent is found for the next, and a copy of its
	// text elsewhere in memory is not taken for it.
	last := msg(1000)
	send(last)
	again := last
	again.Content = strings.Clone(last.Content)
	send(last, again)
	var hits int
	for _, e := range c.reqs[(c.next+keptRequests-1)%keptRequests] {
		if unsafe.StringData(e.key.content) == unsafe.StringData(last.Content) {
			hits++
		}
	}
	if hits != 1 || len(c.reqs[(c.next+keptRequests-1)%keptRequests]) != 2 {
		t.Fatalf("the last request holds %d entries, %d of them the message sent before", len(c.reqs[(c.next+keptRequests-1)%keptRequests]), hits)
	}
	if want := "[" + string(mustJSON(t, last)) + "," + string(mustJSON(t, again)) + "]"; buf.String() != want {
		t.Fatalf("encoded %s, want %s", buf.String(), want)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
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
	e := &Engine{Log: slog.New(slog.DiscardHandler), RetryWait: time.Millisecond}
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
