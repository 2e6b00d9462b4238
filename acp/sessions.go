package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ctxls/ctxls/session"
	"github.com/ctxls/ctxls/turn"
)

// NewSession makes a ctxls session whose workspace is cwd. MCP servers are
// accepted and not used (docs/protocol.md says so). The slash commands
// follow the response, which is what tells the client the session's id.
func (a *Agent) NewSession(ctx context.Context, p sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	if err := checkCwd(p.Cwd); err != nil {
		return sdk.NewSessionResponse{}, err
	}
	sess, err := a.store.Create(ctx, "")
	if err != nil {
		return sdk.NewSessionResponse{}, rpcError(err)
	}
	a.remember(ctx, sess.ID, p.Cwd)
	a.register(sess.ID, p.Cwd, false)
	a.out.afterResponse(sess.ID, func() { a.sendCommands(ctx, sess.ID) })
	a.log.Info("session/new", "session", sess.ID, "mcpServers", len(p.McpServers))
	return sdk.NewSessionResponse{SessionId: sdk.SessionId(sess.ID)}, nil
}

// remember records the session's workspace and environment line.
func (a *Agent) remember(ctx context.Context, id, cwd string) {
	if err := a.store.SetWorkspace(ctx, id, cwd); err != nil {
		a.log.Info("workspace not recorded", "session", id, "err", err)
	}
	if _, err := a.store.SetEnvHint(ctx, id, a.envHint(cwd)); err != nil {
		a.log.Info("envHint not recorded", "session", id, "err", err)
	}
}

func (a *Agent) register(id, cwd string, resumed bool) *openSession {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.open[id]
	if s == nil {
		s = &openSession{id: id}
		a.open[id] = s
	}
	s.cwd, s.resumed = cwd, resumed
	return s
}

// ListSessions lists the store's sessions, newest activity first; with
// cwd, only those last used in that folder.
func (a *Agent) ListSessions(ctx context.Context, p sdk.ListSessionsRequest) (sdk.ListSessionsResponse, error) {
	opt := session.ListOptions{Limit: 50}
	if p.Cursor != nil {
		opt.Cursor = *p.Cursor
	}
	if p.Cwd != nil && *p.Cwd != "" {
		if err := checkCwd(*p.Cwd); err != nil {
			return sdk.ListSessionsResponse{}, err
		}
		opt.Workspace = *p.Cwd
	}
	list, next, err := a.store.List(ctx, opt)
	if err != nil {
		return sdk.ListSessionsResponse{}, rpcError(err)
	}
	out := sdk.ListSessionsResponse{Sessions: []sdk.SessionInfo{}}
	for _, s := range list {
		info := sdk.SessionInfo{SessionId: sdk.SessionId(s.ID), Cwd: workspaceOf(&s), UpdatedAt: sdk.Ptr(s.UpdatedAt.UTC().Format(time.RFC3339))}
		if s.Title != "" {
			info.Title = sdk.Ptr(s.Title)
		}
		out.Sessions = append(out.Sessions, info)
	}
	if next != "" {
		out.NextCursor = &next
	}
	return out, nil
}

// workspaceOf is a session's folder for ACP, which requires an absolute
// path: the workspace it was used in, else its own session folder (a
// session made by the CLI outside any workspace).
func workspaceOf(s *session.Session) string {
	if s.Meta.Workspace != "" {
		return s.Meta.Workspace
	}
	return s.Folder
}

// LoadSession replays the stored conversation as session/update
// notifications, then the title and context and the slash commands, and
// only then answers.
func (a *Agent) LoadSession(ctx context.Context, p sdk.LoadSessionRequest) (sdk.LoadSessionResponse, error) {
	if err := checkCwd(p.Cwd); err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	id := string(p.SessionId)
	msgs, err := a.store.Messages(ctx, id)
	if err != nil {
		return sdk.LoadSessionResponse{}, a.unknown(err, id)
	}
	a.remember(ctx, id, p.Cwd)
	a.register(id, p.Cwd, true)
	for _, m := range msgs {
		for _, u := range replay(m) {
			a.send(ctx, id, u)
		}
	}
	a.sendState(ctx, id)
	a.sendCommands(ctx, id)
	return sdk.LoadSessionResponse{}, nil
}

// ResumeSession opens a session without replaying it; its next turn carries
// the resume reminder (where the work stood).
func (a *Agent) ResumeSession(ctx context.Context, p sdk.ResumeSessionRequest) (sdk.ResumeSessionResponse, error) {
	if err := checkCwd(p.Cwd); err != nil {
		return sdk.ResumeSessionResponse{}, err
	}
	id := string(p.SessionId)
	if _, err := a.store.Get(ctx, id); err != nil {
		return sdk.ResumeSessionResponse{}, a.unknown(err, id)
	}
	a.remember(ctx, id, p.Cwd)
	a.register(id, p.Cwd, true)
	a.sendState(ctx, id)
	a.sendCommands(ctx, id)
	return sdk.ResumeSessionResponse{}, nil
}

