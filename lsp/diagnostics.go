package lsp

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/ctxls/ctxls/api"
)

// The editor's diagnostics, for the model's diagnostics tool
// (service.DiagnosticsDoor): asked with ctxls/diagnostics, only of a client
// that set initializationOptions.diagnostics.

const (
	// diagnosticsGrace is how long past waitMs the daemon waits for the
	// answer to ctxls/diagnostics.
	diagnosticsGrace = 5 * time.Second
	// maxDiagnosticsWait bounds waitMs.
	maxDiagnosticsWait = time.Minute
)

var (
	// errNoDiagnostics: the client did not say it answers ctxls/diagnostics.
	errNoDiagnostics = errors.New("this editor does not give its diagnostics (initializationOptions.diagnostics is not set)")
	// errDiagnosticsLate is the cause of the answer's own timeout.
	errDiagnosticsLate = errors.New("no answer in time")
)

// lspDiagnostics is the LSP door's way to the editor's diagnostics.
type lspDiagnostics struct{ s *Server }

// Diagnostics sends ctxls/diagnostics and returns the answer: uris nil for
// every file's; with wait (at most a minute) the editor answers once those
// files' diagnostics changed or wait passed. The answer is waited for
// wait plus diagnosticsGrace, no longer.
func (d lspDiagnostics) Diagnostics(ctx context.Context, uris []string, wait time.Duration) ([]api.FileDiagnostics, error) {
	s := d.s
	s.mu.Lock()
	answers := s.diagnostics
	s.mu.Unlock()
	if !answers {
		return nil, errNoDiagnostics
	}
	wait = min(max(wait, 0), maxDiagnosticsWait)
	limit := wait + diagnosticsGrace
	ctx, cancel := context.WithTimeoutCause(ctx, limit, errDiagnosticsLate)
	defer cancel()
	params := api.DiagnosticsParams{URIs: uris, WaitMs: int(wait.Milliseconds())}
	var answer []api.FileDiagnostics
	if _, err := s.conn.Call(ctx, api.Diagnostics, params, &answer); err != nil {
		err = diagnosticsError(ctx, err, limit)
		s.log.Info("no diagnostics from the editor", "err", err)
		return nil, err
	}
	return answer, nil
}

// diagnosticsError says why the editor's diagnostics were not had: no
// answer in time, the editor does not know the request, the editor's own
// error, or the caller's cancellation (returned as it is).
func diagnosticsError(ctx context.Context, err error, limit time.Duration) error {
	var rpc *jsonrpc2.Error
	switch {
	case context.Cause(ctx) == errDiagnosticsLate:
		return fmt.Errorf("the editor did not answer %s within %s", api.Diagnostics, limit)
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.As(err, &rpc) && rpc.Code == jsonrpc2.MethodNotFound:
		return fmt.Errorf("the editor does not answer %s", api.Diagnostics)
	case errors.As(err, &rpc):
		return fmt.Errorf("the editor answered %s with an error: %s", api.Diagnostics, rpc.Message)
	}
	return err
}
