package service

import (
	"context"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat"
	"github.com/ctxls/ctxls/session"
)

// resolve is the one place a provider is resolved for an operation: the
// connection's configuration with p's fields over it, and when no model is
// configured for the connection, the session's own (a session with a model
// of its own needs none from the provider or the environment). sess may be nil. The environment fills
// in what is still empty; a local Ollama is probed last.
func (s *Service) resolve(p api.Provider, sess *session.Session) (chat.Resolved, error) {
	prov := p.Merge(s.Provider())
	if prov.Model == "" && sess != nil {
		prov.Model = sess.Meta.Model
	}
	r, err := chat.Resolve(prov, s.getenv, s.probe)
	if err != nil {
		return chat.Resolved{}, api.Errorf(api.KindNoProvider, "%w", err)
	}
	return r, nil
}

// previewProvider is the provider a preview counts with: the configured
// one when it resolves, else its fields with the defaults filled in. It
// never fails and never needs a key or a running provider.
func (s *Service) previewProvider(sess *session.Session) chat.Resolved {
	prov := s.Provider()
	if prov.Model == "" && sess != nil {
		prov.Model = sess.Meta.Model
	}
	return chat.PreviewProvider(prov, s.getenv)
}

// CheckProvider resolves the connection's provider as a turn would, for
// `ctxls doctor`; it may probe a local Ollama.
func (s *Service) CheckProvider(_ context.Context) (chat.Resolved, error) {
	return s.resolve(api.Provider{}, nil)
}
