package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/sashabaranov/go-openai"

	"github.com/ctxls/ctxls/session"
)

// Anthropic's Messages API, beside the OpenAI-compatible one (client.go).
// The engine keeps building OpenAI's message and tool types; this file
// converts them at the edge (anthropicParams) and converts the answer back
// (text, finish reason, usage, tool calls as openai.ToolCall), so the turn
// loop, the history, the store and the tests of the engine are the same
// for both APIs. The SDK's own retries are off: streamAnthropic retries
// before the first token as stream does, so both behave alike.

// anthropicClient is the SDK's client for p: its key and base URL only
// (never ANTHROPIC_* variables or a profile file the SDK would otherwise
// read), the engine's HTTP client, and no retries of the SDK's.
func anthropicClient(p Resolved, hc *http.Client) anthropic.Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		// The SDK adds "v1/messages": a base URL given with /v1 works too.
		option.WithBaseURL(strings.TrimSuffix(strings.TrimRight(p.BaseURL, "/"), "/v1")),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0),
	}
	if key := p.APIKey(); key != "" {
		// x-api-key, the header Anthropic documents for API keys and
		// servers that speak its API (Ollama) read: the SDK's WithAPIKey
		// sends the key as "Authorization: Bearer" instead.
		opts = append(opts, option.WithHeader("x-api-key", key))
	}
	return anthropic.NewClient(opts...)
}

// streamAnthropic is stream (client.go) over Anthropic's Messages API: the
// same arguments and results, retries before the first token (429, 5xx,
// 529 overloaded, and an error event that comes before anything else),
// honouring Retry-After, the same stall timer and the same descriptions of
// errors.
func (e *Engine) streamAnthropic(ctx context.Context, p Resolved, messages []openai.ChatCompletionMessage, ready func() error, checkpoint func(string), ev Events, tools []openai.Tool) (string, string, session.Usage, []openai.ToolCall, error) {
	client := anthropicClient(p, e.HTTPClient)
	params := anthropicParams(p.Model, p.MaxOutputTokens, messages, tools)
	cacheBreakpoints(params.System, params.Tools, params.Messages)
	streamCtx, cancelStream := context.WithCancelCause(ctx)
	defer cancelStream(nil)
	stall := e.Stall
	if stall <= 0 {
		stall = 90 * time.Second
	}
	errStalled := fmt.Errorf("the provider sent nothing for %s; the answer so far is kept", stall)
	for attempt := 0; ; attempt++ {
		r := &anthropicAnswer{ready: ready, checkpoint: checkpoint, ev: ev}
		opened, err := r.read(streamCtx, client, params, stall, func() { cancelStream(errStalled) })
		switch {
		case err == nil:
			return r.text.String(), r.finish, r.usage(), r.toolCalls(), nil
		case r.readyErr != nil:
			return r.text.String(), r.finish, r.usage(), nil, r.readyErr // the store's, not the provider's
		case context.Cause(streamCtx) == errStalled:
			return r.text.String(), r.finish, r.usage(), nil, errStalled
		case ctx.Err() != nil:
			return r.text.String(), r.finish, r.usage(), nil, ctx.Err()
		case r.started || attempt == 3 || !retryable(err):
			return r.text.String(), r.finish, r.usage(), nil, describe(err, p, opened)
		}
		wait := e.retryWait(attempt)
		if d := anthropicRetryAfter(err); d > 0 {
			wait = min(d, 30*time.Second)
		}
		ev.Emit(Activity{Message: fmt.Sprintf("the provider is busy; retrying in %s", wait)})
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return "", "", session.Usage{}, nil, ctx.Err()
		}
	}
}

// anthropicAnswer is one attempt's answer as it streams in.
type anthropicAnswer struct {
	ready      func() error
	checkpoint func(string)
	ev         Events

	text    strings.Builder
	finish  string
	calls   []openai.ToolCall
	byIndex map[int64]int // content block index → its tool call
	// started: text reached the user or a tool call began; no retry then.
	started bool
	// readyErr: the answer's row could not be stored.
	readyErr error
	// The usage as reported: input (uncached), cache writes and reads,
	// output.
	input, created, cacheRead, output int64
}

