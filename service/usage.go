package service

import (
	"cmp"
	"context"
	"slices"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/session"
)

// SessionUsage adds up the tokens the provider reported for the session's
// answers, in all and by model (most tokens first).
func (s *Service) SessionUsage(ctx context.Context, a *api.SessionIDArgs) (*api.SessionUsageResult, error) {
	sess, err := s.existing(ctx, a.SessionID, api.SessionUsage)
	if err != nil {
		return nil, fail(err)
	}
	msgs, err := s.store.Messages(ctx, sess.ID)
	if err != nil {
		return nil, fail(err)
	}
	res := &api.SessionUsageResult{V: api.V, SessionID: sess.ID, Models: []api.ModelUsage{}}
	byModel := map[string]*api.ModelUsage{}
	for _, m := range msgs {
		if m.Role != session.RoleAssistant {
			continue
		}
		if m.Usage == nil || m.Usage.PromptTokens+m.Usage.CompletionTokens == 0 {
			res.Unreported++
			continue
		}
		res.Answers++
		res.PromptTokens += m.Usage.PromptTokens
		res.CompletionTokens += m.Usage.CompletionTokens
		res.CachedTokens += m.Usage.CachedTokens
		mu := byModel[m.Model]
		if mu == nil {
			mu = &api.ModelUsage{Model: m.Model}
			byModel[m.Model] = mu
		}
		mu.Answers++
		mu.PromptTokens += m.Usage.PromptTokens
		mu.CompletionTokens += m.Usage.CompletionTokens
		mu.CachedTokens += m.Usage.CachedTokens
	}
	for _, mu := range byModel {
		res.Models = append(res.Models, *mu)
	}
	slices.SortFunc(res.Models, func(x, y api.ModelUsage) int {
		return cmp.Or(cmp.Compare(y.PromptTokens+y.CompletionTokens, x.PromptTokens+x.CompletionTokens), cmp.Compare(x.Model, y.Model))
	})
	return res, nil
}
