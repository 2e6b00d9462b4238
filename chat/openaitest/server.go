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
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

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
func HugeReply(n int) Reply {
	var r Reply
	for n > 0 {
		c := min(n, 1024)
		r.Chunks = append(r.Chunks, strings.Repeat("x", c))
		n -= c
	}
	return r
}

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
func (s *Server) Streamed() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Parsed.Stream {
			out = append(out, r)
		}
	}
	return out
}

// LastStreamed is the last streamed request (a title request, made in the
// background after a turn, may come after it); the zero Request if none.
func (s *Server) LastStreamed() Request {
	all := s.Streamed()
	if len(all) == 0 {
		return Request{}
	}
	return all[len(all)-1]
}

// Option configures a Server.
type Option func(*Server)

// WithDefault sets the reply served when the queue is empty.
func WithDefault(r Reply) Option { return func(s *Server) { s.def = r } }

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
func WithModels(names ...string) Option { return func(s *Server) { s.models = names } }

// WithAPIKey makes the server require "Authorization: Bearer key".
func WithAPIKey(key string) Option { return func(s *Server) { s.key = key } }

// Server is the fake provider.
type Server struct {
	URL string // base URL ending in /v1

	t      testing.TB
	def    Reply
	models []string
	key    string

	// mu guards queue, reqs and changed.
	mu     sync.Mutex
	queue  []Reply
	reqs   []*Request
	titles *Reply // WithTitles
	// summaries is WithSummaries' reply.
	summaries *Reply
	changed   chan struct{}
	done      chan struct{}
	release   chan struct{} // one value per Release, taken by a held stream
}

// New starts a server, closed when the test ends.
func New(t testing.TB, opts ...Option) *Server {
	s := &Server{t: t, def: Reply{Chunks: []string{"ok"}}, models: []string{"test-model"}, changed: make(chan struct{}), done: make(chan struct{}), release: make(chan struct{}, 64)}
	for _, o := range opts {
		o(s)
	}
	hs := httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = hs.URL + "/v1"
	t.Cleanup(func() {
		close(s.done)
		hs.CloseClientConnections()
		hs.Close()
	})
	return s
}

// Enqueue adds replies, served in order, one per chat request.
func (s *Server) Enqueue(r ...Reply) {
	s.mu.Lock()
	s.queue = append(s.queue, r...)
	s.mu.Unlock()
}

// Clear drops the replies still queued: a test whose client died mid-turn
// keeps what it queued for that turn from the next client.
func (s *Server) Clear() {
	s.mu.Lock()
	s.queue = nil
	s.mu.Unlock()
}

// Release lets one held stream (Reply.HoldAt) go on to its next hold or its
// end. A release given before a stream reaches its hold is kept for it.
func (s *Server) Release() {
	select {
	case s.release <- struct{}{}:
	case <-s.done:
	}
}

// Requests returns copies of the chat requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.reqs))
	for i, r := range s.reqs {
		out[i] = *r
	}
	return out
}

// WaitRequests waits until n chat requests have arrived.
func (s *Server) WaitRequests(n int, timeout time.Duration) []Request {
	s.t.Helper()
	s.wait(timeout, fmt.Sprintf("%d requests did not arrive", n), func() bool { return len(s.reqs) >= n })
	return s.Requests()
}

// WaitCancelled waits until the client has gone away from request i
// (0-based) and returns that request.
func (s *Server) WaitCancelled(i int, timeout time.Duration) Request {
	s.t.Helper()
	s.wait(timeout, fmt.Sprintf("request %d was not cancelled", i), func() bool { return i < len(s.reqs) && s.reqs[i].Cancelled })
	return s.Requests()[i]
}

// wait blocks until cond (called with s.mu held) holds, failing the test
// after timeout.
func (s *Server) wait(timeout time.Duration, failure string, cond func() bool) {
	s.t.Helper()
	deadline := time.After(timeout)
	for {
		s.mu.Lock()
		ok, ch := cond(), s.changed
		s.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			s.t.Fatalf("openaitest: %s within %v", failure, timeout)
		}
	}
}

