// Package anthropictest is an Anthropic Messages API server for tests, the
// counterpart of openaitest: scripted replies streamed as Server-Sent
// Events exactly as Anthropic sends them (message_start, content_block_start,
// ping, content_block_delta with text_delta or input_json_delta,
// content_block_stop, message_delta with the stop reason and usage,
// message_stop), non-streamed messages, GET /v1/models, error bodies
// {"type":"error","error":{"type":...,"message":...}} with Retry-After, and
// faults (connection reset, malformed SSE, split writes, stalls, error
// events, no message_stop). It checks what the real API checks and a
// client could get wrong: the x-api-key and anthropic-version headers,
// unknown fields, max_tokens, roles that alternate starting with the user,
// non-empty text, every tool_use answered by a tool_result in the next
// message (results first), at most 4 cache_control breakpoints. It records
// every request with its exact bytes and whether the client went away. It
// listens on 127.0.0.1 only.
//
// Prompt caching is simulated honestly: each request's prefixes up to its
// cache_control breakpoints are remembered (per model), and a request is
// reported cache_read_input_tokens for the longest remembered prefix it
// repeats that ends at one of its own breakpoints or up to 20 blocks before
// one (Anthropic's lookback), cache_creation_input_tokens for what it adds
// up to its last breakpoint, and input_tokens for the rest. Tokens are
// approximated as a block's JSON bytes / 4 (rounded up), not counted with
// Anthropic's tokenizer. Image blocks are checked as the API checks them
// (user messages only, a base64 source of an image type within 5 MB, or a
// URL); what they show is not looked at. Not simulated: the minimum
// cacheable length, the 5-minute expiry, documents, thinking, server
// tools, batches.
package anthropictest

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxls/ctxls/chat/internal/fakeprovider"
	"github.com/ctxls/ctxls/prompts"
)

// Fault is a way for a streamed reply to go wrong.
type Fault int

// Faults.
const (
	FaultNone       Fault = iota
	FaultReset            // close the TCP connection mid-stream
	FaultMalformed        // a data: line that is not JSON
	FaultStall            // stop sending, keep the connection until the client leaves
	FaultSplit            // write every event in pieces, splitting inside the JSON
	FaultErrorEvent       // an SSE error event (ErrorType, default overloaded_error), then the end
	FaultNoStop           // end the body after the content, without message_delta and message_stop
)

// ToolCall is a tool call (a tool_use block) the reply streams.
type ToolCall struct{ ID, Name, Arguments string }

// Usage is the usage a reply reports.
type Usage struct {
	InputTokens              int `json:"input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	OutputTokens             int `json:"output_tokens"`
}

// Reply is one scripted answer.
type Reply struct {
	Chunks     []string
	ToolCalls  []ToolCall
	StopReason string // default end_turn, or tool_use with tool calls
	// Usage replaces the usage the server computes (nil: computed).
	Usage *Usage
	Delay time.Duration // before each chunk; once before the answer to a request that does not stream
	// Status non-200: an error body instead (ErrorType defaults from the
	// status, as Anthropic's: 429 rate_limit_error, 529 overloaded_error...).
	Status        int
	ErrorType     string
	ErrorMessage  string
	RetryAfter    string
	TextErrorBody bool // a plain-text body, as a proxy might send
	Fault         Fault
	FaultAfter    int // deltas sent before the fault (text deltas, and two per tool call)
	// HoldAt lists delta indexes the stream stops before until Release is
	// called once for each.
	HoldAt []int
}

// HugeReply is n bytes of text in 1 KB chunks.
func HugeReply(n int) Reply { return Reply{Chunks: fakeprovider.Chunks(n)} }

// CacheControl is a block's cache_control.
type CacheControl struct {
	Type string `json:"type"`
	TTL  string `json:"ttl,omitempty"`
}

// Block is a content block as received (text, image, tool_use,
// tool_result).
type Block struct {
	Type         string          `json:"type"`
	Text         string          `json:"text,omitempty"`
	ID           string          `json:"id,omitempty"`
	Name         string          `json:"name,omitempty"`
	Input        json.RawMessage `json:"input,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	Content      Blocks          `json:"content,omitempty"`
	IsError      bool            `json:"is_error,omitempty"`
	CacheControl *CacheControl   `json:"cache_control,omitempty"`
	// Source is an image block's image.
	Source *ImageSource `json:"source,omitempty"`
}