// read streams one attempt into r. opened says whether the provider
// answered with a stream (for the error's description).
func (r *anthropicAnswer) read(ctx context.Context, client anthropic.Client, params anthropic.MessageNewParams, stall time.Duration, stalled func()) (opened bool, err error) {
	stream := client.Messages.NewStreaming(ctx, params)
	defer stream.Close()
	if err := stream.Err(); err != nil {
		return false, err // the HTTP status, or no connection
	}
	timer := time.AfterFunc(stall, stalled)
	defer timer.Stop()
	for stream.Next() {
		timer.Reset(stall)
		if err := r.event(stream.Current()); err != nil {
			return true, err
		}
	}
	if err := stream.Err(); err != nil {
		return true, err
	}
	for i := range r.calls {
		if strings.TrimSpace(r.calls[i].Function.Arguments) == "" {
			r.calls[i].Function.Arguments = "{}" // a tool called without input
		}
	}
	return true, nil
}

// event takes one streamed event.
func (r *anthropicAnswer) event(ev anthropic.MessageStreamEventUnion) error {
	switch ev.Type {
	case "message_start":
		u := ev.Message.Usage
		r.input, r.created, r.cacheRead, r.output = u.InputTokens, u.CacheCreationInputTokens, u.CacheReadInputTokens, u.OutputTokens
	case "content_block_start":
		switch b := ev.ContentBlock; b.Type {
		case "tool_use":
			if r.byIndex == nil {
				r.byIndex = map[int64]int{}
			}
			r.byIndex[ev.Index] = len(r.calls)
			r.calls = append(r.calls, openai.ToolCall{ID: b.ID, Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: b.Name}})
			r.started = true
		case "text":
			return r.delta(b.Text)
		}
	case "content_block_delta":
		switch d := ev.Delta; d.Type {
		case "text_delta":
			return r.delta(d.Text)
		case "input_json_delta":
			if i, ok := r.byIndex[ev.Index]; ok {
				r.calls[i].Function.Arguments += d.PartialJSON
			}
		}
	case "message_delta":
		r.finish = finishReason(ev.Delta.StopReason)
		// The counts are cumulative; the input ones may come here too.
		u := ev.Usage
		if u.JSON.OutputTokens.Valid() {
			r.output = u.OutputTokens
		}
		if u.JSON.InputTokens.Valid() && u.InputTokens > 0 {
			r.input = u.InputTokens
		}
		if u.JSON.CacheCreationInputTokens.Valid() && u.CacheCreationInputTokens > 0 {
			r.created = u.CacheCreationInputTokens
		}
		if u.JSON.CacheReadInputTokens.Valid() && u.CacheReadInputTokens > 0 {
			r.cacheRead = u.CacheReadInputTokens
		}
	}
	return nil
}

// delta is streamed text: checkpointed and sent on, once the answer's row
// is ready.
func (r *anthropicAnswer) delta(s string) error {
	if s == "" {
		return nil
	}
	if err := r.ready(); err != nil {
		r.readyErr = err
		return err
	}
	r.started = true
	r.text.WriteString(s)
	r.checkpoint(r.text.String()) // no copy: a Builder's strings stay valid
	r.ev.Emit(TextDelta{Text: s})
	return nil
}

// usage is the attempt's usage as ctxls keeps it: the prompt is every
// input token, cached or not; CachedTokens those read from the cache.
func (r *anthropicAnswer) usage() session.Usage {
	return session.Usage{PromptTokens: int(r.input + r.created + r.cacheRead), CompletionTokens: int(r.output), CachedTokens: int(r.cacheRead)}
}

func (r *anthropicAnswer) toolCalls() []openai.ToolCall { return r.calls }

