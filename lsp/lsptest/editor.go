// Package lsptest is a fake editor for tests: it drives a real ctxls server
// over a real pipe (in process) or the built binary over real stdio, and
// records everything the server sends so tests can wait for it.
package lsptest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// DefaultTimeout bounds every wait.
const DefaultTimeout = 15 * time.Second

// Message is any JSON-RPC message the server sent.
type Message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *RPCError       `json:"error,omitempty"`
	// At is when the fake editor read the message.
	At time.Time `json:"-"`
}

// IsNotification reports whether m is a notification from the server.
func (m *Message) IsNotification() bool { return m.Method != "" && len(m.ID) == 0 }

// IsRequest reports whether m is a request from the server.
func (m *Message) IsRequest() bool { return m.Method != "" && len(m.ID) > 0 }

// RPCError is a JSON-RPC error response.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message) }

// ServerRequestHandler answers a request the server makes to the editor.
type ServerRequestHandler func(method string, params json.RawMessage) (any, *RPCError)

// Editor is the fake editor.
type Editor struct {
	t   testing.TB
	w   io.Writer
	wmu sync.Mutex

	// mu guards the fields below.
	mu        sync.Mutex
	nextID    int64
	pending   map[string]chan *Message
	received  []*Message // notifications, server requests, and responses nobody waited for
	changed   chan struct{}
	readErr   error
	handler   ServerRequestHandler
	onTimeout func() // called before failing on a timeout (binary mode: dump goroutines)
	readDone  chan struct{}
	protoErrs []string // bytes on the server's stdout that were not a frame

	// gone is set when the server was killed on purpose: writes to it may
	// then fail without failing the test.
	gone atomic.Bool

	// pause holds the read loop while set (see PauseReading).
	pause pauseGate

	// timeout bounds every wait (DefaultTimeout unless SetTimeout).
	timeout atomic.Int64
}

// SetTimeout changes how long every wait of this editor (responses,
// notifications, the server's exit) may take: for tests that move hundreds
// of MB through the server, which the race detector slows in the test
// process.
func (e *Editor) SetTimeout(d time.Duration) { e.timeout.Store(int64(d)) }

// Timeout is how long a wait may take.
func (e *Editor) Timeout() time.Duration {
	if d := time.Duration(e.timeout.Load()); d > 0 {
		return d
	}
	return DefaultTimeout
}

// New starts reading server output from r; requests are written to w.
func New(t testing.TB, r io.Reader, w io.Writer) *Editor {
	e := &Editor{
		t:        t,
		w:        w,
		pending:  make(map[string]chan *Message),
		changed:  make(chan struct{}),
		readDone: make(chan struct{}),
		handler:  DefaultServerRequests,
	}
	go e.readLoop(r)
	return e
}

// NoAnswer, returned by a ServerRequestHandler, leaves the request
// unanswered (an editor that never replies).
var NoAnswer any = &struct{ noAnswer bool }{}

// OnServerRequest answers the server's requests with h from now on
// (DefaultServerRequests answers what h leaves: return it for those).
func (e *Editor) OnServerRequest(h ServerRequestHandler) {
	e.mu.Lock()
	e.handler = h
	e.mu.Unlock()
}

// DefaultServerRequests answers the requests an editor normally answers:
// work-done progress creation, configuration and message requests.
func DefaultServerRequests(method string, params json.RawMessage) (any, *RPCError) {
	switch method {
	case "window/workDoneProgress/create", "client/registerCapability", "client/unregisterCapability":
		return nil, nil
	case "window/showMessageRequest":
		return nil, nil
	case "workspace/configuration":
		var p struct {
			Items []json.RawMessage `json:"items"`
		}
		_ = json.Unmarshal(params, &p)
		return make([]any, len(p.Items)), nil
	}
	return nil, &RPCError{Code: -32601, Message: "fake editor: method not found: " + method}
}

func (e *Editor) readLoop(r io.Reader) {
	defer close(e.readDone)
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		e.pause.wait()
		body, err := readFrame(br)
		if err != nil {
			var perr protoError
			if errors.As(err, &perr) {
				e.mu.Lock()
				e.protoErrs = append(e.protoErrs, string(perr))
				e.mu.Unlock()
				continue
			}
			e.mu.Lock()
			e.readErr = err
			e.broadcastLocked()
			e.mu.Unlock()
			return
		}
		var m Message
		m.At = time.Now()
		if err := decodeMessage(body, &m); err != nil {
			e.mu.Lock()
			e.protoErrs = append(e.protoErrs, "invalid JSON frame: "+string(body))
			e.mu.Unlock()
			continue
		}
		e.dispatch(&m)
	}
}