// ImageSource is an image block's source: base64 data of a media type, or
// a URL.
type ImageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

// Blocks is content: a string (one text block) or an array of blocks.
type Blocks []Block

// UnmarshalJSON takes a string or an array of blocks, refusing unknown
// fields.
func (b *Blocks) UnmarshalJSON(data []byte) error {
	var s string
	if json.Unmarshal(data, &s) == nil {
		*b = Blocks{{Type: "text", Text: s}}
		return nil
	}
	var blocks []Block
	if err := strictDecode(data, &blocks); err != nil {
		return err
	}
	*b = blocks
	return nil
}

// Message is one message of a request.
type Message struct {
	Role    string `json:"role"`
	Content Blocks `json:"content"`
}

// Tool is a tool offered.
type Tool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema"`
	Type         string          `json:"type,omitempty"`
	CacheControl *CacheControl   `json:"cache_control,omitempty"`
}

// MessagesRequest is a POST /v1/messages body as received.
type MessagesRequest struct {
	Model         string          `json:"model"`
	MaxTokens     int             `json:"max_tokens"`
	System        Blocks          `json:"system,omitempty"`
	Messages      []Message       `json:"messages"`
	Tools         []Tool          `json:"tools,omitempty"`
	Stream        bool            `json:"stream,omitempty"`
	ToolChoice    json.RawMessage `json:"tool_choice,omitempty"`
	Temperature   *float64        `json:"temperature,omitempty"`
	TopP          *float64        `json:"top_p,omitempty"`
	TopK          *int            `json:"top_k,omitempty"`
	StopSequences []string        `json:"stop_sequences,omitempty"`
	Metadata      json.RawMessage `json:"metadata,omitempty"`
	Thinking      json.RawMessage `json:"thinking,omitempty"`
	ServiceTier   string          `json:"service_tier,omitempty"`
}

// Request is one messages request as received.
type Request struct {
	Body      []byte
	Parsed    MessagesRequest
	Header    http.Header
	StartedAt time.Time
	// FinishedAt is when a streamed answer's last event (message_stop) was
	// written and flushed.
	FinishedAt  time.Time
	Cancelled   bool
	CancelledAt time.Time
	// Usage is what the server reported for the request.
	Usage Usage
}

// Text is the text of blocks, joined (a tool_result's content included).
func (b Blocks) Text() string {
	var s strings.Builder
	for _, x := range b {
		s.WriteString(x.Text)
		if x.Type == "tool_result" {
			s.WriteString(x.Content.Text())
		}
	}
	return s.String()
}

// SystemPrompt is the first system block's text (the system prompt; a
// summary of earlier turns follows it in a block of its own).
func (r Request) SystemPrompt() string {
	if len(r.Parsed.System) == 0 {
		return ""
	}
	return r.Parsed.System[0].Text
}

// ModelContext is what the daemon told the model beside the conversation,
// as openaitest's: the system prompt, then the context blocks
// (<ctxls-context>) of the user's messages, the oldest first.
func (r Request) ModelContext() string {
	var b strings.Builder
	b.WriteString(r.SystemPrompt() + "\n")
	for _, m := range r.Parsed.Messages {
		if m.Role != "user" {
			continue
		}
		for _, x := range m.Content {
			if x.Type == "text" {
				ctx, _ := prompts.SplitContext(x.Text)
				b.WriteString(ctx)
			}
		}
	}
	return b.String()
}

// TurnContext is the context block of the user's last question.
func (r Request) TurnContext() string {
	ctx, _ := prompts.SplitContext(r.lastUserText())
	return ctx
}

