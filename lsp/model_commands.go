package lsp

import (
	"context"

	"github.com/ctxls/ctxls/lsp/command"
)

// setModel handles ctxls.session.setModel; the engine reads the model at
// the start of each turn. Like the other writes, it creates a session on
// first need.
func (s *Server) setModel(ctx context.Context, a *command.SetModelArgs) (any, error) {
	store, id, err := s.sessionFor(ctx, a.SessionID, true)
	if err != nil {
		return nil, err
	}
	sess, err := store.SetModel(ctx, id, a.Model)
	if err != nil {
		return nil, err
	}
	return command.SessionResult{V: command.V, Session: sess}, nil
}