func (e *Editor) dispatch(m *Message) {
	if m.IsRequest() {
		e.mu.Lock()
		h := e.handler
		e.received = append(e.received, m)
		e.broadcastLocked()
		e.mu.Unlock()
		result, rerr := h(m.Method, m.Params)
		if result == NoAnswer {
			return
		}
		resp := map[string]any{"jsonrpc": "2.0", "id": m.ID}
		if rerr != nil {
			resp["error"] = rerr
		} else {
			resp["result"] = result
		}
		e.writeJSON(resp)
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(m.ID) > 0 && m.Method == "" {
		if ch, ok := e.pending[string(m.ID)]; ok {
			delete(e.pending, string(m.ID))
			ch <- m
			return
		}
	}
	e.received = append(e.received, m)
	e.broadcastLocked()
}

// broadcastLocked wakes every waiter. e.mu must be held.
func (e *Editor) broadcastLocked() {
	close(e.changed)
	e.changed = make(chan struct{})
}

type protoError string

func (e protoError) Error() string { return string(e) }

// readFrame reads one Content-Length frame, strictly: anything else on the
// stream is a protocol error (stdout must carry only frames).
func readFrame(br *bufio.Reader) ([]byte, error) {
	length := -1
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			if err == io.EOF && line != "" {
				return nil, protoError("partial header at end of stream: " + line)
			}
			return nil, err
		}
		if line == "\r\n" {
			break
		}
		if !strings.HasSuffix(line, "\r\n") {
			return nil, protoError("not a header line: " + line)
		}
		name, value, ok := strings.Cut(strings.TrimSuffix(line, "\r\n"), ":")
		if !ok {
			return nil, protoError("not a header line: " + line)
		}
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			n, err := strconv.Atoi(strings.TrimSpace(value))
			if err != nil {
				return nil, protoError("bad Content-Length: " + line)
			}
			length = n
		}
	}
	if length < 0 {
		return nil, protoError("frame without Content-Length")
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(br, body); err != nil {
		return nil, err
	}
	return body, nil
}

// WriteRaw writes bytes to the server as they are.
func (e *Editor) WriteRaw(b []byte) {
	e.wmu.Lock()
	defer e.wmu.Unlock()
	if _, err := e.w.Write(b); err != nil && !e.gone.Load() {
		e.t.Errorf("fake editor: write: %v", err)
	}
}

// WriteFrame frames body and writes it.
func (e *Editor) WriteFrame(body []byte) {
	header := fmt.Appendf(nil, "Content-Length: %d\r\n\r\n", len(body))
	if len(body) < largeJSON {
		e.WriteRaw(append(header, body...))
		return
	}
	// Not copied into one buffer: the copy of a large body is most of
	// the cost of sending it under -race.
	e.wmu.Lock()
	defer e.wmu.Unlock()
	for _, b := range [][]byte{header, body} {
		if _, err := e.w.Write(b); err != nil && !e.gone.Load() {
			e.t.Errorf("fake editor: write: %v", err)
			return
		}
	}
}

func (e *Editor) writeJSON(v any) {
	b, err := marshal(v)
	if err != nil {
		e.t.Fatalf("fake editor: marshal: %v", err)
	}
	e.WriteFrame(b)
}

// Notify sends a notification.
func (e *Editor) Notify(method string, params any) {
	msg := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		msg["params"] = params
	}
	e.writeJSON(msg)
}

// request registers a waiter for rawID, writes the request and returns the
// channel its response is delivered on.
func (e *Editor) request(rawID []byte, method string, params any) chan *Message {
	ch := make(chan *Message, 1)
	e.mu.Lock()
	e.pending[string(rawID)] = ch
	e.mu.Unlock()
	msg := map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(rawID), "method": method}
	if params != nil {
		msg["params"] = params
	}
	e.writeJSON(msg)
	return ch
}

// Send writes a request with the given id (number or string) and returns a
// function that waits for its response.
func (e *Editor) Send(id any, method string, params any) func() *Message {
	rawID, err := json.Marshal(id)
	if err != nil {
		e.t.Fatalf("fake editor: id: %v", err)
	}
	ch := e.request(rawID, method, params)
	return func() *Message {
		select {
		case m := <-ch:
			return m
		case <-time.After(e.Timeout()):
			if e.onTimeout != nil {
				e.onTimeout()
			}
			e.t.Fatalf("fake editor: no response to %s (id %s) within %v", method, rawID, e.Timeout())
		case <-e.readDone:
			select {
			case m := <-ch:
				return m
			default:
			}
			e.t.Fatalf("fake editor: server closed its output before answering %s: %v", method, e.ReadErr())
		}
		return nil
	}
}

// Async sends a request with a fresh id and returns a channel that receives
// its response, or is closed without one if the server's output ends first
// (a killed server). It never fails the test.
func (e *Editor) Async(method string, params any) <-chan *Message {
	rawID, _ := json.Marshal(e.NextID())
	ch := e.request(rawID, method, params)
	out := make(chan *Message, 1)
	go func() {
		defer close(out)
		select {
		case m := <-ch:
			out <- m
		case <-e.readDone:
			select {
			case m := <-ch:
				out <- m
			default:
			}
		}
	}()
	return out
}

// NextID returns a fresh numeric request id.
func (e *Editor) NextID() int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.nextID++
	return e.nextID
}