// finishReason maps Anthropic's stop reason onto OpenAI's finish reasons,
// which the engine knows.
func finishReason(s anthropic.StopReason) string {
	switch s {
	case "":
		return ""
	case "max_tokens", "model_context_window_exceeded":
		return string(openai.FinishReasonLength)
	case "tool_use":
		return string(openai.FinishReasonToolCalls)
	case "refusal":
		return string(openai.FinishReasonContentFilter)
	}
	return string(openai.FinishReasonStop) // end_turn, stop_sequence, pause_turn
}

// anthropicParams converts the engine's input into a Messages request:
// the leading system messages (the system prompt, a summary of earlier
// turns) become the system parameter; user and assistant text become text
// blocks, an assistant's tool calls tool_use blocks, and tool results
// (role tool) tool_result blocks in a user message. Messages of the same
// role in a row are merged into one, consecutive tool results included,
// as Anthropic requires the roles to alternate; a system message further
// on (a context switch kept in the history) is a note in a user message.
func anthropicParams(model string, maxTokens int, messages []openai.ChatCompletionMessage, tools []openai.Tool) anthropic.MessageNewParams {
	params := anthropic.MessageNewParams{Model: model, MaxTokens: int64(maxTokens)}
	i := 0
	for ; i < len(messages) && messages[i].Role == openai.ChatMessageRoleSystem; i++ {
		if strings.TrimSpace(messages[i].Content) != "" {
			params.System = append(params.System, anthropic.TextBlockParam{Text: messages[i].Content})
		}
	}
	var msgs []anthropicMessage
	add := func(user bool, blocks ...anthropic.ContentBlockParamUnion) {
		if len(blocks) == 0 {
			return
		}
		if n := len(msgs); n > 0 && msgs[n-1].user == user {
			msgs[n-1].blocks = append(msgs[n-1].blocks, blocks...)
			return
		}
		msgs = append(msgs, anthropicMessage{user: user, blocks: blocks})
	}
	for _, m := range messages[i:] {
		switch m.Role {
		case openai.ChatMessageRoleSystem:
			add(true, textBlocks("<system-note>\n"+m.Content+"\n</system-note>")...)
		case openai.ChatMessageRoleUser:
			add(true, userBlocks(m)...)
		case openai.ChatMessageRoleAssistant:
			blocks := textBlocks(m.Content)
			for _, c := range m.ToolCalls {
				blocks = append(blocks, anthropic.NewToolUseBlock(c.ID, toolInput(c.Function.Arguments), c.Function.Name))
			}
			add(false, blocks...)
		case openai.ChatMessageRoleTool:
			result := anthropic.ToolResultBlockParam{ToolUseID: m.ToolCallID}
			if strings.TrimSpace(m.Content) != "" {
				result.Content = []anthropic.ToolResultBlockParamContentUnion{{OfText: &anthropic.TextBlockParam{Text: m.Content}}}
			}
			add(true, anthropic.ContentBlockParamUnion{OfToolResult: &result})
		}
	}
	if len(msgs) > 0 && !msgs[0].user {
		// The API wants a user message first.
		msgs = append([]anthropicMessage{{user: true, blocks: textBlocks("(the conversation so far)")}}, msgs...)
	}
	for _, m := range msgs {
		if m.user {
			params.Messages = append(params.Messages, anthropic.NewUserMessage(m.blocks...))
		} else {
			params.Messages = append(params.Messages, anthropic.NewAssistantMessage(m.blocks...))
		}
	}
	for _, t := range tools {
		if t.Function == nil {
			continue
		}
		params.Tools = append(params.Tools, anthropic.ToolUnionParam{OfTool: anthropicTool(*t.Function)})
	}
	return params
}

// anthropicMessage is a message of a Messages request being built.
type anthropicMessage struct {
	user   bool
	blocks []anthropic.ContentBlockParamUnion
}

