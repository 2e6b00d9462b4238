package service

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/internal/human"
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

// UsageText is a session's usage as lines a person reads (ACP's /usage, the
// CLI's "sessions usage").
func UsageText(u *api.SessionUsageResult) string {
	var b strings.Builder
	if u.Answers == 0 {
		b.WriteString("No answer in this session has reported its tokens yet.\n")
	} else {
		fmt.Fprintf(&b, "%d answers: %s prompt tokens%s, %s completion tokens.\n", u.Answers, human.Thousands(u.PromptTokens), cachedText(u.CachedTokens), human.Thousands(u.CompletionTokens))
		for _, m := range u.Models {
			name := m.Model
			if name == "" {
				name = "(model not recorded)"
			}
			fmt.Fprintf(&b, "- %s: %d answers, %s prompt%s, %s completion\n", name, m.Answers, human.Thousands(m.PromptTokens), cachedText(m.CachedTokens), human.Thousands(m.CompletionTokens))
		}
	}
	if u.Unreported > 0 {
		// A tool-call round of a provider that reports no usage for it
		// counts here too: not only cancelled or failed answers.
		fmt.Fprintf(&b, "%d answers have no token count: the provider did not report one (some servers do not for tool-call rounds), or the answer was cancelled or failed first.\n", u.Unreported)
	}
	return b.String()
}

// TokensText is one answer's usage in a few words: "1,500 tokens in (1,024
// cached), 25 out" ("" for none).
func TokensText(u *api.Usage) string {
	if u == nil || u.PromptTokens+u.CompletionTokens == 0 {
		return ""
	}
	in := human.Thousands(u.PromptTokens) + " tokens in"
	if u.CachedTokens > 0 {
		in += " (" + human.Thousands(u.CachedTokens) + " cached)"
	}
	return in + ", " + human.Thousands(u.CompletionTokens) + " out"
}

// cachedText says how much of the prompt tokens were cached ("" for none).
func cachedText(n int) string {
	if n == 0 {
		return ""
	}
	return " (" + human.Thousands(n) + " of them cached)"
}
