package lsp

import (
	"context"
	"encoding/json"
	"runtime/debug"
	"strconv"

	"github.com/sourcegraph/conc/panics"
	"go.lsp.dev/jsonrpc2"

	"github.com/ctxls/ctxls/api"
)

// handle is the jsonrpc2 handler. Notifications run inline on the read loop,
// so they are applied in wire order and a request sent after an edit sees the
// edit. Requests are released with jsonrpc2.Async right after their admission
// check, so they run concurrently and a long one never holds up the next
// message.
func (s *Server) handle(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	if !req.IsCall() {
		s.handleNotification(ctx, req.Method(), json.RawMessage(req.Params()))
		return nil, nil
	}
	method := req.Method()
	if err := s.admit(method); err != nil {
		return nil, err
	}
	// The request context is pooled by jsonrpc2 and must not be the parent of
	// a derived context before Async (LIBRARIES.md): derive from the
	// connection's context instead and register the cancel function before
	// the read loop moves on, so a $/cancelRequest right behind this request
	// finds it.
	cctx, cancel := context.WithCancel(jsonrpc2.DetachContext(ctx))
	defer cancel()
	defer s.register(s.inflight, idKey(req.ID()), cancel)()
	jsonrpc2.Async(ctx)
	// Only now: Async copies the params out of the frame buffer, which the
	// read loop reuses for the next frame (a slice taken before Async was
	// overwritten under a files.add handler; found by TestCrashRandomKills).
	params := json.RawMessage(req.Params())
	method = req.Method() // the method string too (found by TestFourDaemonsOneDataDir)
	if method != "initialize" {
		if err := s.waitInitialized(cctx); err != nil {
			return nil, toRPCError(cctx, err)
		}
	}

	var (
		result any
		err    error
	)
	var pc panics.Catcher
	pc.Try(func() { result, err = s.handleRequest(cctx, method, params) })
	if r := pc.Recovered(); r != nil {
		s.log.Error("request handler panicked", "method", method, "panic", r.Value, "stack", string(r.Stack))
		return nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "internal error in %s: %v", method, r.Value)
	}
	if err != nil {
		werr := toRPCError(cctx, err)
		s.log.Debug("request failed", "method", method, "code", werr.Code, "err", werr.Message)
		return nil, werr
	}
	return result, nil
}

// admit checks a request against the lifecycle before it is released.
func (s *Server) admit(method string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case method == "initialize":
		if s.state != uninitialized {
			return jsonrpc2.NewError(jsonrpc2.InvalidRequest, "initialize was already received")
		}
		// Claim the transition now so a second initialize that arrives
		// before this one is answered is refused.
		s.state = initialized
		return nil
	case s.state == uninitialized:
		return jsonrpc2.NewError(jsonrpc2.ServerNotInitialized, "the server is not initialized: send initialize first")
	case s.state == shutDown:
		return jsonrpc2.Errorf(jsonrpc2.InvalidRequest, "the server is shutting down: %s refused", method)
	}
	return nil
}

