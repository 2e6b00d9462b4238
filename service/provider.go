package service

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

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
	prov := p.Merge(s.currentProvider())
	if prov.Model == "" && sess != nil {
		prov.Model = sess.Meta.Model
	}
	r, err := chat.Resolve(prov, s.getenv, s.probe)
	if errors.Is(err, chat.ErrNoModel) {
		if berr := checkBaseURL(r.BaseURL); berr != nil {
			return chat.Resolved{}, api.Errorf(api.KindNoProvider, "%w", berr)
		}
		return r, s.noProvider(err) // r: enough to list its models
	}
	if errors.Is(err, chat.ErrNoProvider) {
		return chat.Resolved{}, s.noProvider(err)
	}
	if err != nil {
		return chat.Resolved{}, api.Errorf(api.KindNoProvider, "%w", err)
	}
	if err := checkBaseURL(r.BaseURL); err != nil {
		return chat.Resolved{}, api.Errorf(api.KindNoProvider, "%w", err)
	}
	return r, nil
}

// noProvider is err (chat.ErrNoProvider or ErrNoModel, whose text says
// what to set) with the door's sentence saying where its user sets it.
func (s *Service) noProvider(err error) error {
	if s.providerWhere == "" {
		return api.Errorf(api.KindNoProvider, "%w", err)
	}
	return api.Errorf(api.KindNoProvider, "%w %s", err, s.providerWhere)
}

// checkBaseURL rejects a base URL no HTTP client can call, such as
// "localhost:11434/v1" (no scheme: Go's client would fail every request
// with "unsupported protocol scheme"), before a turn is stored.
func checkBaseURL(base string) error {
	u, err := url.Parse(base)
	if err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		return nil
	}
	msg := fmt.Sprintf("the provider's base URL %q is not an http:// or https:// URL: set provider.baseURL (or OPENAI_BASE_URL) to one", base)
	if !strings.Contains(base, "://") {
		msg += fmt.Sprintf(", such as %q", "http://"+strings.TrimLeft(base, "/"))
	}
	return errors.New(msg)
}

// previewProvider is the provider a preview counts with: the configured
// one when it resolves, else its fields with the defaults filled in. It
// never fails and never needs a key or a running provider.
func (s *Service) previewProvider(sess *session.Session) chat.Resolved {
	prov := s.currentProvider()
	if prov.Model == "" && sess != nil {
		prov.Model = sess.Meta.Model
	}
	return chat.PreviewProvider(prov, s.getenv)
}

// CheckProvider resolves the connection's provider with p over it, as a
// turn would (it may probe a local Ollama), and asks it for its models:
// `ctxls doctor`. The check is returned as far as it got, with the error
// that stopped it (KindNoProvider, or KindProviderFailed when it did not
// answer).
func (s *Service) CheckProvider(ctx context.Context, p api.Provider) (*api.ProviderCheck, error) {
	r, err := s.resolve(p, nil)
	noModel := errors.Is(err, chat.ErrNoModel) // the server's models still listed, to pick one from
	if err != nil && !noModel {
		return nil, err
	}
	c := &api.ProviderCheck{API: r.API, BaseURL: r.BaseURL, Model: r.Model, TitleModel: r.TitleModel, KeyEnv: r.KeyEnv(), HasKey: r.APIKey() != "", NoModel: noModel}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if c.Models, c.ListErr = chat.ListModels(ctx, r); c.ListErr != nil {
		return c, errors.Join(err, api.Errorf(api.KindProviderFailed, "%w", c.ListErr))
	}
	return c, err
}

// modelsTimeout bounds asking the provider for its models.
const modelsTimeout = 10 * time.Second

// ModelsList lists the provider's models, with the one the session's next
// turn uses and the provider's default.
func (s *Service) ModelsList(ctx context.Context, a *api.SessionIDArgs) (*api.ModelsListResult, error) {
	var sess *session.Session
	if s.store != nil {
		var err error
		if sess, err = s.sessionOf(ctx, a.SessionID, false); err != nil {
			return nil, fail(err)
		}
	}
	// With no model configured the server's models are listed all the
	// same, for one to be picked (Default and Current are then empty).
	r, err := s.resolve(api.Provider{}, nil)
	if err != nil && !errors.Is(err, chat.ErrNoModel) {
		return nil, err
	}
	res := &api.ModelsListResult{V: api.V, Default: r.Model, Current: r.Model}
	if m := s.defaultModel(); m != "" {
		res.Default = m // what a new session gets as its own
		if sess == nil {
			res.Current = m // the next turn makes one
		}
	}
	if sess != nil && sess.Meta.Model != "" {
		res.Current = sess.Meta.Model
	}
	ctx, cancel := context.WithTimeout(ctx, modelsTimeout)
	defer cancel()
	if res.Models, err = chat.ListModels(ctx, r); err != nil {
		return nil, api.Errorf(api.KindProviderFailed, "%w", err)
	}
	if res.Models == nil {
		res.Models = []string{}
	}
	return res, nil
}