// userBlocks is a user message as content blocks: its text, and its image
// parts (base64 data URLs, see withImages) as image blocks.
func userBlocks(m openai.ChatCompletionMessage) []anthropic.ContentBlockParamUnion {
	if len(m.MultiContent) == 0 {
		return textBlocks(m.Content)
	}
	var blocks []anthropic.ContentBlockParamUnion
	for _, p := range m.MultiContent {
		switch p.Type {
		case openai.ChatMessagePartTypeText:
			blocks = append(blocks, textBlocks(p.Text)...)
		case openai.ChatMessagePartTypeImageURL:
			if p.ImageURL == nil {
				continue
			}
			head, data, _ := strings.Cut(p.ImageURL.URL, ",")
			mime := strings.TrimSuffix(strings.TrimPrefix(head, "data:"), ";base64")
			blocks = append(blocks, anthropic.NewImageBlockBase64(mime, data))
		}
	}
	return blocks
}

// textBlocks is text as content blocks: none for text that is empty or
// only white space (the API refuses such text blocks).
func textBlocks(s string) []anthropic.ContentBlockParamUnion {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	return []anthropic.ContentBlockParamUnion{anthropic.NewTextBlock(s)}
}

// toolInput is a tool call's arguments as the object the API wants ({} for
// arguments that are not one: the call's result said why it failed).
func toolInput(args string) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(args), &obj) != nil || obj == nil {
		return json.RawMessage("{}")
	}
	return json.RawMessage(args)
}

// anthropicTool is a function tool with its parameters' JSON Schema as the
// input schema.
func anthropicTool(f openai.FunctionDefinition) *anthropic.ToolParam {
	t := &anthropic.ToolParam{Name: f.Name}
	if f.Description != "" {
		t.Description = anthropic.String(f.Description)
	}
	var schema map[string]any
	if f.Parameters != nil {
		if b, err := json.Marshal(f.Parameters); err == nil {
			_ = json.Unmarshal(b, &schema)
		}
	}
	for k, v := range schema {
		switch k {
		case "type": // always "object"
		case "properties":
			t.InputSchema.Properties = v
		case "required":
			for _, r := range asSlice(v) {
				if s, ok := r.(string); ok {
					t.InputSchema.Required = append(t.InputSchema.Required, s)
				}
			}
		default:
			if t.InputSchema.ExtraFields == nil {
				t.InputSchema.ExtraFields = map[string]any{}
			}
			t.InputSchema.ExtraFields[k] = v
		}
	}
	return t
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

// cacheBreakpoints marks where Anthropic caches the request's prefix
// (cache_control breakpoints; the API allows 4, this uses at most 3). The
// input is laid out so that what changes least comes first (the tools, the
// system prompt, the history, then the new message with the turn's
// context), and a cache hit is found only at a breakpoint of the new
// request or within about 20 blocks before one:
//
//  1. the last system block: the tools and the system prompt, the same
//     from turn to turn (the tools come first in the API's order, so a
//     request without a system prompt marks its last tool instead);
//  2. the last block of the final message: this request's whole prefix,
//     for the next round or turn to read;
//  3. the last block of the user message that began the previous turn
//     (the newest user message before the final one that is not tool
//     results): the previous turn's first request wrote its prefix there
//     (2), so it is found again however many tool round trips the turn
//     made, which would put the previous request's own end (2) more than
//     20 blocks back. In a later round of a turn it is the turn's own
//     question, written by the turn's first round.
func cacheBreakpoints(system []anthropic.TextBlockParam, tools []anthropic.ToolUnionParam, msgs []anthropic.MessageParam) {
	mark := func(cc *anthropic.CacheControlEphemeralParam) { *cc = anthropic.NewCacheControlEphemeralParam() }
	switch {
	case len(system) > 0:
		mark(&system[len(system)-1].CacheControl)
	case len(tools) > 0:
		if cc := tools[len(tools)-1].GetCacheControl(); cc != nil {
			mark(cc)
		}
	}
	last := func(m anthropic.MessageParam) *anthropic.CacheControlEphemeralParam {
		content := messageContent(m)
		if len(content) == 0 {
			return nil
		}
		return content[len(content)-1].GetCacheControl()
	}
	if len(msgs) == 0 {
		return
	}
	if cc := last(msgs[len(msgs)-1]); cc != nil {
		mark(cc)
	}
	for i := len(msgs) - 2; i >= 0; i-- {
		if m := msgs[i]; m.OfUser != nil && !onlyToolResults(m.OfUser.Content) {
			if cc := last(m); cc != nil {
				mark(cc)
			}
			return
		}
	}
}

func messageContent(m anthropic.MessageParam) []anthropic.ContentBlockParamUnion {
	switch {
	case m.OfUser != nil:
		return m.OfUser.Content
	case m.OfAssistant != nil:
		return m.OfAssistant.Content
	}
	return nil
}

// onlyToolResults: a user message that carries tool results only (a round
// trip of the model's, not a question).
func onlyToolResults(blocks []anthropic.ContentBlockParamUnion) bool {
	for _, b := range blocks {
		if b.OfToolResult == nil {
			return false
		}
	}
	return len(blocks) > 0
}

// completeAnthropic is complete (client.go) over Anthropic's API: one
// answer, not streamed, its text blocks joined.
func (e *Engine) completeAnthropic(ctx context.Context, p Resolved, model, system, input string) (string, error) {
	params := anthropicParams(model, p.MaxOutputTokens, []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: system},
		{Role: openai.ChatMessageRoleUser, Content: input},
	}, nil)
	// The SDK refuses a request it expects to outlast its own 10-minute
	// default unless given a timeout; ctx bounds it anyway.
	timeout := 10 * time.Minute
	if d, ok := ctx.Deadline(); ok {
		timeout = max(time.Until(d), time.Millisecond)
	}
	client := anthropicClient(p, e.HTTPClient)
	msg, err := client.Messages.New(ctx, params, option.WithRequestTimeout(timeout))
	if err != nil {
		return "", err
	}
	var text strings.Builder
	for _, b := range msg.Content {
		if b.Type == "text" {
			text.WriteString(b.Text)
		}
	}
	return text.String(), nil
}