// Question is the user's last question without the turn's context.
func (r Request) Question() string {
	_, q := prompts.SplitContext(r.lastUserText())
	return q
}

// lastUserText is the last text block of the user's (tool results are
// not questions).
func (r Request) lastUserText() string {
	for i := len(r.Parsed.Messages) - 1; i >= 0; i-- {
		m := r.Parsed.Messages[i]
		if m.Role != "user" {
			continue
		}
		for j := len(m.Content) - 1; j >= 0; j-- {
			if m.Content[j].Type == "text" {
				return m.Content[j].Text
			}
		}
	}
	return ""
}

// ToolResults maps the tool_use ids of the request's tool_result blocks to
// their text: what the daemon sent back to the model.
func (r Request) ToolResults() map[string]string {
	out := map[string]string{}
	for _, m := range r.Parsed.Messages {
		for _, b := range m.Content {
			if b.Type == "tool_result" {
				out[b.ToolUseID] = b.Content.Text()
			}
		}
	}
	return out
}

// Breakpoint is where a request put a cache_control: in the tools (Index
// the tool's), the system blocks (Index the block's) or a message
// (Message its index, Index the block's).
type Breakpoint struct {
	In             string // "tools", "system", "messages"
	Message, Index int
}

// Breakpoints lists the request's cache_control breakpoints in order.
func (r Request) Breakpoints() []Breakpoint {
	var out []Breakpoint
	for i, t := range r.Parsed.Tools {
		if t.CacheControl != nil {
			out = append(out, Breakpoint{In: "tools", Index: i})
		}
	}
	for i, b := range r.Parsed.System {
		if b.CacheControl != nil {
			out = append(out, Breakpoint{In: "system", Index: i})
		}
	}
	for i, m := range r.Parsed.Messages {
		for j, b := range m.Content {
			if b.CacheControl != nil {
				out = append(out, Breakpoint{In: "messages", Message: i, Index: j})
			}
		}
	}
	return out
}

// Option configures a Server.
type Option func(*Server)

// WithDefault sets the reply served when the queue is empty.
func WithDefault(r Reply) Option { return func(s *Server) { s.core.Default = r } }

// WithModels sets what GET /v1/models lists.
func WithModels(names ...string) Option { return func(s *Server) { s.core.Models = names } }

// WithAPIKey makes the server require "x-api-key: key".
func WithAPIKey(key string) Option { return func(s *Server) { s.core.Key = key } }

// Server is the fake provider.
type Server struct {
	URL string // base URL (the SDK adds /v1/messages)

	// core holds the replies and the requests.
	core *fakeprovider.Core[Reply, Request]

	// cacheMu guards cache.
	cacheMu sync.Mutex
	cache   map[[32]byte]bool // the prefixes written to the cache, by hash
}

// New starts a server, closed when the test ends.
func New(t testing.TB, opts ...Option) *Server {
	s := &Server{core: fakeprovider.New(t, "anthropictest", Reply{Chunks: []string{"ok"}}, marks), cache: map[[32]byte]bool{}}
	for _, o := range opts {
		o(s)
	}
	s.URL = s.core.Serve(s.serve)
	return s
}

func marks(r *Request) fakeprovider.Marks {
	return fakeprovider.Marks{Stream: r.Parsed.Stream, FinishedAt: &r.FinishedAt, Cancelled: &r.Cancelled, CancelledAt: &r.CancelledAt}
}

// Enqueue adds replies, served in order, one per messages request.
func (s *Server) Enqueue(r ...Reply) { s.core.Enqueue(r...) }

// Release lets one held stream (Reply.HoldAt) go on.
func (s *Server) Release() { s.core.Release() }

// Requests returns copies of the messages requests received so far (the
// ones refused as malformed included).
func (s *Server) Requests() []Request { return s.core.Requests() }

