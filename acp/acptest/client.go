// Package acptest is an Agent Client Protocol client for tests, written
// independently of the SDK the agent uses (so the two do not share a
// misreading of the wire): it drives `ctxls acp` over real stdio (or any
// reader/writer pair), answers the agent's fs/* and permission requests
// like an editor, and records everything the agent sends so tests can wait
// for it.
package acptest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// DefaultTimeout bounds every wait.
const DefaultTimeout = 20 * time.Second

// Message is any JSON-RPC message the agent sent.
type Message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *RPCError       `json:"error,omitempty"`
	At      time.Time       `json:"-"` // when the client read it
	Seq     int             `json:"-"` // its place among everything the client read, from 1
}

// RPCError is a JSON-RPC error response.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message) }

// Update is one session/update notification.
type Update struct {
	SessionID string
	Kind      string          // update.sessionUpdate
	Raw       json.RawMessage // the whole update object
	At        time.Time
	Seq       int // its message's place among everything the client read
}

// Text is the text of a *_message_chunk update ("" for other kinds).
func (u Update) Text() string {
	var v struct {
		Content struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	if json.Unmarshal(u.Raw, &v) == nil && v.Content.Type == "text" {
		return v.Content.Text
	}
	return ""
}

// Title is a session_info_update's title.
func (u Update) Title() string { return u.str("title") }

// ToolCallID is a tool_call's or tool_call_update's id.
func (u Update) ToolCallID() string { return u.str("toolCallId") }

// Status is a tool call's status.
func (u Update) Status() string { return u.str("status") }

func (u Update) str(key string) string {
	var v map[string]any
	_ = json.Unmarshal(u.Raw, &v)
	s, _ := v[key].(string)
	return s
}

// Write is one fs/write_text_file the agent asked for.
type Write struct{ SessionID, Path, Content string }

// Client is the fake ACP client.
type Client struct {
	t   testing.TB
	w   io.Writer
	wmu sync.Mutex

	// mu guards the fields below.
	mu       sync.Mutex
	read     int // messages read so far
	nextID   int64
	pending  map[string]chan *Message
	received []*Message // notifications and the agent's requests
	updates  []Update
	changed  chan struct{}
	files    map[string]string
	// writesLand: a write changes the text the client reads back (an
	// editor's buffer), as WritesLand sets.
	writesLand bool
	writes     []Write
	perms      []json.RawMessage
	answers    []string // the next permission answers (optionIds, or "cancelled")
	// typing are changes to the client's files made before the next
	// permission answers, in turn (nil: none), as the user typing while a
	// question waits.
	typing    []func(files map[string]string)
	protoErrs []string
	readDone  chan struct{}
	timeout   time.Duration

	cmd    *exec.Cmd
	stdin  io.Closer
	stderr *syncBuffer
	exited chan struct{}
}

// New starts reading the agent's output from r; messages go to w.
func New(t testing.TB, r io.Reader, w io.Writer) *Client {
	c := &Client{
		t: t, w: w, pending: map[string]chan *Message{}, changed: make(chan struct{}),
		files: map[string]string{}, readDone: make(chan struct{}), timeout: DefaultTimeout,
	}
	go c.readLoop(r)
	return c
}

// Start runs bin with args over real stdio; env is added to the test's
// environment. The process is stopped when the test ends; its stderr is
// shown if the test failed.
func Start(t testing.TB, bin string, args, env []string) *Client {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := New(t, stdout, stdin)
	c.cmd, c.stdin, c.stderr, c.exited = cmd, stdin, stderr, make(chan struct{})
	go func() {
		<-c.readDone
		_ = cmd.Wait()
		close(c.exited)
	}()
	t.Cleanup(func() {
		c.Close()
		if t.Failed() {
			t.Logf("agent stderr:\n%s", stderr.String())
		}
	})
	return c
}

// SetTimeout changes how long each wait may take (the reference MCP
// servers, started with Node, take seconds).
func (c *Client) SetTimeout(d time.Duration) {
	c.mu.Lock()
	c.timeout = d
	c.mu.Unlock()
}

// AnswerPermissions sets the answers to the agent's next permission
// requests, in turn: an optionId, or "cancelled". With none left the
// client allows once (the first allow option).
func (c *Client) AnswerPermissions(answers ...string) {
	c.mu.Lock()
	c.answers = append(c.answers, answers...)
	c.mu.Unlock()
}

// TypeBeforeAnswers sets changes to the client's files made before the next
// permission answers, in turn (nil: none for that answer).
func (c *Client) TypeBeforeAnswers(typing ...func(files map[string]string)) {
	c.mu.Lock()
	c.typing = append(c.typing, typing...)
	c.mu.Unlock()
}

// Received are the notifications and the agent's requests so far.
func (c *Client) Received() []*Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*Message{}, c.received...)
}

// Permissions are the params of the permission requests so far.
func (c *Client) Permissions() []json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]json.RawMessage{}, c.perms...)
}

// Stderr is what the agent process wrote to stderr so far.
func (c *Client) Stderr() string {
	if c.stderr == nil {
		return ""
	}
	return c.stderr.String()
}