// listAnthropicModels is ListModels over Anthropic's GET /v1/models, every
// page.
func listAnthropicModels(ctx context.Context, r Resolved) ([]string, error) {
	client := anthropicClient(r, nil)
	pager := client.Models.ListAutoPaging(ctx, anthropic.ModelListParams{})
	var names []string
	for pager.Next() {
		names = append(names, pager.Current().ID)
	}
	if err := pager.Err(); err != nil {
		return nil, describe(err, r, false)
	}
	return names, nil
}

// anthropicStatus is the HTTP status and message of an Anthropic error. An
// error event in a stream (its response was 200) gets the status its type
// has as an HTTP error, so it is described and retried alike.
func anthropicStatus(err *anthropic.Error) (int, string) {
	status, msg := err.StatusCode, err.Message
	if status < 400 {
		switch err.Type() {
		case "overloaded_error":
			status = 529
		case "rate_limit_error":
			status = 429
		case "authentication_error":
			status = 401
		case "permission_error":
			status = 403
		case "not_found_error":
			status = 404
		case "request_too_large":
			status = 413
		case "invalid_request_error":
			status = 400
		default: // api_error and any other
			status = 500
		}
	}
	if msg == "" {
		msg = strings.TrimSpace(err.RawJSON())
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	return status, msg
}

// anthropicRetryAfter is the Retry-After (in seconds) of an Anthropic HTTP
// error, 0 if none.
func anthropicRetryAfter(err error) time.Duration {
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) || apiErr.Response == nil {
		return 0
	}
	if secs, perr := strconv.Atoi(apiErr.Response.Header.Get("Retry-After")); perr == nil && secs > 0 {
		return time.Duration(secs) * time.Second
	}
	return 0
}
