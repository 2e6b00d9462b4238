package lsp

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/ctxls/ctxls/buffer"
	"github.com/ctxls/ctxls/service"
)

// lifecycle is the server's position in the LSP lifecycle.
type lifecycle int

const (
	// uninitialized: only initialize (and exit) are served.
	uninitialized lifecycle = iota
	// initialized: everything is served.
	initialized
	// shutDown: shutdown was answered; only exit is expected.
	shutDown
)

func (l lifecycle) String() string {
	switch l {
	case uninitialized:
		return "uninitialized"
	case initialized:
		return "initialized"
	case shutDown:
		return "shut down"
	}
	return "unknown"
}

// Server is one editor connection. Its methods run on the jsonrpc2 read loop
// (notifications, in wire order) or on their own goroutine (requests, released
// with jsonrpc2.Async); see doc.go.
type Server struct {
	cfg      service.Config
	log      *slog.Logger
	conn     jsonrpc2.Conn
	docs     *buffer.Set
	commands map[string]commandFunc
	exitCode chan int

	// mu guards the fields below. Hold it only to read or swap them, never
	// across I/O.
	mu                sync.Mutex
	state             lifecycle
	initDone          chan struct{} // closed when initialize returns, however it ended (initOnce)
	initOnce          sync.Once
	enc               buffer.Encoding
	svc               *service.Service   // the operations, over the store initialize opened
	resumeAtInit      string             // initializationOptions.session, resumed on "initialized"
	clientWorkDone    bool               // the client supports window/workDoneProgress/create
	permissionTimeout time.Duration      // how long a tool call waits for the user (0: the default)
	edits             editCaps           // what the client can do with the model's edits
	diagnostics       bool               // the client answers ctxls/diagnostics (initializationOptions.diagnostics)
	asksInChat        bool               // the client shows ctxls/question (initializationOptions.questions)
	shownCalls        service.ShownCalls // a tool call's question waits until the turn's loop showed the call
	watch             *watcher           // live updates from other daemons (live.go); nil when stopped

	// questions are the ctxls/question questions waiting for an answer;
	// they have their own mutex (see questions.go).
	questions questionBox

	// view is the editor's view waiting to be captured; it has its own
	// mutex (see view.go).
	view viewState

	// inflightMu guards inflight: the cancel functions of running requests,
	// keyed by request id (see idKey).
	inflightMu sync.Mutex
	inflight   map[string]context.CancelFunc
	tokens     map[string]context.CancelFunc // chat turns by work-done token
	tokenSeq   int64
}

// NewServer returns a server for one connection.
func NewServer(cfg service.Config) *Server {
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{
		cfg:      cfg,
		log:      log,
		docs:     buffer.NewSet(200),
		exitCode: make(chan int, 1),
		initDone: make(chan struct{}),
		enc:      buffer.UTF16,
		inflight: make(map[string]context.CancelFunc),
		tokens:   make(map[string]context.CancelFunc),
	}
	s.commands = s.commandTable()
	return s
}

// Serve speaks LSP over in and out until the client sends exit or closes its
// end. It returns the process exit code the LSP specification asks for: 0
// after shutdown, 1 otherwise.
func Serve(ctx context.Context, in io.Reader, out io.Writer, cfg service.Config) int {
	s := NewServer(cfg)
	return s.Run(ctx, in, out)
}

// Run serves one connection; see Serve.
func (s *Server) Run(ctx context.Context, in io.Reader, out io.Writer) int {
	var closer io.Closer
	if c, ok := in.(io.Closer); ok {
		closer = c
	}
	st := newStream(in, out, closer, s.log)
	s.conn = jsonrpc2.NewConn(st, jsonrpc2.WithCodec(stdCodec{}))
	s.conn.Go(ctx, s.handle)
	code := 1
	select {
	case code = <-s.exitCode:
	case <-s.conn.Done():
		if err := s.conn.Err(); err != nil {
			s.log.Error("connection ended", "err", err)
		}
		s.mu.Lock()
		if s.state == shutDown {
			code = 0
		}
		s.mu.Unlock()
	case <-ctx.Done():
	}
	// No view capture may write, and no live update read, once the store
	// closes.
	s.view.stop()
	s.stopWatch()
	s.mu.Lock()
	svc := s.svc
	s.svc = nil
	s.mu.Unlock()
	if svc != nil {
		if err := svc.Close(); err != nil {
			s.log.Error("closing store", "err", err)
		}
	}
	return code
}

// stdCodec encodes payloads with encoding/json, so results and notification
// params follow the usual omitempty rules. LSP types from go.lsp.dev/protocol
// are encoded with protocol.Marshal into a json.RawMessage first.
type stdCodec struct{}

func (stdCodec) Marshal(v any) ([]byte, error) {
	if raw, ok := v.(json.RawMessage); ok {
		if raw == nil {
			return []byte("null"), nil
		}
		return raw, nil
	}
	return json.Marshal(v)
}

func (stdCodec) Unmarshal(data []byte, v any) error {
	if raw, ok := v.(*json.RawMessage); ok {
		*raw = append((*raw)[:0], data...)
		return nil
	}
	return json.Unmarshal(data, v)
}
