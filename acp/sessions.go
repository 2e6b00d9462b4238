package acp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/service"
)

// NewSession makes a ctxls session whose workspace is cwd, with the MCP
// servers the client sent for its turns. The slash commands
// follow the response, which is what tells the client the session's id.
func (a *Agent) NewSession(ctx context.Context, p sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	if err := checkCwd(p.Cwd); err != nil {
		return sdk.NewSessionResponse{}, err
	}
	res, err := a.svc.SessionNew(ctx, &api.SessionNewArgs{})
	if err != nil {
		return sdk.NewSessionResponse{}, rpcError(err)
	}
	id := res.Session.ID
	if err := a.svc.Use(ctx, id, p.Cwd, false); err != nil {
		return sdk.NewSessionResponse{}, rpcError(err)
	}
	a.register(id, p.Cwd)
	a.useMCPServers(id, p.McpServers)
	a.out.afterResponse(id, func() { a.sendCommands(ctx, id) })
	a.log.Info("session/new", "session", id, "mcpServers", len(p.McpServers))
	return sdk.NewSessionResponse{SessionId: sdk.SessionId(id), Modes: modes(res.Session), ConfigOptions: a.configOptions(ctx, id)}, nil
}

func (a *Agent) register(id, cwd string) *openSession {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.open[id]
	if s == nil {
		s = &openSession{id: id}
		a.open[id] = s
	}
	s.cwd = cwd
	return s
}

// ListSessions lists the store's sessions, newest activity first; with
// cwd, only those last used in that folder.
func (a *Agent) ListSessions(ctx context.Context, p sdk.ListSessionsRequest) (sdk.ListSessionsResponse, error) {
	args := &api.SessionListArgs{Limit: 50}
	if p.Cursor != nil {
		args.Cursor = *p.Cursor
	}
	workspace := ""
	if p.Cwd != nil && *p.Cwd != "" {
		if err := checkCwd(*p.Cwd); err != nil {
			return sdk.ListSessionsResponse{}, err
		}
		workspace = *p.Cwd
	}
	list, err := a.svc.ListIn(ctx, args, workspace)
	if err != nil {
		return sdk.ListSessionsResponse{}, rpcError(err)
	}
	out := sdk.ListSessionsResponse{Sessions: []sdk.SessionInfo{}}
	for _, s := range list.Sessions {
		// ACP requires an absolute path: the workspace it was used in,
		// else its own session folder (a session made by the CLI outside
		// any workspace).
		cwd := s.Workspace
		if cwd == "" {
			cwd = s.Folder
		}
		info := sdk.SessionInfo{SessionId: sdk.SessionId(s.ID), Cwd: cwd, UpdatedAt: sdk.Ptr(s.UpdatedAt.UTC().Format(time.RFC3339))}
		if s.Title != "" {
			info.Title = sdk.Ptr(s.Title)
		}
		out.Sessions = append(out.Sessions, info)
	}
	if list.NextCursor != "" {
		out.NextCursor = &list.NextCursor
	}
	return out, nil
}

// LoadSession replays the stored conversation as session/update
// notifications, then the title and context and the slash commands, and
// only then answers.
func (a *Agent) LoadSession(ctx context.Context, p sdk.LoadSessionRequest) (sdk.LoadSessionResponse, error) {
	if err := checkCwd(p.Cwd); err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	id := string(p.SessionId)
	show, err := a.svc.SessionShow(ctx, &api.SessionIDArgs{SessionID: id})
	if err != nil {
		return sdk.LoadSessionResponse{}, a.unknown(err, id)
	}
	if err := a.svc.Use(ctx, id, p.Cwd, true); err != nil {
		return sdk.LoadSessionResponse{}, a.unknown(err, id)
	}
	a.register(id, p.Cwd)
	a.useMCPServers(id, p.McpServers)
	for _, m := range show.Messages {
		for _, u := range replay(m) {
			a.send(ctx, id, u)
		}
		if m.Role == api.RoleUser {
			// The question's images, after its text.
			for _, im := range service.QuestionImages(show.Session.Folder, m.Content) {
				a.send(ctx, id, sdk.UpdateUserMessage(sdk.ImageBlock(base64.StdEncoding.EncodeToString(im.Data), im.MIME)))
			}
		}
	}
	if plan := show.Session.Meta.Plan; len(plan) > 0 {
		a.send(ctx, id, planUpdate(plan)) // where the plan stands now
	}
	a.sendState(ctx, id)
	a.sendCommands(ctx, id)
	return sdk.LoadSessionResponse{Modes: modes(show.Session), ConfigOptions: a.configOptions(ctx, id)}, nil
}

