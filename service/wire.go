package service

import (
	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/buffer"
	"github.com/ctxls/ctxls/session"
)

// The store's structs never reach the wire: these give the API's own.

func wireSession(s *session.Session) *api.Session {
	if s == nil {
		return nil
	}
	return &api.Session{
		ID: s.ID, Title: s.Title, TitleSource: api.TitleSource(s.TitleSource),
		CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt,
		Meta:   api.Meta{EnvHint: s.Meta.EnvHint, Model: s.Meta.Model, Workspace: s.Meta.Workspace},
		Folder: s.Folder, MessageCount: s.MessageCount, FileCount: s.FileCount,
		Owner: s.Owner, Visibility: api.Visibility(s.Visibility),
	}
}

func wireMessage(m session.Message) api.Message {
	w := api.Message{
		ID: m.ID, SessionID: m.SessionID, Role: api.Role(m.Role), Content: m.Content,
		ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID, Status: api.Status(m.Status),
		CreatedAt: m.CreatedAt, Model: m.Model,
	}
	if m.Usage != nil {
		w.Usage = &api.Usage{PromptTokens: m.Usage.PromptTokens, CompletionTokens: m.Usage.CompletionTokens}
	}
	if m.SummaryOf != nil {
		w.SummaryOf = &api.Span{First: m.SummaryOf.First, Last: m.SummaryOf.Last, Covered: m.SummaryOf.Covered}
	}
	return w
}

func wireMessages(ms []session.Message) []api.Message {
	out := make([]api.Message, len(ms))
	for i, m := range ms {
		out[i] = wireMessage(m)
	}
	return out
}

// wireContext copies the sets; never nil ({} on the wire).
func wireContext(c session.Context) api.Context {
	out := make(api.Context, len(c))
	for k, v := range c {
		out[k] = v
	}
	return out
}

func wireHits(hs []session.Hit) []api.Hit {
	out := make([]api.Hit, len(hs))
	for i, h := range hs {
		out[i] = api.Hit{SessionID: h.SessionID, Title: h.Title, MessageID: h.MessageID, Role: api.Role(h.Role), Snippet: h.Snippet}
	}
	return out
}

func wireCandidates(cs []buffer.Candidate) []api.Candidate {
	out := make([]api.Candidate, len(cs))
	for i, c := range cs {
		out[i] = api.Candidate{URI: c.URI, Path: c.Path, LanguageID: c.LanguageID, Open: c.Open, Dirty: c.Dirty,
			Active: c.Active, LastEditedAt: c.LastEditedAt, Size: c.Size}
	}
	return out
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
