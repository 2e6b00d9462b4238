package service

import (
	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/buffer"
	"github.com/ctxls/ctxls/prompts"
	"github.com/ctxls/ctxls/session"
)

// The store's structs never reach the wire: these give the API's own.

func wireSession(s *session.Session) *api.Session {
	if s == nil {
		return nil
	}
	return &api.Session{
		ID: s.ID, Title: s.Title, TitleSource: s.TitleSource,
		CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt,
		Meta: api.Meta{EnvHint: s.Meta.EnvHint, Model: s.Meta.Model, Workspace: s.Meta.Workspace,
			Tools: s.Meta.Tools, ReviewMode: api.ReviewMode(s.Meta.ReviewMode), Plan: s.Meta.Plan},
		Folder: s.Folder, MessageCount: s.MessageCount, FileCount: s.FileCount,
		Owner: s.Owner, Visibility: s.Visibility,
	}
}

func wireMessage(m session.Message) api.Message {
	w := api.Message{
		ID: m.ID, SessionID: m.SessionID, Role: m.Role, Content: m.Content,
		ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID, Status: m.Status,
		CreatedAt: m.CreatedAt, Model: m.Model, Files: m.Files,
	}
	if m.Usage != nil {
		w.Usage = &api.Usage{PromptTokens: m.Usage.PromptTokens, CompletionTokens: m.Usage.CompletionTokens, CachedTokens: m.Usage.CachedTokens}
	}
	if m.SummaryOf != nil {
		w.SummaryOf = &api.Span{First: m.SummaryOf.First, Last: m.SummaryOf.Last, Covered: m.SummaryOf.Covered, Questions: m.SummaryOf.Questions}
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
		out[i] = api.Hit{SessionID: h.SessionID, Title: h.Title, MessageID: h.MessageID, Role: h.Role, Snippet: h.Snippet}
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

// SummaryMarker is the line that stands for a summary of earlier turns
// where a conversation is shown (history.md, exports, the CLI, /compact).
func SummaryMarker(sp *api.Span) string {
	if sp == nil {
		return ""
	}
	return session.SummaryMarker(session.Span{First: sp.First, Last: sp.Last, Covered: sp.Covered})
}

// ConversationOrder returns msgs with each summary moved to right after the
// last message it covers: where the model's view started when it was made
// (session.InConversationOrder, the rule history.md and exports follow).
func ConversationOrder(msgs []api.Message) []api.Message {
	byID := make(map[int64]api.Message, len(msgs))
	keys := make([]session.Message, len(msgs))
	for i, m := range msgs {
		byID[m.ID] = m
		keys[i] = session.Message{ID: m.ID}
		if m.SummaryOf != nil {
			keys[i].SummaryOf = &session.Span{First: m.SummaryOf.First, Last: m.SummaryOf.Last, Covered: m.SummaryOf.Covered}
		}
	}
	out := make([]api.Message, 0, len(msgs))
	for _, k := range session.InConversationOrder(keys) {
		out = append(out, byID[k.ID])
	}
	return out
}

func summary(ss *session.Session) api.SessionSummary {
	return api.SessionSummary{
		ID: ss.ID, Title: ss.Title, TitleSource: ss.TitleSource,
		CreatedAt: ss.CreatedAt, UpdatedAt: ss.UpdatedAt,
		MessageCount: ss.MessageCount, FileCount: ss.FileCount,
		Owner: ss.Owner, Visibility: ss.Visibility,
		Workspace: ss.Meta.Workspace, Folder: ss.Folder,
	}
}

// wireInstructions are the project's instructions files as clients see
// them (nil when none).
func wireInstructions(ins []prompts.Instruction) []api.InstructionFile {
	var out []api.InstructionFile
	for _, in := range ins {
		out = append(out, api.InstructionFile{Path: in.Path, Bytes: len(in.Content), Size: in.Size, Unsaved: in.Unsaved, Cut: in.Cut})
	}
	return out
}
