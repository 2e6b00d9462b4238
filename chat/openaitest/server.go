// Package openaitest is an OpenAI-compatible chat-completions server for
// tests: scripted replies streamed as Server-Sent Events exactly as OpenAI
// sends them (role delta, content deltas, tool-call deltas, finish reason,
// usage chunk, [DONE]), OpenAI error bodies with Retry-After, and faults
// (connection reset, malformed SSE, split writes, stalls, mid-stream errors,
// no [DONE]). It records every request with its exact bytes and whether the
// client went away. It listens on 127.0.0.1 only.
//
// Image parts of user messages are checked as OpenAI checks them (a base64
// data URL of an image, or an http(s) URL; user messages only); what the
// images show is not looked at.
//
// Not simulated: function-call arguments validation, logprobs, n > 1,
// audio, the Responses API.
package openaitest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/chat/internal/fakeprovider"
	"github.com/ctxls/ctxls/prompts"
	"github.com/sashabaranov/go-openai"
)

// Fault is a way for a streamed reply to go wrong.
type Fault int

// Faults.
const (
	FaultNone           Fault = iota
	FaultReset                // close the TCP connection mid-stream
	FaultMalformed            // a data: line that is not JSON
	FaultStall                // stop sending, keep the connection until the client leaves
	FaultSplit                // write every event in pieces, splitting inside the JSON
	FaultMidStreamError       // an SSE error event
	FaultNoDone               // end the body without data: [DONE]
)

// ToolCall is a tool call the reply streams.
type ToolCall struct{ ID, Name, Arguments string }

// Reply is one scripted answer.
type Reply struct {
	Chunks        []string
	ToolCalls     []ToolCall
	FinishReason  string
	Usage         *openai.Usage
	Delay         time.Duration // before each chunk; once before the answer to a request that does not stream
	Status        int           // non-200: an error body instead
	ErrorMessage  string
	ErrorType     string
	ErrorCode     string
	RetryAfter    string
	TextErrorBody bool
	Fault         Fault
	FaultAfter    int // chunks sent before the fault
	// HoldAt lists chunk indexes the stream stops before until Release is
	// called once for each: a test paces a stream by what it has checked, not
	// by the clock.
	HoldAt []int
}

// HugeReply is n bytes of text in 1 KB chunks.
func HugeReply(n int) Reply { return Reply{Chunks: fakeprovider.Chunks(n)} }

// Request is one chat request as received.
type Request struct {
	Body      []byte
	Parsed    openai.ChatCompletionRequest
	Header    http.Header
	StartedAt time.Time
	// FinishedAt is when a streamed answer's last event ([DONE]) was
	// written and flushed.
	FinishedAt  time.Time
	Cancelled   bool
	CancelledAt time.Time
}

// ModelContext is what the daemon told the model beside the conversation:
// the system prompt, then the context blocks (<ctxls-context>, before the
// user's messages: the relevant files, the reminder, the open files), the
// oldest first. A turn's block holds what is new or changed since the
// blocks before it (TurnContext gives the last one alone).
func (r Request) ModelContext() string {
	var b strings.Builder
	b.WriteString(r.SystemPrompt() + "\n")
	for _, m := range r.Parsed.Messages {
		if m.Role == openai.ChatMessageRoleUser {
			ctx, _ := prompts.SplitContext(Text(m))
			b.WriteString(ctx)
		}
	}
	return b.String()
}

