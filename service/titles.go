package service

import (
	"context"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat"
)

// SessionRegenerateTitle asks the model for a title again (source
// "model", even over a user's title). The provider is the connection's,
// with the session's model where none is configured.
func (s *Service) SessionRegenerateTitle(ctx context.Context, a *api.SessionIDArgs) (*api.SessionResult, error) {
	return s.RegenerateTitle(ctx, a, api.Provider{})
}

// RegenerateTitle is SessionRegenerateTitle with provider settings over the
// connection's (the CLI's flags).
func (s *Service) RegenerateTitle(ctx context.Context, a *api.SessionIDArgs, p api.Provider) (*api.SessionResult, error) {
	sess, err := s.existing(ctx, a.SessionID, api.RegenerateTitle)
	if err != nil {
		return nil, fail(err)
	}
	resolved, err := s.resolve(p, sess)
	if err != nil {
		return nil, err
	}
	if sess, err = s.engine.RegenerateTitle(ctx, sess.ID, resolved); err != nil {
		return nil, fail(err)
	}
	s.titleChanged(sess)
	return &api.SessionResult{V: api.V, Session: wireSession(sess)}, nil
}

// SessionClearTitle makes the title automatic again: the first line of
// the first message, source "auto"; the model is asked again after the
// next complete answer.
func (s *Service) SessionClearTitle(ctx context.Context, a *api.SessionIDArgs) (*api.SessionResult, error) {
	sess, err := s.existing(ctx, a.SessionID, api.ClearTitle)
	if err != nil {
		return nil, fail(err)
	}
	if sess, err = chat.ClearTitle(ctx, s.store, sess.ID); err != nil {
		return nil, fail(err)
	}
	s.titleChanged(sess)
	return &api.SessionResult{V: api.V, Session: wireSession(sess)}, nil
}

// SessionSetModel sets the model the session's turns use ("" for the
// provider's). Like the other writes, it makes a session on first need.
// SessionSetReviewMode sets how the model's edits are reviewed.
func (s *Service) SessionSetReviewMode(ctx context.Context, a *api.SetReviewModeArgs) (*api.SessionResult, error) {
	if a.Mode == "" {
		return nil, required(api.SetReviewMode, "mode")
	}
	sess, err := s.sessionOf(ctx, a.SessionID, true)
	if err != nil {
		return nil, fail(err)
	}
	if sess, err = s.store.SetReviewMode(ctx, sess.ID, string(a.Mode)); err != nil {
		return nil, fail(err)
	}
	return &api.SessionResult{V: api.V, Session: wireSession(sess)}, nil
}

func (s *Service) SessionSetModel(ctx context.Context, a *api.SetModelArgs) (*api.SessionResult, error) {
	sess, err := s.sessionOf(ctx, a.SessionID, true)
	if err != nil {
		return nil, fail(err)
	}
	if sess, err = s.store.SetModel(ctx, sess.ID, a.Model); err != nil {
		return nil, fail(err)
	}
	if a.Default {
		// Only when asked: the choice then outlives the session.
		if err := s.setDefaultModel(sess.Meta.Model); err != nil {
			return nil, api.Errorf(api.KindInternal, "the session's model is set, but it could not be kept as the default for new sessions: %w", err)
		}
		s.log.Info("default model set", "model", sess.Meta.Model)
	}
	return &api.SessionResult{V: api.V, Session: wireSession(sess)}, nil
}