func (s *Server) signalLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
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
	if s.key != "" && r.Header.Get("Authorization") != "Bearer "+s.key {
		writeError(w, 401, "Incorrect API key provided.", "invalid_request_error", "invalid_api_key")
		return
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/v1/models":
		var data []map[string]any
		for _, m := range s.models {
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
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	reply := s.def
	switch {
	case s.titles != nil && req.SystemPrompt() == prompts.TitleSystem():
		reply = *s.titles
	case s.summaries != nil && prompts.IsSummarySystem(req.SystemPrompt()):
		reply = *s.summaries
	case len(s.queue) > 0:
		reply, s.queue = s.queue[0], s.queue[1:]
	}
	s.signalLocked()
	s.mu.Unlock()

	// Record the client going away.
	ctx := r.Context()
	finished := make(chan struct{})
	defer close(finished)
	go func() {
		select {
		case <-ctx.Done():
			s.mu.Lock()
			req.Cancelled, req.CancelledAt = true, time.Now()
			s.signalLocked()
			s.mu.Unlock()
		case <-finished:
		}
	}()

	if reply.Status != 0 && reply.Status != 200 {
		if reply.RetryAfter != "" {
			w.Header().Set("Retry-After", reply.RetryAfter)
		}
		if reply.TextErrorBody {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(reply.Status)
			fmt.Fprint(w, reply.ErrorMessage)
			return
		}
		typ := reply.ErrorType
		if typ == "" {
			typ = "server_error"
			if reply.Status < 500 {
				typ = "invalid_request_error"
			}
		}
		writeError(w, reply.Status, reply.ErrorMessage, typ, reply.ErrorCode)
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
		if reply.Delay > 0 {
			select {
			case <-time.After(reply.Delay):
			case <-ctx.Done():
				return
			}
		}
		s.complete(w, reply, model, finish)
		return
	}
	s.stream(w, r, req, reply, model, finish)
}

func (s *Server) complete(w http.ResponseWriter, reply Reply, model, finish string) {
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
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(200)
	created := time.Now().Unix()
	chunk := func(delta map[string]any, finishReason any) []byte {
		b, _ := json.Marshal(map[string]any{
			"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": created, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finishReason}},
		})
		return b
	}
	send := func(data []byte) bool {
		event := append(append([]byte("data: "), data...), '\n', '\n')
		if reply.Fault == FaultSplit {
			for _, part := range [][]byte{event[:3], event[3 : len(event)/2], event[len(event)/2:]} {
				if _, err := w.Write(part); err != nil {
					return false
				}
				if flusher != nil {
					flusher.Flush()
				}
				time.Sleep(time.Millisecond)
			}
			return r.Context().Err() == nil
		}
		if _, err := w.Write(event); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return r.Context().Err() == nil
	}
	if !send(chunk(map[string]any{"role": "assistant", "content": ""}, nil)) {
		return
	}
	events := make([][]byte, 0, len(reply.Chunks)+len(reply.ToolCalls)*3)
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
	for i, ev := range events {
		if reply.Fault != FaultNone && reply.Fault != FaultSplit && i == reply.FaultAfter {
			s.fault(w, r, reply, send)
			return
		}
		if slices.Contains(reply.HoldAt, i) {
			select {
			case <-s.release:
			case <-r.Context().Done():
				return
			case <-s.done:
				return
			}
		}
		if reply.Delay > 0 {
			select {
			case <-time.After(reply.Delay):
			case <-r.Context().Done():
				return
			}
		}
		if !send(ev) {
			return
		}
	}
	if reply.Fault != FaultNone && reply.Fault != FaultSplit && reply.FaultAfter >= len(events) {
		s.fault(w, r, reply, send)
		return
	}
	if !send(chunk(map[string]any{}, finish)) {
		return
	}
	if reply.Usage != nil || req.Parsed.StreamOptions != nil && req.Parsed.StreamOptions.IncludeUsage {
		u := reply.Usage
		if u == nil {
			u = &openai.Usage{PromptTokens: 10, CompletionTokens: len(reply.Chunks)}
		}
		u.TotalTokens = u.PromptTokens + u.CompletionTokens
		b, _ := json.Marshal(map[string]any{"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": created, "model": model, "choices": []any{}, "usage": u})
		if !send(b) {
			return
		}
	}
	send([]byte("[DONE]"))
	s.mu.Lock()
	req.FinishedAt = time.Now()
	s.signalLocked()
	s.mu.Unlock()
}

func (s *Server) fault(w http.ResponseWriter, r *http.Request, reply Reply, send func([]byte) bool) {
	switch reply.Fault {
	case FaultReset:
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close()
			}
		}
	case FaultMalformed:
		send([]byte(`{"id": "chatcmpl-test", "choices": [ this is not json`))
	case FaultStall:
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
	case FaultMidStreamError:
		msg := reply.ErrorMessage
		if msg == "" {
			msg = "The server had an error while processing your request."
		}
		b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "server_error", "param": nil, "code": nil}})
		send(b)
	case FaultNoDone:
		// End the body here.
	}
}
