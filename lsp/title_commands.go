package lsp

import (
	"context"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat"
)

// clearTitle handles ctxls.session.clearTitle.
func (s *Server) clearTitle(ctx context.Context, a *api.SessionIDArgs) (any, error) {
	store, id, err := s.existingSession(ctx, a.SessionID, api.ClearTitle)
	if err != nil {
		return nil, err
	}
	sess, err := chat.ClearTitle(ctx, store, id)
	if err != nil {
		return nil, err
	}
	s.notify(ctx, api.SessionUpdated, api.SessionUpdatedParams{SessionID: sess.ID, Title: sess.Title, TitleSource: sess.TitleSource})
	return api.SessionResult{V: api.V, Session: sess}, nil
}