// Call sends a request and waits for the response. It decodes the result
// into result (if not nil) and returns an *RPCError for an error response.
func (e *Editor) Call(method string, params, result any) error {
	m := e.Send(e.NextID(), method, params)()
	if m.Error != nil {
		return m.Error
	}
	if result != nil {
		if err := json.Unmarshal(m.Result, result); err != nil {
			e.t.Fatalf("fake editor: decode %s result %s: %v", method, m.Result, err)
		}
	}
	return nil
}

// Command runs workspace/executeCommand with one argument.
func (e *Editor) Command(id string, arg, result any) error {
	params := map[string]any{"command": id}
	if arg != nil {
		params["arguments"] = []any{arg}
	}
	return e.Call("workspace/executeCommand", params, result)
}

// MustCommand is Command that fails the test on an error response.
func (e *Editor) MustCommand(id string, arg, result any) {
	e.t.Helper()
	if err := e.Command(id, arg, result); err != nil {
		e.t.Fatalf("%s: %v", id, err)
	}
}

// WaitFor waits until a received message satisfies pred and returns it.
// Messages are examined in arrival order, including those received before
// the call.
func (e *Editor) WaitFor(what string, pred func(*Message) bool) *Message {
	e.t.Helper()
	return e.WaitForFrom(0, what, pred)
}

// ReceivedCount is how many messages the editor has received so far: a
// starting point for WaitForFrom.
func (e *Editor) ReceivedCount() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.received)
}

// WaitForFrom is WaitFor over the messages received after the first from
// (ReceivedCount before the request): what a benchmark waits on, so that
// the wait does not grow with what came before.
func (e *Editor) WaitForFrom(from int, what string, pred func(*Message) bool) *Message {
	e.t.Helper()
	deadline := time.After(e.Timeout())
	seen := from
	for {
		e.mu.Lock()
		for ; seen < len(e.received); seen++ {
			if pred(e.received[seen]) {
				m := e.received[seen]
				e.mu.Unlock()
				return m
			}
		}
		ch, rerr := e.changed, e.readErr
		e.mu.Unlock()
		if rerr != nil {
			e.t.Fatalf("fake editor: waiting for %s: server output ended: %v", what, rerr)
		}
		select {
		case <-ch:
		case <-deadline:
			e.t.Fatalf("fake editor: %s did not arrive within %v", what, e.Timeout())
		}
	}
}

// WaitNotification waits for the n-th (1-based) notification with method.
func (e *Editor) WaitNotification(method string, n int) *Message {
	e.t.Helper()
	count := 0
	return e.WaitFor(fmt.Sprintf("notification %s #%d", method, n), func(m *Message) bool {
		if m.IsNotification() && m.Method == method {
			count++
		}
		return count == n && m.Method == method
	})
}

// Received returns a copy of everything received so far that no call waited
// for.
func (e *Editor) Received() []*Message {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]*Message(nil), e.received...)
}

// Notifications returns the received notifications with method.
func (e *Editor) Notifications(method string) []*Message {
	var out []*Message
	for _, m := range e.Received() {
		if m.IsNotification() && m.Method == method {
			out = append(out, m)
		}
	}
	return out
}

// ProtocolErrors returns anything on the server's output that was not a
// well-formed frame.
func (e *Editor) ProtocolErrors() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.protoErrs...)
}

// ReadErr is the error that ended the server's output, if it ended.
func (e *Editor) ReadErr() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.readErr
}

// WaitOutputClosed waits until the server closes its output.
func (e *Editor) WaitOutputClosed(ctx context.Context) error {
	select {
	case <-e.readDone:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// InitOptions are common initialize settings.
type InitOptions struct {
	RootURI           string
	PositionEncodings []string
	InitOptions       map[string]any
	WorkDoneProgress  bool
	// Workspace is capabilities.workspace (nil: none).
	Workspace map[string]any
}

// Initialize runs initialize and initialized and returns the result.
func (e *Editor) Initialize(o InitOptions) map[string]any {
	e.t.Helper()
	caps := map[string]any{
		"window": map[string]any{"workDoneProgress": o.WorkDoneProgress},
	}
	if o.PositionEncodings != nil {
		caps["general"] = map[string]any{"positionEncodings": o.PositionEncodings}
	}
	if o.Workspace != nil {
		caps["workspace"] = o.Workspace
	}
	params := map[string]any{
		"processId":    nil,
		"capabilities": caps,
		"clientInfo":   map[string]any{"name": "lsptest"},
	}
	if o.RootURI != "" {
		params["rootUri"] = o.RootURI
		params["workspaceFolders"] = []any{map[string]any{"uri": o.RootURI, "name": "root"}}
	}
	if o.InitOptions != nil {
		params["initializationOptions"] = o.InitOptions
	}
	var res map[string]any
	if err := e.Call("initialize", params, &res); err != nil {
		e.t.Fatalf("initialize: %v", err)
	}
	e.Notify("initialized", map[string]any{})
	return res
}

// Shutdown sends shutdown then exit.
func (e *Editor) Shutdown() {
	e.t.Helper()
	if err := e.Call("shutdown", nil, nil); err != nil {
		e.t.Fatalf("shutdown: %v", err)
	}
	e.Notify("exit", nil)
}