// Text is a message's text: its content, or the text parts of a message
// sent as parts (one with images).
func Text(m openai.ChatCompletionMessage) string {
	if len(m.MultiContent) == 0 {
		return m.Content
	}
	var b strings.Builder
	for _, p := range m.MultiContent {
		if p.Type == openai.ChatMessagePartTypeText {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// Images are the image parts' URLs of a message, in order.
func Images(m openai.ChatCompletionMessage) []string {
	var out []string
	for _, p := range m.MultiContent {
		if p.Type == openai.ChatMessagePartTypeImageURL && p.ImageURL != nil {
			out = append(out, p.ImageURL.URL)
		}
	}
	return out
}

// checkImages refuses what OpenAI refuses of image parts: a URL that is
// neither http(s) nor a base64 data URL of an image, and data that is not
// base64.
func checkImages(msgs []openai.ChatCompletionMessage) error {
	for i, m := range msgs {
		for _, p := range m.MultiContent {
			switch p.Type {
			case openai.ChatMessagePartTypeText:
			case openai.ChatMessagePartTypeImageURL:
				if p.ImageURL == nil {
					return fmt.Errorf("messages[%d]: image_url part without image_url", i)
				}
				u := p.ImageURL.URL
				if strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://") {
					continue
				}
				head, data, ok := strings.Cut(u, ",")
				if !ok || !strings.HasPrefix(head, "data:image/") || !strings.HasSuffix(head, ";base64") {
					return fmt.Errorf("messages[%d]: Invalid image URL: expected a base64-encoded data URL with an image MIME type", i)
				}
				if _, err := base64.StdEncoding.DecodeString(data); err != nil {
					return fmt.Errorf("messages[%d]: Invalid base64 image data", i)
				}
			default:
				return fmt.Errorf("messages[%d]: unknown content part type %q", i, p.Type)
			}
		}
		if m.Role != openai.ChatMessageRoleUser && len(Images(m)) > 0 {
			return fmt.Errorf("messages[%d]: image content is only for role 'user'", i)
		}
	}
	return nil
}

// TurnContext is the block before the user's last message: what this turn
// adds to the context the conversation holds.
func (r Request) TurnContext() string {
	ctx, _ := prompts.SplitContext(r.lastUser())
	return ctx
}

// Question is the user's last message without the turn's context.
func (r Request) Question() string {
	_, q := prompts.SplitContext(r.lastUser())
	return q
}

func (r Request) lastUser() string {
	for i := len(r.Parsed.Messages) - 1; i >= 0; i-- {
		if m := r.Parsed.Messages[i]; m.Role == openai.ChatMessageRoleUser {
			return Text(m)
		}
	}
	return ""
}

// SystemPrompt is the content of the first system message.
func (r Request) SystemPrompt() string {
	for _, m := range r.Parsed.Messages {
		if m.Role == openai.ChatMessageRoleSystem {
			return m.Content
		}
	}
	return ""
}

// ToolResults maps the tool call ids of the request's tool messages to
// their content: what the daemon sent back to the model.
func (r Request) ToolResults() map[string]string {
	out := map[string]string{}
	for _, m := range r.Parsed.Messages {
		if m.Role == openai.ChatMessageRoleTool {
			out[m.ToolCallID] = m.Content
		}
	}
	return out
}

// Streamed are the streamed requests so far: the turns' (a title request
// does not stream).
func (s *Server) Streamed() []Request { return s.core.Streamed() }

// LastStreamed is the last streamed request (a title request, made in the
// background after a turn, may come after it); the zero Request if none.
func (s *Server) LastStreamed() Request { return s.core.LastStreamed() }

// Option configures a Server.
type Option func(*Server)

// WithDefault sets the reply served when the queue is empty.
func WithDefault(r Reply) Option { return func(s *Server) { s.core.Default = r } }

// WithTitles answers the daemon's title requests (their system prompt is
// prompts.TitleSystem) with r instead of the queue, so a title asked in the
// background, whenever it comes, never takes a reply queued for a turn.
func WithTitles(r Reply) Option { return func(s *Server) { s.titles = &r } }

// WithSummaries answers the daemon's compaction requests (their system
// prompt is prompts.SummarySystem's) with r instead of the queue, so a
// compaction a long shared session needs never takes a reply queued for a
// turn.
func WithSummaries(r Reply) Option { return func(s *Server) { s.summaries = &r } }

// WithModels sets what GET /models lists.
func WithModels(names ...string) Option { return func(s *Server) { s.core.Models = names } }

// WithAPIKey makes the server require "Authorization: Bearer key".
func WithAPIKey(key string) Option { return func(s *Server) { s.core.Key = key } }

// Server is the fake provider.
type Server struct {
	URL string // base URL ending in /v1

	// core holds the replies and the requests.
	core *fakeprovider.Core[Reply, Request]
	// titles and summaries are WithTitles' and WithSummaries' replies,
	// set before the server starts.
	titles, summaries *Reply
}

// New starts a server, closed when the test ends.
func New(t testing.TB, opts ...Option) *Server {
	s := &Server{core: fakeprovider.New(t, "openaitest", Reply{Chunks: []string{"ok"}}, marks)}
	for _, o := range opts {
		o(s)
	}
	s.core.Route = s.route
	s.URL = s.core.Serve(s.serve) + "/v1"
	return s
}

func marks(r *Request) fakeprovider.Marks {
	return fakeprovider.Marks{Stream: r.Parsed.Stream, FinishedAt: &r.FinishedAt, Cancelled: &r.Cancelled, CancelledAt: &r.CancelledAt}
}

// route answers title and summary requests, ahead of the queue, with
// WithTitles' and WithSummaries' replies.
func (s *Server) route(r *Request) (Reply, bool) {
	switch {
	case s.titles != nil && r.SystemPrompt() == prompts.TitleSystem():
		return *s.titles, true
	case s.summaries != nil && prompts.IsSummarySystem(r.SystemPrompt()):
		return *s.summaries, true
	}
	return Reply{}, false
}

// Enqueue adds replies, served in order, one per chat request.
func (s *Server) Enqueue(r ...Reply) { s.core.Enqueue(r...) }

// Clear drops the replies still queued: a test whose client died mid-turn
// keeps what it queued for that turn from the next client.
func (s *Server) Clear() { s.core.Clear() }

// Release lets one held stream (Reply.HoldAt) go on to its next hold or its
// end. A release given before a stream reaches its hold is kept for it.
func (s *Server) Release() { s.core.Release() }

// Requests returns copies of the chat requests received so far.
func (s *Server) Requests() []Request { return s.core.Requests() }

// WaitRequests waits until n chat requests have arrived.
func (s *Server) WaitRequests(n int, timeout time.Duration) []Request {
	s.core.T.Helper()
	return s.core.WaitRequests(n, timeout)
}

// WaitCancelled waits until the client has gone away from request i
// (0-based) and returns that request.
func (s *Server) WaitCancelled(i int, timeout time.Duration) Request {
	s.core.T.Helper()
	return s.core.WaitCancelled(i, timeout)
}

func writeError(w http.ResponseWriter, status int, message, typ, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	var c any
	if code != "" {
		c = code
	}
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": message, "type": typ, "param": nil, "code": c}})
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if !s.core.KeyOK(r.Header.Get("Authorization"), "Bearer ") {
		writeError(w, 401, "Incorrect API key provided.", "invalid_request_error", "invalid_api_key")
		return
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/v1/models":
		var data []map[string]any
		for _, m := range s.core.Models {
			data = append(data, map[string]any{"id": m, "object": "model", "created": 1700000000, "owned_by": "openaitest"})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
	case r.Method == http.MethodPost && r.URL.Path == "/v1/chat/completions":
		s.chat(w, r)
	default:
		writeError(w, 404, fmt.Sprintf("Unknown request URL: %s %s.", r.Method, r.URL.Path), "invalid_request_error", "unknown_url")
	}
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	var body bytes.Buffer
	body.ReadFrom(r.Body)
	req := &Request{Body: body.Bytes(), Header: r.Header.Clone(), StartedAt: time.Now()}
	if err := json.Unmarshal(req.Body, &req.Parsed); err != nil {
		writeError(w, 400, "We could not parse the JSON body of your request.", "invalid_request_error", "")
		return
	}
	if err := checkImages(req.Parsed.Messages); err != nil {
		writeError(w, 400, err.Error(), "invalid_request_error", "invalid_image")
		return
	}
	reply := s.core.Record(req, true)
	stop := s.core.Watch(r.Context(), req)
	defer stop()

	if reply.Status != 0 && reply.Status != 200 {
		fakeprovider.Failed(w, reply.Status, reply.RetryAfter, reply.TextErrorBody, reply.ErrorMessage, func() {
			typ := reply.ErrorType
			if typ == "" {
				typ = "server_error"
				if reply.Status < 500 {
					typ = "invalid_request_error"
				}
			}
			writeError(w, reply.Status, reply.ErrorMessage, typ, reply.ErrorCode)
		})
		return
	}
	model := req.Parsed.Model
	finish := reply.FinishReason
	if finish == "" {
		finish = "stop"
		if len(reply.ToolCalls) > 0 {
			finish = "tool_calls"
		}
	}
	if !req.Parsed.Stream {
		if fakeprovider.Pause(r.Context(), reply.Delay) {
			complete(w, reply, model, finish)
		}
		return
	}
	s.stream(w, r, req, reply, model, finish)
}

func complete(w http.ResponseWriter, reply Reply, model, finish string) {
	msg := map[string]any{"role": "assistant", "content": strings.Join(reply.Chunks, "")}
	if len(reply.ToolCalls) > 0 {
		var calls []map[string]any
		for _, tc := range reply.ToolCalls {
			calls = append(calls, map[string]any{"id": tc.ID, "type": "function", "function": map[string]any{"name": tc.Name, "arguments": tc.Arguments}})
		}
		msg["tool_calls"] = calls
	}
	usage := reply.Usage
	if usage == nil {
		usage = &openai.Usage{PromptTokens: 10, CompletionTokens: len(reply.Chunks), TotalTokens: 10 + len(reply.Chunks)}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-test", "object": "chat.completion", "created": time.Now().Unix(), "model": model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   usage,
	})
}

func (s *Server) stream(w http.ResponseWriter, r *http.Request, req *Request, reply Reply, model, finish string) {
	st := s.core.Stream(w, r, reply.Fault == FaultSplit)
	created := time.Now().Unix()
	chunk := func(delta map[string]any, finishReason any) fakeprovider.Event {
		return fakeprovider.JSON("", map[string]any{
			"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": created, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finishReason}},
		})
	}
	if !st.Send(chunk(map[string]any{"role": "assistant", "content": ""}, nil)) {
		return
	}
	// The deltas: every event until the finish chunk.
	events := make([]fakeprovider.Event, 0, len(reply.Chunks)+len(reply.ToolCalls)*2)
	for _, c := range reply.Chunks {
		events = append(events, chunk(map[string]any{"content": c}, nil))
	}
	for i, tc := range reply.ToolCalls {
		args := tc.Arguments
		cut := len(args) / 2
		events = append(events, chunk(map[string]any{"tool_calls": []any{map[string]any{
			"index": i, "id": tc.ID, "type": "function", "function": map[string]any{"name": tc.Name, "arguments": args[:cut]}}}}, nil))
		events = append(events, chunk(map[string]any{"tool_calls": []any{map[string]any{
			"index": i, "function": map[string]any{"arguments": args[cut:]}}}}, nil))
	}
	for i := range events {
		events[i].Counted = true
	}
	pace := fakeprovider.Pacing{Delay: reply.Delay, HoldAt: reply.HoldAt, Fault: reply.Fault != FaultNone && reply.Fault != FaultSplit, FaultAfter: reply.FaultAfter}
	if !st.Play(events, pace, func() { fault(st, reply) }) {
		return
	}
	if !st.Send(chunk(map[string]any{}, finish)) {
		return
	}
	if reply.Usage != nil || req.Parsed.StreamOptions != nil && req.Parsed.StreamOptions.IncludeUsage {
		u := reply.Usage
		if u == nil {
			u = &openai.Usage{PromptTokens: 10, CompletionTokens: len(reply.Chunks)}
		}
		u.TotalTokens = u.PromptTokens + u.CompletionTokens
		if !st.Send(fakeprovider.JSON("", map[string]any{"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": created, "model": model, "choices": []any{}, "usage": u})) {
			return
		}
	}
	st.Send(fakeprovider.Event{Data: []byte("[DONE]")})
	s.core.Finish(req)
}

func fault(st *fakeprovider.Stream, reply Reply) {
	switch reply.Fault {
	case FaultReset:
		st.Reset()
	case FaultMalformed:
		st.Send(fakeprovider.Event{Data: []byte(`{"id": "chatcmpl-test", "choices": [ this is not json`)})
	case FaultStall:
		st.Stall()
	case FaultMidStreamError:
		msg := reply.ErrorMessage
		if msg == "" {
			msg = "The server had an error while processing your request."
		}
		st.Send(fakeprovider.JSON("", map[string]any{"error": map[string]any{"message": msg, "type": "server_error", "param": nil, "code": nil}}))
	case FaultNoDone:
		// End the body here.
	}
}
