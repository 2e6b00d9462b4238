package lsp

import (
	"context"
	"strings"
	"time"

	"github.com/ctxls/ctxls/session"
)

// envHint is what this connection says about where a session is used:
// initializationOptions.envHint verbatim when the client gave one, else
// "<clientInfo.name> <clientInfo.version>; workspace <roots>; git branch <b>"
// (see session.EnvHint).
func (s *Server) envHint() string {
	s.mu.Lock()
	override, client, roots := s.envOverride, s.clientInfo, s.roots
	s.mu.Unlock()
	if override != "" {
		return override
	}
	return session.EnvHint(client, roots)
}

// recordEnv stores the connection's envHint in a session it uses (a turn,
// a resume, a context change, a workspace folder change); the store writes
// only when it changed. A failure is logged: the hint is advisory.
func (s *Server) recordEnv(ctx context.Context, store session.Store, id string) {
	if store == nil || id == "" {
		return
	}
	if _, err := store.SetEnvHint(ctx, id, s.envHint()); err != nil {
		s.log.Info("envHint not recorded", "session", id, "err", err)
	}
}

// workspaceChangeTimeout bounds the store writes of a workspace folder
// change, which run on the read loop (see didChangeWorkspaceFolders).
const workspaceChangeTimeout = 10 * time.Second

// noteWorkspaceChange stores "Workspace folders changed: added /a; removed
// /b" as a system message of the current session (never creating one) and
// records the new envHint there. It runs on the read loop, so a turn sent
// after the change is read after the message is stored and includes it.
func (s *Server) noteWorkspaceChange(ctx context.Context, added, removed []string) {
	if len(added) == 0 && len(removed) == 0 {
		return
	}
	s.mu.Lock()
	id, store := s.current, s.store
	s.mu.Unlock()
	if id == "" || store == nil {
		return
	}
	var parts []string
	if len(added) > 0 {
		parts = append(parts, "added "+strings.Join(added, ", "))
	}
	if len(removed) > 0 {
		parts = append(parts, "removed "+strings.Join(removed, ", "))
	}
	ctx, cancel := context.WithTimeout(ctx, workspaceChangeTimeout)
	defer cancel()
	msg := &session.Message{SessionID: id, Role: session.RoleSystem, Content: "Workspace folders changed: " + strings.Join(parts, "; ")}
	if err := store.AppendMessage(ctx, msg); err != nil {
		s.log.Warn("workspace folder change not stored", "session", id, "err", err)
		return
	}
	s.recordEnv(ctx, store, id)
}

// clientInfoText is "<name> <version>" of initialize's clientInfo.
func clientInfoText(name, version string) string {
	return strings.TrimSpace(strings.TrimSpace(name) + " " + strings.TrimSpace(version))
}