// waitInitialized waits until initialize has been answered. A client may
// send a request before initialize's answer arrives (Neovim 0.7 does, for a
// command run right after start-up); it runs once the store is open, instead
// of failing for want of it. It returns ctx's error if cancelled first.
func (s *Server) waitInitialized(ctx context.Context) error {
	select {
	case <-s.initDone:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// handleRequest routes a request.
func (s *Server) handleRequest(ctx context.Context, method string, params json.RawMessage) (any, error) {
	switch method {
	case "initialize":
		return s.initialize(ctx, params)
	case "shutdown":
		return s.shutdown(ctx)
	case "workspace/executeCommand":
		return s.executeCommand(ctx, params)
	case api.ChatRequest:
		return s.chatRequest(ctx, params)
	}
	return nil, jsonrpc2.Errorf(jsonrpc2.MethodNotFound, "method not found: %s", method)
}

// handleNotification routes a notification. Errors are logged, never
// returned: jsonrpc2 would close the connection.
func (s *Server) handleNotification(ctx context.Context, method string, params json.RawMessage) {
	// The notification's context is pooled and recycled when the handler
	// returns, and SQLite watches a context's Done channel from a goroutine
	// of its own: use the connection's context instead (LIBRARIES.md).
	ctx = jsonrpc2.DetachContext(ctx)
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("notification handler panicked", "method", method, "panic", r, "stack", string(debug.Stack()))
		}
	}()
	switch method {
	case "exit":
		s.exit()
		return
	case "$/cancelRequest":
		s.cancelRequest(params)
		return
	case "window/workDoneProgress/cancel":
		s.cancelProgress(params)
		return
	}
	s.mu.Lock()
	state := s.state
	s.mu.Unlock()
	if state != initialized {
		s.log.Debug("notification dropped", "method", method, "state", state)
		return
	}
	// A notification sent before initialize's answer (an open document, say)
	// is applied after it, in wire order, with the negotiated encoding: the
	// read loop waits here. Initialize makes no request of the client, so
	// nothing it waits for is behind this.
	s.waitInitialized(ctx)
	var err error
	switch method {
	case "initialized":
		s.onInitialized(ctx)
	case "textDocument/didOpen":
		err = s.didOpen(params)
	case "textDocument/didChange":
		err = s.didChange(params)
	case "textDocument/didClose":
		err = s.didClose(params)
	case "textDocument/didSave":
		err = s.didSave(params)
	case api.DidChangeView, api.DidFocus:
		err = s.didChangeView(ctx, params)
	case "workspace/didChangeWorkspaceFolders":
		err = s.didChangeWorkspaceFolders(ctx, params)
	case "workspace/didChangeConfiguration":
		err = s.didChangeConfiguration(params)
	default:
		// Unknown notifications, $/setTrace, $/progress and friends are
		// ignored, as the specification asks.
		s.log.Debug("notification ignored", "method", method)
	}
	if err != nil {
		s.log.Warn("notification failed", "method", method, "err", err)
	}
}

// register records a cancel function under key in m (s.inflight or
// s.tokens) and returns the function that removes it.
func (s *Server) register(m map[string]context.CancelFunc, key string, cancel context.CancelFunc) func() {
	s.inflightMu.Lock()
	m[key] = cancel
	s.inflightMu.Unlock()
	return func() {
		s.inflightMu.Lock()
		delete(m, key)
		s.inflightMu.Unlock()
	}
}

// cancelRequest cancels a running request. A malformed or unknown id is
// logged and ignored.
func (s *Server) cancelRequest(params json.RawMessage) {
	var p struct {
		ID json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal(params, &p); err != nil || len(p.ID) == 0 {
		s.log.Warn("malformed $/cancelRequest", "params", truncate(string(params), 200))
		return
	}
	key, ok := rawIDKey(p.ID)
	if !ok {
		s.log.Warn("malformed $/cancelRequest id", "id", truncate(string(p.ID), 100))
		return
	}
	s.inflightMu.Lock()
	cancel := s.inflight[key]
	s.inflightMu.Unlock()
	if cancel != nil {
		s.log.Debug("request cancelled", "id", key)
		cancel()
	}
}

// idKey renders a request id so numeric 7 and string "7" stay distinct.
func idKey(id jsonrpc2.ID) string {
	if n, ok := id.Number(); ok {
		return "n" + strconv.FormatInt(n, 10)
	}
	if str, ok := id.StringValue(); ok {
		return "s" + str
	}
	return "?"
}

// rawIDKey is idKey for an id taken from JSON.
func rawIDKey(raw json.RawMessage) (string, bool) {
	var n int64
	if err := json.Unmarshal(raw, &n); err == nil {
		return idKey(jsonrpc2.NewNumberID(n)), true
	}
	var str string
	if err := json.Unmarshal(raw, &str); err == nil {
		return idKey(jsonrpc2.NewStringID(str)), true
	}
	return "", false
}

// exit ends Run with the exit code the specification asks for.
func (s *Server) exit() {
	s.mu.Lock()
	code := 1
	if s.state == shutDown {
		code = 0
	}
	s.mu.Unlock()
	select {
	case s.exitCode <- code:
	default:
	}
}

// notify sends a notification to the client, logging failures.
func (s *Server) notify(ctx context.Context, method string, params any) {
	if s.conn == nil {
		return // not connected (tests that call handlers directly)
	}
	// Notifications go out even when the request that sends them was just
	// cancelled (the "cancelled" end of a turn's progress).
	if err := s.conn.Notify(context.WithoutCancel(jsonrpc2.DetachContext(ctx)), method, params); err != nil {
		s.log.Warn("notify failed", "method", method, "err", err)
	}
}

// invalidArg is an error of kind invalidArgument.
func invalidArg(format string, args ...any) error {
	return api.Errorf(api.KindInvalidArgument, format, args...)
}
