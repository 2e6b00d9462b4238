package chat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/sashabaranov/go-openai"

	"github.com/ctxls/ctxls/session"
)

// client builds a go-openai client for a provider.
func (e *Engine) client(p Resolved, capture *retryAfter) *openai.Client {
	cfg := openai.DefaultConfig(p.APIKey())
	cfg.BaseURL = p.BaseURL
	// Keep-alive comments must not end a slow local model's stream.
	cfg.EmptyMessagesLimit = 1 << 30
	base := e.HTTPClient
	if base == nil {
		base = http.DefaultClient
	}
	hc := *base
	transport := hc.Transport
	if transport == nil {
		transport = http.DefaultTransport
	}
	hc.Transport = &captureTransport{next: transport, capture: capture}
	cfg.HTTPClient = &hc
	return openai.NewClientWithConfig(cfg)
}

// retryAfter remembers the last Retry-After header (go-openai does not
// expose it on errors).
type retryAfter struct {
	mu sync.Mutex
	d  time.Duration
}

type captureTransport struct {
	next    http.RoundTripper
	capture *retryAfter
}

func (c *captureTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(withBody(r))
	if err == nil && c.capture != nil {
		if s := resp.Header.Get("Retry-After"); s != "" {
			if secs, perr := strconv.Atoi(s); perr == nil {
				c.capture.mu.Lock()
				c.capture.d = time.Duration(secs) * time.Second
				c.capture.mu.Unlock()
			}
		}
	}
	return resp, err
}

// stream runs the streamed completion with retries before the first token,
// checkpointing the answer.
func (e *Engine) stream(ctx context.Context, p Resolved, messages []openai.ChatCompletionMessage, ready func() error, checkpoint func(string), ev Events, tools []openai.Tool) (string, string, session.Usage, []openai.ToolCall, error) {
	if p.API == APIAnthropic {
		return e.streamAnthropic(ctx, p, messages, ready, checkpoint, ev, tools)
	}
	var usage session.Usage
	var calls []openai.ToolCall
	capture := &retryAfter{}
	client := e.client(p, capture)
	req := openai.ChatCompletionRequest{
		Model:         p.Model,
		Messages:      messages,
		Stream:        true,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
	}
	req.Tools = tools
	streamCtx, cancelStream := context.WithCancelCause(ctx)
	defer cancelStream(nil)
	// The body is encoded here, the messages sent before from the engine's
	// cache (see encode.go), and sent in place of go-openai's.
	sendCtx, sendReq := e.prepare(streamCtx, req)
	stream, err := e.openStream(ctx, sendCtx, client, sendReq, capture, ev)
	if err != nil {
		return "", "", usage, nil, describe(err, p, false)
	}
	defer stream.Close()

	stall := e.Stall
	if stall <= 0 {
		stall = 90 * time.Second
	}
	errStalled := fmt.Errorf("the provider sent nothing for %s; the answer so far is kept", stall)
	timer := time.AfterFunc(stall, func() { cancelStream(errStalled) })
	defer timer.Stop()

	var text strings.Builder
	finish := ""
	for {
		resp, err := stream.Recv()
		timer.Reset(stall)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if cause := context.Cause(streamCtx); cause == errStalled {
				return text.String(), finish, usage, nil, errStalled
			}
			if ctx.Err() != nil {
				return text.String(), finish, usage, nil, ctx.Err()
			}
			return text.String(), finish, usage, nil, describe(err, p, true)
		}
		if resp.Usage != nil {
			usage = session.Usage{PromptTokens: resp.Usage.PromptTokens, CompletionTokens: resp.Usage.CompletionTokens}
			if d := resp.Usage.PromptTokensDetails; d != nil {
				usage.CachedTokens = d.CachedTokens
			}
		}
		for _, c := range resp.Choices {
			if c.Delta.Content != "" {
				if err := ready(); err != nil {
					return text.String(), finish, usage, nil, err
				}
				text.WriteString(c.Delta.Content)
				checkpoint(text.String()) // no copy: a Builder's strings stay valid
				ev.Emit(TextDelta{Text: c.Delta.Content})
			}
			calls = addToolCallDeltas(calls, c.Delta.ToolCalls)
			if c.FinishReason != "" {
				finish = string(c.FinishReason)
			}
		}
	}
	return text.String(), finish, usage, calls, nil
}

// openStream starts the streamed request, retrying a busy provider (429
// or 5xx before the first token) up to three times: after the wait its
// Retry-After asked for (at most 30 s), else a doubling one.
func (e *Engine) openStream(ctx, sendCtx context.Context, client *openai.Client, req openai.ChatCompletionRequest, capture *retryAfter, ev Events) (*openai.ChatCompletionStream, error) {
	for attempt := 0; ; attempt++ {
		stream, err := client.CreateChatCompletionStream(sendCtx, req)
		if err == nil || attempt == 3 || !retryable(err) || ctx.Err() != nil {
			return stream, err
		}
		wait := e.retryWait(attempt)
		capture.mu.Lock()
		if capture.d > 0 {
			wait = min(capture.d, 30*time.Second)
			capture.d = 0
		}
		capture.mu.Unlock()
		ev.Emit(Activity{Message: fmt.Sprintf("the provider is busy; retrying in %s", wait)})
		select {
		case <-time.After(wait):
		case <-ctx.Done():
		}
	}
}