// ResumeSession opens a session without replaying it; its next turn carries
// the resume reminder (where the work stood).
func (a *Agent) ResumeSession(ctx context.Context, p sdk.ResumeSessionRequest) (sdk.ResumeSessionResponse, error) {
	if err := checkCwd(p.Cwd); err != nil {
		return sdk.ResumeSessionResponse{}, err
	}
	id := string(p.SessionId)
	if err := a.svc.Use(ctx, id, p.Cwd, true); err != nil {
		return sdk.ResumeSessionResponse{}, a.unknown(err, id)
	}
	a.register(id, p.Cwd)
	a.useMCPServers(id, p.McpServers)
	a.sendState(ctx, id)
	a.sendCommands(ctx, id)
	sess, err := a.svc.Session(ctx, id)
	if err != nil {
		return sdk.ResumeSessionResponse{}, a.unknown(err, id)
	}
	if len(sess.Meta.Plan) > 0 {
		a.send(ctx, id, planUpdate(sess.Meta.Plan))
	}
	return sdk.ResumeSessionResponse{Modes: modes(sess), ConfigOptions: a.configOptions(ctx, id)}, nil
}

// unknown says which session was not found.
func (a *Agent) unknown(err error, id string) error {
	if api.KindOf(err) == api.KindNotFound {
		err = api.Errorf(api.KindNotFound, "unknown session %q", truncate(id, 80))
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

// UnstableDeleteSession deletes the session from the store: the service
// stops a turn running in it and waits for its end first, as for every
// door.
func (a *Agent) UnstableDeleteSession(ctx context.Context, p sdk.UnstableDeleteSessionRequest) (sdk.UnstableDeleteSessionResponse, error) {
	id := string(p.SessionId)
	if _, err := a.svc.SessionDelete(ctx, &api.SessionRefArgs{SessionID: id}); err != nil {
		return sdk.UnstableDeleteSessionResponse{}, a.unknown(err, id)
	}
	a.mu.Lock()
	delete(a.open, id)
	a.mu.Unlock()
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
	sess, err := a.svc.Session(ctx, id)
	if err != nil {
		return
	}
	u := infoUpdate(sess)
	a.mu.Lock()
	if s := a.open[id]; s != nil {
		s.title = sess.Title
	}
	a.mu.Unlock()
	if st, err := a.svc.ContextState(ctx, id); err == nil {
		u.SessionInfoUpdate.Meta = map[string]any{"ctxls": map[string]any{"context": st.Context}}
	}
	a.send(ctx, id, u)
}

// infoUpdate is session_info_update with the session's title.
func infoUpdate(s *api.Session) sdk.SessionUpdate {
	u := &sdk.SessionSessionInfoUpdate{SessionUpdate: "session_info_update", UpdatedAt: sdk.Ptr(s.UpdatedAt.UTC().Format(time.RFC3339))}
	if s.Title != "" {
		u.Title = sdk.Ptr(s.Title)
	}
	return sdk.SessionUpdate{SessionInfoUpdate: u}
}

// onEvent sends what the service's operations changed in a session open on
// this connection: its title (when it is not the one last sent), its
// context (session_info_update with _meta), after a compaction what the
// history takes (usage_update).
func (a *Agent) onEvent(ev service.Update) {
	ctx := context.Background()
	switch ev := ev.(type) {
	case service.SessionUpdated:
		a.mu.Lock()
		s := a.open[ev.SessionID]
		changed := s != nil && ev.Session != nil && s.title != ev.Session.Title
		if changed {
			s.title = ev.Session.Title
		}
		a.mu.Unlock()
		if changed {
			a.send(ctx, ev.SessionID, infoUpdate(ev.Session))
		}
		if s != nil && ev.CompactedThrough != 0 {
			a.send(ctx, ev.SessionID, sdk.SessionUpdate{UsageUpdate: &sdk.SessionUsageUpdate{
				SessionUpdate: "usage_update", Size: ev.Window, Used: ev.Tokens,
			}})
		}
	case service.SessionContextChanged:
		if a.isOpen(ev.SessionID) {
			a.sendState(ctx, ev.SessionID)
		}
	}
}

// planUpdate is a session's plan as ACP's plan update: the whole plan
// (no entries once it is cleared).
func planUpdate(entries []api.PlanEntry) sdk.SessionUpdate {
	out := make([]sdk.PlanEntry, len(entries))
	for i, e := range entries {
		out[i] = sdk.PlanEntry{Content: e.Content, Priority: sdk.PlanEntryPriority(e.Priority), Status: sdk.PlanEntryStatus(e.Status)}
	}
	return sdk.UpdatePlan(out...)
}

// replay turns one stored message into the updates a client shows.
func replay(m api.Message) []sdk.SessionUpdate {
	var out []sdk.SessionUpdate
	switch m.Role {
	case api.RoleUser:
		out = append(out, sdk.UpdateUserMessageText(m.Content))
	case api.RoleAssistant:
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
				out = append(out, toolCallStart(storedCall(c.ID, c.Function.Name, c.Function.Arguments), sdk.ToolCallStatusCompleted))
			}
		}
	case api.RoleTool:
		out = append(out, toolCallDone(m.ToolCallID, m.Content, storedStatus(m.Status), ""))
	}
	return out
}

// storedStatus is ctxls's status of a call by its stored result's.
func storedStatus(s api.Status) api.ToolStatus {
	switch s {
	case api.StatusError:
		return api.ToolFailed
	case api.StatusDeclined:
		return api.ToolDeclined
	case api.StatusCancelled:
		return api.ToolCancelled
	}
	return api.ToolDone
}