// Streamed are the streamed requests so far: the turns' (title and
// summary requests do not stream).
func (s *Server) Streamed() []Request { return s.core.Streamed() }

// LastStreamed is the last streamed request; the zero Request if none.
func (s *Server) LastStreamed() Request { return s.core.LastStreamed() }

// WaitRequests waits until n messages requests have arrived.
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

// errorTypes are Anthropic's error types by HTTP status.
var errorTypes = map[int]string{
	400: "invalid_request_error", 401: "authentication_error", 403: "permission_error", 404: "not_found_error",
	413: "request_too_large", 429: "rate_limit_error", 500: "api_error", 529: "overloaded_error",
}

func errorType(status int) string {
	if t, ok := errorTypes[status]; ok {
		return t
	}
	if status >= 500 {
		return "api_error"
	}
	return "invalid_request_error"
}

// errorBody is Anthropic's error object.
func errorBody(typ, message string) []byte {
	b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": message}})
	return b
}

func writeError(w http.ResponseWriter, status int, typ, message string) {
	if typ == "" {
		typ = errorType(status)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("request-id", "req_test")
	w.WriteHeader(status)
	w.Write(errorBody(typ, message))
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if !s.core.KeyOK(r.Header.Get("x-api-key"), "") {
		writeError(w, 401, "authentication_error", "invalid x-api-key")
		return
	}
	if r.Header.Get("anthropic-version") == "" {
		writeError(w, 400, "invalid_request_error", "anthropic-version: header is required")
		return
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/v1/models":
		data := []map[string]any{}
		for _, m := range s.core.Models {
			data = append(data, map[string]any{"type": "model", "id": m, "display_name": m, "created_at": "2026-01-01T00:00:00Z"})
		}
		page := map[string]any{"data": data, "has_more": false, "first_id": nil, "last_id": nil}
		if m := s.core.Models; len(m) > 0 {
			page["first_id"], page["last_id"] = m[0], m[len(m)-1]
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(page)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
		s.messages(w, r)
	default:
		writeError(w, 404, "not_found_error", "Not found")
	}
}

func strictDecode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func (s *Server) messages(w http.ResponseWriter, r *http.Request) {
	var body bytes.Buffer
	body.ReadFrom(r.Body)
	req := &Request{Body: body.Bytes(), Header: r.Header.Clone(), StartedAt: time.Now()}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		writeError(w, 400, "invalid_request_error", "content-type must be application/json")
		return
	}
	err := strictDecode(req.Body, &req.Parsed)
	if err == nil {
		err = validate(req.Parsed)
	}
	reply := s.core.Record(req, err == nil)
	if err != nil {
		writeError(w, 400, "invalid_request_error", strings.TrimPrefix(err.Error(), "json: "))
		return
	}
	stop := s.core.Watch(r.Context(), req)
	defer stop()

	if reply.Status != 0 && reply.Status != 200 {
		fakeprovider.Failed(w, reply.Status, reply.RetryAfter, reply.TextErrorBody, reply.ErrorMessage, func() {
			writeError(w, reply.Status, reply.ErrorType, reply.ErrorMessage)
		})
		return
	}
	usage := s.cacheUsage(req.Parsed)
	usage.OutputTokens = len(reply.Chunks) + len(reply.ToolCalls)
	if reply.Usage != nil {
		usage = *reply.Usage
	}
	s.core.Update(func() { req.Usage = usage })
	stopReason := reply.StopReason
	if stopReason == "" {
		stopReason = "end_turn"
		if len(reply.ToolCalls) > 0 {
			stopReason = "tool_use"
		}
	}
	if !req.Parsed.Stream {
		if fakeprovider.Pause(r.Context(), reply.Delay) {
			complete(w, req.Parsed.Model, reply, stopReason, usage)
		}
		return
	}
	s.stream(w, r, req, reply, stopReason, usage)
}

// toolName is what the API accepts as a tool's name.
var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,128}$`)

// validate checks a request as the API does, with its messages.
func validate(m MessagesRequest) error {
	switch {
	case m.Model == "":
		return fmt.Errorf("model: Field required")
	case m.MaxTokens < 1:
		return fmt.Errorf("max_tokens: Field required (at least 1)")
	case len(m.Messages) == 0:
		return fmt.Errorf("messages: at least one message is required")
	}
	breakpoints := 0
	for i, b := range m.System {
		if b.Type != "text" {
			return fmt.Errorf("system.%d.type: Input should be 'text'", i)
		}
		if strings.TrimSpace(b.Text) == "" {
			return fmt.Errorf("system: text content blocks must contain non-whitespace text")
		}
		if b.CacheControl != nil {
			breakpoints++
		}
	}
	for i, t := range m.Tools {
		if !toolName.MatchString(t.Name) {
			return fmt.Errorf("tools.%d.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'", i)
		}
		var schema struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(t.InputSchema, &schema) != nil || schema.Type != "object" {
			return fmt.Errorf("tools.%d.input_schema.type: Input should be 'object'", i)
		}
		if t.CacheControl != nil {
			breakpoints++
		}
	}
	for i, msg := range m.Messages {
		want := "user"
		if i%2 == 1 {
			want = "assistant"
		}
		switch {
		case msg.Role != "user" && msg.Role != "assistant":
			return fmt.Errorf("messages.%d.role: Input should be 'user' or 'assistant'", i)
		case i == 0 && msg.Role != "user":
			return fmt.Errorf("messages: first message must use the \"user\" role")
		case msg.Role != want:
			return fmt.Errorf("messages: roles must alternate between \"user\" and \"assistant\", but found multiple %q roles in a row", msg.Role)
		case len(msg.Content) == 0:
			return fmt.Errorf("messages.%d: all messages must have non-empty content", i)
		}
		results := true // tool_result blocks come first
		for j, b := range msg.Content {
			if b.CacheControl != nil {
				breakpoints++
			}
			switch b.Type {
			case "text":
				if strings.TrimSpace(b.Text) == "" {
					return fmt.Errorf("messages: text content blocks must contain non-whitespace text")
				}
			case "image":
				if err := checkImage(msg.Role, b.Source); err != nil {
					return fmt.Errorf("messages.%d.content.%d.image.source: %v", i, j, err)
				}
			case "tool_use":
				var obj map[string]json.RawMessage
				if msg.Role != "assistant" || b.ID == "" || b.Name == "" || json.Unmarshal(b.Input, &obj) != nil || obj == nil {
					return fmt.Errorf("messages.%d.content.%d: a tool_use block needs an assistant message, an id, a name and an object input", i, j)
				}
			case "tool_result":
				if msg.Role != "user" {
					return fmt.Errorf("messages.%d.content.%d: tool_result blocks belong in user messages", i, j)
				}
				if !results {
					return fmt.Errorf("messages.%d: tool_result blocks must come before any other content", i)
				}
				for _, c := range b.Content {
					if c.Type != "text" || strings.TrimSpace(c.Text) == "" {
						return fmt.Errorf("messages.%d.content.%d.content: text content blocks must contain non-whitespace text", i, j)
					}
				}
			default:
				return fmt.Errorf("messages.%d.content.%d.type: unsupported here: %q", i, j, b.Type)
			}
			if b.Type != "tool_result" {
				results = false
			}
		}
		// Every tool_use is answered in the next message, and a message
		// answers only the one before.
		if err := answers(m.Messages, i); err != nil {
			return err
		}
	}
	if breakpoints > 4 {
		return fmt.Errorf("A maximum of 4 blocks with cache_control may be provided. Found %d.", breakpoints)
	}
	return nil
}

// checkImage checks an image block as the API does: in a user message, a
// base64 source of one of the four image types within 5 MB, or a URL.
func checkImage(role string, src *ImageSource) error {
	if role != "user" {
		return fmt.Errorf("image blocks belong in user messages")
	}
	if src == nil {
		return fmt.Errorf("Field required")
	}
	switch src.Type {
	case "url":
		if !strings.HasPrefix(src.URL, "https://") && !strings.HasPrefix(src.URL, "http://") {
			return fmt.Errorf("url: not a valid URL")
		}
		return nil
	case "base64":
	default:
		return fmt.Errorf("type: Input should be 'base64' or 'url'")
	}
	switch src.MediaType {
	case "image/jpeg", "image/png", "image/gif", "image/webp":
	default:
		return fmt.Errorf("media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'")
	}
	data, err := base64.StdEncoding.DecodeString(src.Data)
	if err != nil {
		return fmt.Errorf("data: invalid base64 data")
	}
	if len(data) > 5<<20 {
		return fmt.Errorf("image exceeds 5 MB maximum: %d bytes > 5242880 bytes", len(data))
	}
	return nil
}

// answers checks that the tool_result blocks of message i answer exactly
// the tool_use blocks of message i-1, and that message i's tool_use blocks
// are answered by the next message.
func answers(msgs []Message, i int) error {
	ids := func(m Message, typ string) []string {
		var out []string
		for _, b := range m.Content {
			switch {
			case b.Type == typ && typ == "tool_use":
				out = append(out, b.ID)
			case b.Type == typ:
				out = append(out, b.ToolUseID)
			}
		}
		return out
	}
	var used []string
	if i > 0 {
		used = ids(msgs[i-1], "tool_use")
	}
	for _, id := range ids(msgs[i], "tool_result") {
		if !slices.Contains(used, id) {
			return fmt.Errorf("messages.%d.content: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message", i, id)
		}
	}
	var answered []string
	if i+1 < len(msgs) {
		answered = ids(msgs[i+1], "tool_result")
	}
	for _, id := range ids(msgs[i], "tool_use") {
		if !slices.Contains(answered, id) {
			return fmt.Errorf("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message", i, id)
		}
	}
	return nil
}

// lookback is how many blocks before a breakpoint the API looks for a
// cached prefix.
const lookback = 20

// cacheUsage reports the request's input tokens as Anthropic's prompt
// cache would (see the package doc) and remembers its breakpoints'
// prefixes.
func (s *Server) cacheUsage(m MessagesRequest) Usage {
	// The request as blocks in the API's order (tools, system, messages),
	// without their cache_control, each with its estimated tokens.
	type segment struct {
		key    []byte
		tokens int
		marked bool
	}
	var segs []segment
	add := func(prefix string, v any, cc *CacheControl) {
		b, _ := json.Marshal(v)
		segs = append(segs, segment{key: append([]byte(prefix), b...), tokens: (len(b) + 3) / 4, marked: cc != nil})
	}
	for _, t := range m.Tools {
		cc := t.CacheControl
		t.CacheControl = nil
		add("tool:", t, cc)
	}
	for _, b := range m.System {
		cc := b.CacheControl
		b.CacheControl = nil
		add("system:", b, cc)
	}
	for _, msg := range m.Messages {
		for j, b := range msg.Content {
			cc := b.CacheControl
			b.CacheControl = nil
			prefix := "block:"
			if j == 0 {
				prefix = "message:" + msg.Role + ":"
			}
			add(prefix, b, cc)
		}
	}
	// hashes[k] identifies the prefix of k segments (the model's cache is
	// its own); tokens[k] is what it takes.
	hashes := make([][32]byte, len(segs)+1)
	tokens := make([]int, len(segs)+1)
	hashes[0] = sha256.Sum256([]byte("model:" + m.Model))
	for k, sg := range segs {
		hashes[k+1] = sha256.Sum256(append(hashes[k][:], sg.key...))
		tokens[k+1] = tokens[k] + sg.tokens
	}
	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	read, last := 0, 0
	for k := 1; k <= len(segs); k++ {
		if !segs[k-1].marked {
			continue
		}
		last = k
		for j := k; j >= max(k-lookback, 1); j-- {
			if s.cache[hashes[j]] {
				read = max(read, j)
				break
			}
		}
	}
	for k := 1; k <= len(segs); k++ {
		if segs[k-1].marked {
			s.cache[hashes[k]] = true
		}
	}
	u := Usage{CacheReadInputTokens: tokens[read]}
	if last > read {
		u.CacheCreationInputTokens = tokens[last] - tokens[read]
	}
	u.InputTokens = tokens[len(segs)] - u.CacheReadInputTokens - u.CacheCreationInputTokens
	return u
}

func complete(w http.ResponseWriter, model string, reply Reply, stop string, usage Usage) {
	content := []any{}
	if text := strings.Join(reply.Chunks, ""); text != "" {
		content = append(content, map[string]any{"type": "text", "text": text})
	}
	for _, tc := range reply.ToolCalls {
		content = append(content, map[string]any{"type": "tool_use", "id": tc.ID, "name": tc.Name, "input": json.RawMessage(tc.Arguments)})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": "msg_test", "type": "message", "role": "assistant", "model": model, "content": content,
		"stop_reason": stop, "stop_sequence": nil, "usage": usage,
	})
}

func (s *Server) stream(w http.ResponseWriter, r *http.Request, req *Request, reply Reply, stop string, usage Usage) {
	w.Header().Set("request-id", "req_test")
	st := s.core.Stream(w, r, reply.Fault == FaultSplit)
	event := fakeprovider.JSON
	// delta is a counted event: the deltas FaultAfter and HoldAt count.
	delta := func(index int, d map[string]any) fakeprovider.Event {
		e := event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index, "delta": d})
		e.Counted = true
		return e
	}
	start := usage
	start.OutputTokens = 1
	events := []fakeprovider.Event{event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_test", "type": "message", "role": "assistant", "model": req.Parsed.Model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": start}})}
	index := 0
	if len(reply.Chunks) > 0 {
		events = append(events,
			event("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}}),
			event("ping", map[string]any{"type": "ping"}))
		for _, c := range reply.Chunks {
			events = append(events, delta(0, map[string]any{"type": "text_delta", "text": c}))
		}
		events = append(events, event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0}))
		index++
	}
	for _, tc := range reply.ToolCalls {
		events = append(events, event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "tool_use", "id": tc.ID, "name": tc.Name, "input": map[string]any{}}}))
		cut := len(tc.Arguments) / 2
		for _, part := range []string{tc.Arguments[:cut], tc.Arguments[cut:]} {
			events = append(events, delta(index, map[string]any{"type": "input_json_delta", "partial_json": part}))
		}
		events = append(events, event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index}))
		index++
	}
	faulty := reply.Fault != FaultNone && reply.Fault != FaultSplit && reply.Fault != FaultNoStop
	pace := fakeprovider.Pacing{Delay: reply.Delay, HoldAt: reply.HoldAt, Fault: faulty, FaultAfter: reply.FaultAfter}
	if !st.Play(events, pace, func() { fault(st, reply) }) || reply.Fault == FaultNoStop {
		return
	}
	if !st.Send(event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": usage.OutputTokens}})) {
		return
	}
	if !st.Send(event("message_stop", map[string]any{"type": "message_stop"})) {
		return
	}
	s.core.Finish(req)
}

func fault(st *fakeprovider.Stream, reply Reply) {
	switch reply.Fault {
	case FaultReset:
		st.Reset()
	case FaultMalformed:
		st.Send(fakeprovider.Event{Name: "content_block_delta", Data: []byte(`{"type": "content_block_delta", "index": 0, "delta": [ this is not json`)})
	case FaultStall:
		st.Stall()
	case FaultErrorEvent:
		typ, msg := reply.ErrorType, reply.ErrorMessage
		if typ == "" {
			typ = "overloaded_error"
		}
		if msg == "" {
			msg = "Overloaded"
		}
		st.Send(fakeprovider.Event{Name: "error", Data: errorBody(typ, msg)})
	}
}