// maxCallIndex bounds a streamed tool call's index: a provider's index
// past it (or below 0) is not taken for a call.
const maxCallIndex = 255

// addToolCallDeltas adds a streamed chunk's tool-call parts to calls: a
// call's id and name come once, its arguments in pieces, each part naming
// its call by index.
func addToolCallDeltas(calls []openai.ToolCall, deltas []openai.ToolCall) []openai.ToolCall {
	for _, tc := range deltas {
		i := len(calls)
		if tc.Index != nil {
			i = *tc.Index
		}
		if i < 0 || i > maxCallIndex {
			continue
		}
		for len(calls) <= i {
			calls = append(calls, openai.ToolCall{Type: openai.ToolTypeFunction})
		}
		if tc.ID != "" {
			calls[i].ID = tc.ID
		}
		if tc.Function.Name != "" {
			calls[i].Function.Name += tc.Function.Name
		}
		calls[i].Function.Arguments += tc.Function.Arguments
	}
	return calls
}

// complete asks p's model for one answer, not streamed, to a system
// prompt and an input (titles, summaries): the answer's text ("" when it
// has none) or the provider's error as it came.
func (e *Engine) complete(ctx context.Context, p Resolved, model, system, input string) (string, error) {
	if p.API == APIAnthropic {
		return e.completeAnthropic(ctx, p, model, system, input)
	}
	resp, err := e.client(p, nil).CreateChatCompletion(ctx, openai.ChatCompletionRequest{
		Model: model,
		Messages: []openai.ChatCompletionMessage{
			{Role: openai.ChatMessageRoleSystem, Content: system},
			{Role: openai.ChatMessageRoleUser, Content: input},
		},
	})
	if err != nil || len(resp.Choices) == 0 {
		return "", err
	}
	return resp.Choices[0].Message.Content, nil
}

func retryable(err error) bool {
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	var antErr *anthropic.Error
	switch {
	case errors.As(err, &antErr):
		status, _ := anthropicStatus(antErr)
		return status == 429 || status >= 500
	case errors.As(err, &apiErr):
		return apiErr.HTTPStatusCode == 429 || apiErr.HTTPStatusCode >= 500
	case errors.As(err, &reqErr):
		return reqErr.HTTPStatusCode == 429 || reqErr.HTTPStatusCode >= 500
	}
	return false
}

// describe turns a provider error into a message a person can act on;
// started says whether a stream had begun.
func describe(err error, p Resolved, started bool) error {
	return redactedError{describeRaw(err, p, started), p.APIKey()}
}

// redactedError is a provider's failure (it wraps ErrProviderFailed beside
// the error); it hides the API key in a provider's error text: some
// proxies echo the key they were given in their error bodies, and the text
// goes to the editor, the logs and the stored answer.
type redactedError struct {
	err error
	key string
}

func (r redactedError) Error() string {
	msg := r.err.Error()
	if len(r.key) >= 8 {
		msg = strings.ReplaceAll(msg, r.key, "[API key]")
	}
	return msg
}

func (r redactedError) Unwrap() []error { return []error{r.err, ErrProviderFailed} }

func describeRaw(err error, p Resolved, started bool) error {
	status := 0
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	var antErr *anthropic.Error
	msg := err.Error()
	if errors.As(err, &apiErr) {
		status, msg = apiErr.HTTPStatusCode, apiErr.Message
	} else if errors.As(err, &reqErr) {
		status = reqErr.HTTPStatusCode
	} else if errors.As(err, &antErr) {
		status, msg = anthropicStatus(antErr)
	}
	keyEnv := p.KeyEnv()
	switch {
	case status == 401 || status == 403:
		return fmt.Errorf("the provider at %s refused the API key (HTTP %d): check %s (%s)", p.BaseURL, status, keyEnv, msg)
	case status == 404:
		return fmt.Errorf("the provider at %s does not know model %q or the URL is wrong (HTTP 404): %s", p.BaseURL, p.Model, msg)
	case status == 429:
		return fmt.Errorf("the provider at %s is rate limiting (HTTP 429) and retries did not help; try again later: %s", p.BaseURL, msg)
	case status >= 500:
		return fmt.Errorf("the provider at %s failed (HTTP %d): %s", p.BaseURL, status, msg)
	case status != 0:
		return fmt.Errorf("the provider at %s answered HTTP %d: %s", p.BaseURL, status, msg)
	}
	if started {
		return fmt.Errorf("the stream from %s broke: %v", p.BaseURL, err)
	}
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		err = urlErr.Err // "Post URL: " says nothing the message does not
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		return fmt.Errorf("could not reach the provider at %s (is it running, and is the URL right?): %v", p.BaseURL, err)
	}
	return fmt.Errorf("the request to the provider at %s failed: %v", p.BaseURL, err)
}
