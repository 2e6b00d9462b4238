package lsp

import (
	"context"

	"github.com/ctxls/ctxls/chat"
	"github.com/ctxls/ctxls/lsp/command"
)

// clearTitle handles ctxls.session.clearTitle.
func (s *Server) clearTitle(ctx context.Context, a *command.SessionIDArgs) (any, error) {
	store, id, err := s.existingSession(ctx, a.SessionID, command.ClearTitle)
	if err != nil {
		return nil, err
	}
	sess, err := chat.ClearTitle(ctx, store, id)
	if err != nil {
		return nil, err
	}
	s.notify(ctx, command.SessionUpdated, command.SessionUpdatedParams{SessionID: sess.ID, Title: sess.Title, TitleSource: sess.TitleSource})
	return command.SessionResult{V: command.V, Session: sess}, nil
}
