package lsp

import (
	"context"

	"github.com/ctxls/ctxls/api"
)

// setModel handles ctxls.session.setModel; the engine reads the model at
// the start of each turn. Like the other writes, it creates a session on
// first need.
func (s *Server) setModel(ctx context.Context, a *api.SetModelArgs) (any, error) {
	store, id, err := s.sessionFor(ctx, a.SessionID, true)
	if err != nil {
		return nil, err
	}
	sess, err := store.SetModel(ctx, id, a.Model)
	if err != nil {
		return nil, err
	}
	return api.SessionResult{V: api.V, Session: sess}, nil
}
