package service

import (
	"context"
	"errors"

	"github.com/ctxls/ctxls/session"
)

// dataDir is the store's data directory ("" without a store).
func (s *Service) dataDir() string {
	if s.store == nil {
		return ""
	}
	return s.store.DataDir()
}

// defaultModel is the model new sessions get as their own ("" for none):
// the one ctxls.session.setModel made the default (session.DefaultModel).
func (s *Service) defaultModel() string {
	dir := s.dataDir()
	if dir == "" {
		return ""
	}
	m, err := session.DefaultModel(dir)
	if err != nil {
		s.log.Warn("the preferences cannot be read; ignored", "file", session.PrefsFile, "err", err)
	}
	return m
}

// setDefaultModel keeps model as the default model ("" forgets it).
func (s *Service) setDefaultModel(model string) error {
	dir := s.dataDir()
	if dir == "" {
		return errors.New("no data directory to keep the default model in")
	}
	return session.SetDefaultModel(dir, model)
}

// madeWithDefaults gives a session just made the default model as its
// own, when there is one: what makes it the model of new sessions. A
// failure is logged and the session kept as made.
func (s *Service) madeWithDefaults(ctx context.Context, sess *session.Session) *session.Session {
	m := s.defaultModel()
	if m == "" || sess.Meta.Model != "" {
		return sess
	}
	withModel, err := s.store.SetModel(ctx, sess.ID, m)
	if err != nil {
		s.log.Warn("the default model was not given to the new session", "session", sess.ID, "err", err)
		return sess
	}
	return withModel
}