// Close closes the agent's stdin and waits for it to exit (killing it
// after 5 s).
func (c *Client) Close() {
	if c.cmd == nil {
		return
	}
	c.stdin.Close()
	select {
	case <-c.exited:
	case <-time.After(5 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.exited
	}
}

// SetFile sets the text fs/read_text_file answers for path (the editor's
// unsaved text); a path never set is answered with an error.
func (c *Client) SetFile(path, text string) {
	c.mu.Lock()
	c.files[path] = text
	c.mu.Unlock()
}

// WritesLand makes fs/write_text_file change the text fs/read_text_file
// answers for the path afterwards, as an editor's buffer does.
func (c *Client) WritesLand() {
	c.mu.Lock()
	c.writesLand = true
	c.mu.Unlock()
}

// File is the text the client holds for path (as fs/read_text_file
// answers it).
func (c *Client) File(path string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	text, ok := c.files[path]
	return text, ok
}

// Writes are the fs/write_text_file requests so far.
func (c *Client) Writes() []Write {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Write(nil), c.writes...)
}

// ProtocolErrors lists what the agent wrote to stdout that was not a
// JSON-RPC 2.0 message, and responses to ids never sent.
func (c *Client) ProtocolErrors() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.protoErrs...)
}

func (c *Client) readLoop(r io.Reader) {
	defer close(c.readDone)
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		line, err := br.ReadBytes('\n')
		if t := bytes.TrimSpace(line); len(t) > 0 {
			c.dispatch(t)
		}
		if err != nil {
			c.mu.Lock()
			c.broadcastLocked()
			c.mu.Unlock()
			return
		}
	}
}

func (c *Client) dispatch(line []byte) {
	m := &Message{At: time.Now()}
	c.mu.Lock()
	c.read++
	m.Seq = c.read
	c.mu.Unlock()
	if err := json.Unmarshal(line, m); err != nil || m.JSONRPC != "2.0" {
		c.mu.Lock()
		c.protoErrs = append(c.protoErrs, fmt.Sprintf("not a JSON-RPC 2.0 message: %.200q", line))
		c.mu.Unlock()
		return
	}
	switch {
	case m.Method != "" && len(m.ID) > 0:
		go c.answer(m)
		c.mu.Lock()
		c.received = append(c.received, m)
		c.broadcastLocked()
		c.mu.Unlock()
	case m.Method != "":
		c.mu.Lock()
		c.received = append(c.received, m)
		if m.Method == "session/update" {
			var p struct {
				SessionID string          `json:"sessionId"`
				Update    json.RawMessage `json:"update"`
			}
			_ = json.Unmarshal(m.Params, &p)
			var k struct {
				Kind string `json:"sessionUpdate"`
			}
			_ = json.Unmarshal(p.Update, &k)
			c.updates = append(c.updates, Update{SessionID: p.SessionID, Kind: k.Kind, Raw: p.Update, At: m.At, Seq: m.Seq})
		}
		c.broadcastLocked()
		c.mu.Unlock()
	default:
		c.mu.Lock()
		ch := c.pending[string(m.ID)]
		delete(c.pending, string(m.ID))
		if ch == nil {
			if string(m.ID) == "null" || m.Error != nil {
				// An error the agent could not tie to a request of ours
				// (a line it could not read): kept for WaitFor.
				c.received = append(c.received, m)
			} else {
				c.protoErrs = append(c.protoErrs, fmt.Sprintf("response to an id never sent: %s", m.ID))
			}
		}
		c.broadcastLocked()
		c.mu.Unlock()
		if ch != nil {
			ch <- m
		}
	}
}

func (c *Client) broadcastLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// answer replies to a request of the agent's as an editor would.
func (c *Client) answer(m *Message) {
	var result any
	var rerr *RPCError
	switch m.Method {
	case "fs/read_text_file":
		var p struct{ SessionID, Path string }
		_ = json.Unmarshal(m.Params, &p)
		c.mu.Lock()
		text, ok := c.files[p.Path]
		c.mu.Unlock()
		if ok {
			result = map[string]any{"content": text}
		} else {
			rerr = &RPCError{Code: -32002, Message: "resource not found: " + p.Path}
		}
	case "fs/write_text_file":
		var p struct{ SessionID, Path, Content string }
		_ = json.Unmarshal(m.Params, &p)
		c.mu.Lock()
		c.writes = append(c.writes, Write(p))
		if c.writesLand {
			c.files[p.Path] = p.Content
		}
		c.mu.Unlock()
		result = map[string]any{}
	case "session/request_permission":
		var p struct {
			Options []struct {
				OptionID string `json:"optionId"`
				Kind     string `json:"kind"`
			} `json:"options"`
		}
		_ = json.Unmarshal(m.Params, &p)
		c.mu.Lock()
		c.perms = append(c.perms, m.Params)
		next := ""
		if len(c.answers) > 0 {
			next, c.answers = c.answers[0], c.answers[1:]
		}
		if len(c.typing) > 0 {
			if f := c.typing[0]; f != nil {
				f(c.files)
			}
			c.typing = c.typing[1:]
		}
		c.mu.Unlock()
		outcome := map[string]any{"outcome": "cancelled"}
		for _, o := range p.Options {
			if next == "" && strings.HasPrefix(o.Kind, "allow") || next != "" && o.OptionID == next {
				outcome = map[string]any{"outcome": "selected", "optionId": o.OptionID}
				break
			}
		}
		result = map[string]any{"outcome": outcome}
	default:
		rerr = &RPCError{Code: -32601, Message: "acptest: method not found: " + m.Method}
	}
	msg := map[string]any{"jsonrpc": "2.0", "id": m.ID}
	if rerr != nil {
		msg["error"] = rerr
	} else {
		msg["result"] = result
	}
	c.writeJSON(msg)
}