// unknown maps a store error about session id to a clear one.
func (a *Agent) unknown(err error, id string) error {
	if errors.Is(err, session.ErrNotFound) {
		return invalid(fmt.Sprintf("unknown session %q", truncate(id, 80)))
	}
	return rpcError(err)
}

// CloseSession cancels the session's running turn and forgets the session
// on this connection; it stays in the store.
func (a *Agent) CloseSession(ctx context.Context, p sdk.CloseSessionRequest) (sdk.CloseSessionResponse, error) {
	s, err := a.opened(ctx, p.SessionId)
	if err != nil {
		return sdk.CloseSessionResponse{}, err
	}
	a.stopTurn(s)
	a.mu.Lock()
	delete(a.open, s.id)
	a.mu.Unlock()
	return sdk.CloseSessionResponse{}, nil
}

// UnstableDeleteSession deletes the session from the store, as the LSP
// command does: a turn running in it ends first.
func (a *Agent) UnstableDeleteSession(ctx context.Context, p sdk.UnstableDeleteSessionRequest) (sdk.UnstableDeleteSessionResponse, error) {
	id := string(p.SessionId)
	if _, err := a.store.Get(ctx, id); err != nil {
		return sdk.UnstableDeleteSessionResponse{}, a.unknown(err, id)
	}
	a.engine.Abort(id)
	a.mu.Lock()
	s := a.open[id]
	delete(a.open, id)
	a.mu.Unlock()
	if s != nil {
		a.stopTurn(s)
	}
	if err := a.store.Delete(ctx, id); err != nil {
		return sdk.UnstableDeleteSessionResponse{}, a.unknown(err, id)
	}
	return sdk.UnstableDeleteSessionResponse{}, nil
}

// stopTurn cancels the session's running turn and waits for it to end.
func (a *Agent) stopTurn(s *openSession) {
	a.mu.Lock()
	t, done := s.turn, s.done
	a.mu.Unlock()
	if t == nil {
		return
	}
	t.Cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		a.log.Warn("turn did not end after cancel", "session", s.id)
	}
}

// sendState sends the session's title and, in _meta, its relevant context.
func (a *Agent) sendState(ctx context.Context, id string) {
	sess, err := a.store.Get(ctx, id)
	if err != nil {
		return
	}
	u := infoUpdate(sess)
	a.mu.Lock()
	if s := a.open[id]; s != nil {
		s.title = sess.Title
	}
	a.mu.Unlock()
	if sets, err := a.store.Context(ctx, id); err == nil {
		if sets == nil {
			sets = session.Context{} // {} rather than null
		}
		u.SessionInfoUpdate.Meta = map[string]any{"ctxls": map[string]any{"context": sets}}
	}
	a.send(ctx, id, u)
}

// infoUpdate is session_info_update with the session's title.
func infoUpdate(s *session.Session) sdk.SessionUpdate {
	u := &sdk.SessionSessionInfoUpdate{SessionUpdate: "session_info_update", UpdatedAt: sdk.Ptr(s.UpdatedAt.UTC().Format(time.RFC3339))}
	if s.Title != "" {
		u.Title = sdk.Ptr(s.Title)
	}
	return sdk.SessionUpdate{SessionInfoUpdate: u}
}

// lateEvent sends the model's title when it arrives after its turn ended.
func (a *Agent) lateEvent(ev turn.Event) {
	tc, ok := ev.(turn.TitleChanged)
	if !ok {
		return
	}
	a.mu.Lock()
	_, open := a.open[tc.Session.ID]
	a.mu.Unlock()
	if open {
		a.send(context.Background(), tc.Session.ID, infoUpdate(tc.Session))
	}
}

// replay turns one stored message into the updates a client shows.
func replay(m session.Message) []sdk.SessionUpdate {
	var out []sdk.SessionUpdate
	switch m.Role {
	case session.RoleUser:
		out = append(out, sdk.UpdateUserMessageText(m.Content))
	case session.RoleAssistant:
		if m.Content != "" {
			out = append(out, sdk.UpdateAgentMessageText(m.Content))
		}
		var calls []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		}
		if len(m.ToolCalls) > 0 && json.Unmarshal(m.ToolCalls, &calls) == nil {
			for _, c := range calls {
				out = append(out, toolCallStart(c.ID, c.Function.Name, c.Function.Arguments, sdk.ToolCallStatusCompleted))
			}
		}
	case session.RoleTool:
		out = append(out, toolCallDone(m.ToolCallID, m.Content, false))
	}
	return out
}
