package lsp

import (
	"context"
	"strings"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/prompts"
	"github.com/ctxls/ctxls/session"
)

func (s *Server) contextSet(ctx context.Context, a *api.ContextSetArgs) (any, error) {
	if a.SetName == "" {
		return nil, invalidParams("%s: setName is required", api.ContextSet)
	}
	if a.Items == nil {
		return nil, invalidParams("%s: items is required (an empty array deletes the set)", api.ContextSet)
	}
	mode := session.Mode(a.Mode)
	switch mode {
	case "", session.ModeReplace, session.ModeMerge:
	default:
		return nil, invalidParams("%s: mode must be \"replace\" or \"merge\", got %q", api.ContextSet, truncate(a.Mode, 40))
	}
	s.mu.Lock()
	roots := s.roots
	s.mu.Unlock()
	if a.SetName == prompts.SetFiles {
		// Checked before a session is made for the change.
		for _, it := range a.Items {
			if _, err := session.NormalizeFileItem(it, roots); err != nil {
				return nil, err
			}
		}
	}
	store, id, err := s.sessionFor(ctx, a.SessionID, true)
	if err != nil {
		return nil, err
	}
	s.recordEnv(ctx, store, id)
	ch, err := store.UpdateContext(ctx, id, a.SetName, a.Items, mode, session.AddedByUser, roots)
	if err != nil {
		return nil, err
	}
	s.notifyContext(ctx, id, "changed", ch.Context, ch.Added, ch.Removed, s.missingFiles(ch.Context))
	return api.ContextSetResult{V: api.V, SetName: ch.SetName, Items: nonNil(ch.Items), Warnings: nonNil(ch.Warnings)}, nil
}

func (s *Server) contextGet(ctx context.Context, a *api.ContextGetArgs) (any, error) {
	store, id, err := s.sessionFor(ctx, a.SessionID, false)
	if err != nil {
		return nil, err
	}
	res := api.ContextGetResult{V: api.V, Context: session.Context{}}
	if id == "" {
		return res, nil
	}
	sets, err := store.Context(ctx, id)
	if err != nil {
		return nil, err
	}
	if a.SetName == "" {
		res.Context = nonNilContext(sets)
	} else if items, ok := sets[a.SetName]; ok {
		res.Context[a.SetName] = items
	}
	return res, nil
}

func (s *Server) contextCandidates(ctx context.Context, _ *api.EmptyArgs) (any, error) {
	return api.CandidatesResult{V: api.V, Files: s.docs.Candidates()}, nil
}

// notifyContext sends ctxls/contextChanged.
func (s *Server) notifyContext(ctx context.Context, id, reason string, sets session.Context, added, removed, missing []string) {
	s.notify(ctx, api.ContextChanged, api.ContextChangedParams{
		SessionID: id,
		Reason:    reason,
		Context:   nonNilContext(sets),
		Added:     nonNil(added),
		Removed:   nonNil(removed),
		Missing:   nonNil(missing),
		Applet:    appletOf(sets[prompts.SetApplet]),
	})
}

// appletOf turns the applet set [slug, "key=value", ...] into its object;
// nil when there is none.
func appletOf(items []string) *api.Applet {
	if len(items) == 0 {
		return nil
	}
	a := &api.Applet{Slug: items[0], Params: map[string]string{}}
	for _, it := range items[1:] {
		k, v, _ := strings.Cut(it, "=")
		a.Params[k] = v
	}
	return a
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
