package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"unsafe"

	"github.com/sashabaranov/go-openai"
)

// A long session's request is mostly messages sent before (at 10,000
// messages the history kept in the model's window is hundreds of
// kilobytes of JSON), and go-openai encodes all of it again for every request (each message
// through its MarshalJSON, whose output encoding/json then checks and
// compacts a second time): 1.5–2 ms of CPU on a turn's way to its first
// token, growing with the history. The engine keeps what it encoded for
// the messages it sent recently and encodes only what is new; go-openai
// still builds the request (URL, headers, the other fields, retries) and
// reads the stream, and the body it sends is ours, byte for byte what it
// would have encoded (TestEncodedBodyIsGoOpenAIs).

// keptRequests is how many requests' messages the cache keeps: a turn
// finds there what the session's previous request sent, with a few other
// sessions' turns between (tool rounds count as requests); what only an
// older request sent is encoded again. Its memory is that of the last
// keptRequests requests' JSON, whatever the number of sessions.
const keptRequests = 4

// msgKey is a plain message (no parts, no tool calls) as the cache knows
// it: its text fields are the whole of its JSON.
type msgKey struct {
	role, content, refusal, name, reasoning, toolCallID string
}

// plainKey returns m's key, or false when m has parts, tool calls or a
// function call (those are encoded each time: they are short, or images
// whose data URLs the image cache already holds).
func plainKey(m *openai.ChatCompletionMessage) (msgKey, bool) {
	if m.MultiContent != nil || m.ToolCalls != nil || m.FunctionCall != nil {
		return msgKey{}, false
	}
	return msgKey{m.Role, m.Content, m.Refusal, m.Name, m.ReasoningContent, m.ToolCallID}, true
}

// textID names a message's long texts by where they are in memory: a
// message given again holds the very strings it held before (the model
// view keeps them), so a lookup hashes four words, not a megabyte of text.
// The entry keeps its strings, so no other text can come to be at their
// address while it is there, and a hit is checked against them (an equal
// string at the same address compares at once).
type textID struct {
	content, reasoning *byte
	n, m               int
}

func idOf(k *msgKey) textID {
	return textID{unsafe.StringData(k.content), unsafe.StringData(k.reasoning), len(k.content), len(k.reasoning)}
}

// encodedMsg is a cached message: its key (which keeps its texts) and JSON.
type encodedMsg struct {
	key  msgKey
	json []byte
}

// msgCache holds the JSON of the messages of the last keptRequests
// requests, one map per request (published whole, never changed after).
type msgCache struct {
	mu   sync.Mutex
	reqs [keptRequests]map[textID]encodedMsg
	next int
}

// encodeMessages writes msgs as the JSON array encoding/json makes of them,
// each plain message's JSON taken from the cache when one of the last
// requests sent it; the cache then holds this request's messages in place
// of the oldest request's.
func (c *msgCache) encodeMessages(buf *bytes.Buffer, msgs []openai.ChatCompletionMessage) error {
	c.mu.Lock()
	reqs, newest := c.reqs, c.next+keptRequests-1
	c.mu.Unlock()
	find := func(id textID, k msgKey) ([]byte, bool) {
		for i := range reqs {
			if e, ok := reqs[(newest-i)%keptRequests][id]; ok && e.key == k {
				return e.json, true
			}
		}
		return nil, false
	}
	now := make(map[textID]encodedMsg, len(msgs))
	buf.WriteByte('[')
	for i := range msgs {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, plain := plainKey(&msgs[i])
		var id textID
		if plain {
			id = idOf(&k)
			if b, ok := find(id, k); ok {
				now[id] = encodedMsg{k, b}
				buf.Write(b)
				continue
			}
		}
		b, err := json.Marshal(msgs[i])
		if err != nil {
			return err
		}
		if plain {
			now[id] = encodedMsg{k, b}
		}
		buf.Write(b)
	}
	buf.WriteByte(']')
	c.mu.Lock()
	c.reqs[c.next] = now
	c.next = (c.next + 1) % keptRequests
	c.mu.Unlock()
	return nil
}

// requestBody is the JSON go-openai would send for req, made with the
// message cache: req is encoded without its messages by encoding/json as
// go-openai does, and the messages array is put in place of the null it
// gives them. ok is false when that encoding does not begin as expected (another
// go-openai might order its fields otherwise): the caller lets go-openai
// encode the request itself.
func (c *msgCache) requestBody(req openai.ChatCompletionRequest) (body []byte, ok bool, err error) {
	msgs := req.Messages
	req.Messages = nil
	rest, err := json.Marshal(req)
	if err != nil {
		return nil, false, err
	}
	model, err := json.Marshal(req.Model)
	if err != nil {
		return nil, false, err
	}
	head := `{"model":` + string(model) + `,"messages":`
	if !bytes.HasPrefix(rest, []byte(head+"null")) {
		return nil, false, nil
	}
	var buf bytes.Buffer
	buf.Grow(len(rest) + 64*len(msgs))
	buf.Write(rest[:len(head)])
	if err := c.encodeMessages(&buf, msgs); err != nil {
		return nil, false, err
	}
	buf.Write(rest[len(head)+len("null"):])
	return buf.Bytes(), true, nil
}

// bodyKey carries a request's prepared body (a []byte) in its context to
// the engine's transport (captureTransport), which sends it in place of
// the one go-openai encoded (of the request without its messages).
type bodyKey struct{}

// withBody replaces r's body with the one its context carries, if any.
func withBody(r *http.Request) *http.Request {
	body, ok := r.Context().Value(bodyKey{}).([]byte)
	if !ok || r.Body == nil {
		return r
	}
	r.Body.Close()
	r = r.Clone(r.Context())
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	r.ContentLength = int64(len(body))
	return r
}

// prepare returns the request to give go-openai and the context to give
// it in: with its body prepared from the cache, the messages left out of
// what go-openai encodes. When the body cannot be prepared, req and ctx
// as they are.
func (e *Engine) prepare(ctx context.Context, req openai.ChatCompletionRequest) (context.Context, openai.ChatCompletionRequest) {
	body, ok, err := e.encoded.requestBody(req)
	if err != nil || !ok {
		return ctx, req // go-openai encodes it (and reports an error the same way)
	}
	req.Messages = nil
	return context.WithValue(ctx, bodyKey{}, body), req
}