func (c *Client) writeJSON(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		c.t.Errorf("acptest: %v", err)
		return
	}
	c.WriteRaw(append(b, '\n'))
}

// WriteRaw writes bytes to the agent as they are (bad input).
func (c *Client) WriteRaw(b []byte) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := c.w.Write(b); err != nil && !isClosed(err) {
		c.t.Errorf("acptest: write: %v", err)
	}
}

func isClosed(err error) bool {
	return err == io.ErrClosedPipe || err == os.ErrClosed || err == syscall.EPIPE || strings.Contains(err.Error(), "broken pipe") || strings.Contains(err.Error(), "file already closed")
}

// Notify sends a notification.
func (c *Client) Notify(method string, params any) {
	c.writeJSON(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

// Async sends a request and returns the channel its response arrives on.
func (c *Client) Async(method string, params any) <-chan *Message {
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	ch := make(chan *Message, 1)
	c.pending[fmt.Sprint(id)] = ch
	c.mu.Unlock()
	msg := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	c.writeJSON(msg)
	return ch
}

// Call sends a request and waits for its response, decoding the result
// into result (if not nil). A JSON-RPC error is returned as *RPCError.
func (c *Client) Call(method string, params, result any) error {
	c.t.Helper()
	select {
	case m := <-c.Async(method, params):
		if m.Error != nil {
			return m.Error
		}
		if result != nil {
			if err := json.Unmarshal(m.Result, result); err != nil {
				return fmt.Errorf("acptest: decoding the %s result: %w (%s)", method, err, m.Result)
			}
		}
		return nil
	case <-time.After(c.timeout):
		c.t.Fatalf("acptest: no answer to %s within %v; stderr:\n%s", method, c.timeout, c.Stderr())
		return nil
	}
}

// Updates are the session/update notifications for sessionID so far
// (every session's when sessionID is "").
func (c *Client) Updates(sessionID string) []Update {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Update
	for _, u := range c.updates {
		if sessionID == "" || u.SessionID == sessionID {
			out = append(out, u)
		}
	}
	return out
}

// AgentText is the agent_message_chunk texts for the session so far.
func (c *Client) AgentText(sessionID string) string {
	var b strings.Builder
	for _, u := range c.Updates(sessionID) {
		if u.Kind == "agent_message_chunk" {
			b.WriteString(u.Text())
		}
	}
	return b.String()
}

// WaitUpdate waits for an update (one already received counts) for which
// pred holds, and returns the first such. pred runs with the client's lock
// held: it must not call the client.
func (c *Client) WaitUpdate(what string, pred func(Update) bool) Update {
	c.t.Helper()
	return c.WaitUpdateFrom(0, what, pred)
}

// WaitUpdateFrom is WaitUpdate over the updates from index from on (of all
// sessions' updates in arrival order; see Updates("")).
func (c *Client) WaitUpdateFrom(from int, what string, pred func(Update) bool) Update {
	c.t.Helper()
	var found Update
	c.wait(what, func() bool {
		for _, u := range c.updates[min(from, len(c.updates)):] {
			if pred(u) {
				found = u
				return true
			}
		}
		return false
	})
	return found
}

// WaitFor waits for a notification, agent request or unmatched error
// response for which pred holds.
func (c *Client) WaitFor(what string, pred func(*Message) bool) *Message {
	c.t.Helper()
	var found *Message
	c.wait(what, func() bool {
		for _, m := range c.received {
			if pred(m) {
				found = m
				return true
			}
		}
		return false
	})
	return found
}

// wait blocks until cond (called with c.mu held) holds, failing the test
// after the timeout or when the agent closed its output first.
func (c *Client) wait(what string, cond func() bool) {
	c.t.Helper()
	deadline := time.After(c.timeout)
	for {
		c.mu.Lock()
		ok, ch := cond(), c.changed
		c.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			c.t.Fatalf("acptest: no %s within %v; stderr:\n%s", what, c.timeout, c.Stderr())
		case <-c.readDone:
			c.mu.Lock()
			ok = cond()
			c.mu.Unlock()
			if !ok {
				c.t.Fatalf("acptest: the agent closed its output before %s; stderr:\n%s", what, c.Stderr())
			}
			return
		}
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
