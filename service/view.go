package service

import (
	"context"
	"slices"
	"strings"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/prompts"
	"github.com/ctxls/ctxls/session"
)

// CaptureView stores a captured view of the editor as the applet set of
// session id if id is still the current session (a view is never written
// to a session the user switched to after it) and publishes the change
// when the set changed. It reports why it skipped ("" when it wrote or the
// set was unchanged).
func (s *Service) CaptureView(ctx context.Context, id string, items []string) (skipped string) {
	switch {
	case id == "":
		// Kept for the session the first question makes (StartTurn).
		s.mu.Lock()
		s.pendingView = slices.Clone(items)
		s.mu.Unlock()
		return "no current session yet; kept for the first question's"
	case s.Current() != id:
		return "the session is no longer current"
	}
	sets, err := s.store.Context(ctx, id)
	if err != nil {
		s.log.Info("view not captured", "session", id, "err", err)
		return "not read"
	}
	if slices.Equal(sets[prompts.SetApplet], items) {
		return "applet unchanged"
	}
	ch, err := s.store.UpdateContext(ctx, id, prompts.SetApplet, items, session.ModeReplace, session.AddedByUser, nil)
	if err != nil {
		s.log.Warn("view not captured", "session", id, "err", err)
		return "not written"
	}
	s.contextChanged(id, "changed", ch.Context, ch.Added, ch.Removed)
	return ""
}

// withPendingView makes the session a first question needs when the
// editor's view was captured before any session existed, with that view as
// its applet set; nil when there is no such view (the turn makes the
// session).
func (s *Service) withPendingView(ctx context.Context) (*session.Session, error) {
	s.mu.Lock()
	items := s.pendingView
	s.pendingView = nil
	s.mu.Unlock()
	if len(items) == 0 {
		return nil, nil
	}
	sess, err := s.sessionOf(ctx, "", true)
	if err != nil {
		return nil, err
	}
	if skipped := s.CaptureView(ctx, sess.ID, items); skipped != "" {
		s.log.Info("the view was not captured for the new session", "reason", skipped)
	}
	return s.store.Get(ctx, sess.ID)
}

// WorkspaceChanged sets the workspace folders and stores "Workspace
// folders changed: added /a; removed /b" as a system message of the
// current session (never making one), with the new envHint, so the next
// turn includes it.
func (s *Service) WorkspaceChanged(ctx context.Context, roots, added, removed []string) {
	s.SetRoots(roots)
	if len(added) == 0 && len(removed) == 0 {
		return
	}
	id := s.Current()
	if id == "" {
		return
	}
	var parts []string
	if len(added) > 0 {
		parts = append(parts, "added "+strings.Join(added, ", "))
	}
	if len(removed) > 0 {
		parts = append(parts, "removed "+strings.Join(removed, ", "))
	}
	msg := &session.Message{SessionID: id, Role: session.RoleSystem, Content: "Workspace folders changed: " + strings.Join(parts, "; ")}
	if err := s.store.AppendMessage(ctx, msg); err != nil {
		s.log.Warn("workspace folder change not stored", "session", id, "err", err)
		return
	}
	s.recordEnv(ctx, id, nil)
}

// Session returns a session as the wire shows it.
func (s *Service) Session(ctx context.Context, id string) (*api.Session, error) {
	sess, err := s.store.Get(ctx, id)
	if err != nil {
		return nil, fail(err)
	}
	return wireSession(sess), nil
}
