package lsp

import (
	"context"
	"fmt"
	"time"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/service"
)

// The answers of the permission question (window/showMessageRequest).
const (
	allowOnce   = "Allow once"
	allowAlways = "Always in this session"
	deny        = "Deny"
	trust       = "Trust"
	distrust    = "Don't trust"
)

// askPermission asks the editor whether the model may call a tool, with
// window/showMessageRequest: every LSP client shows it as it is. No answer
// within the timeout (toolPermissionTimeoutSeconds), no action chosen or a
// failed request counts as denied.
func (s *Server) askPermission(ctx context.Context, r service.PermissionRequest) (service.Decision, error) {
	s.mu.Lock()
	timeout := s.permissionTimeout
	s.mu.Unlock()
	if timeout <= 0 {
		timeout = api.DefaultToolPermissionTimeout * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var answer *struct {
		Title string `json:"title"`
	}
	params := map[string]any{"type": 3, "message": service.PermissionQuestion(r),
		"actions": []map[string]string{{"title": allowOnce}, {"title": allowAlways}, {"title": deny}}}
	if r.Trust == nil {
		s.waitShown(ctx, r.SessionID, r.Call.ID)
	}
	if r.Trust != nil {
		params = map[string]any{"type": 2, "message": service.TrustQuestion(*r.Trust),
			"actions": []map[string]string{{"title": trust}, {"title": distrust}}}
	}
	if _, err := s.conn.Call(ctx, "window/showMessageRequest", params, &answer); err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return service.RejectOnce, fmt.Errorf("no answer within %s", timeout)
		}
		return service.RejectOnce, err
	}
	if answer == nil {
		if r.Trust != nil {
			return service.RejectOnce, fmt.Errorf("no answer") // asked again next time
		}
		return service.RejectOnce, nil
	}
	switch answer.Title {
	case trust:
		return service.AllowAlways, nil
	case distrust:
		return service.RejectAlways, nil
	case allowOnce:
		return service.AllowOnce, nil
	case allowAlways:
		return service.AllowAlways, nil
	}
	return service.RejectOnce, nil
}

// A question about a tool call (its permission, an edit's review) is asked
// on the turn's goroutine, while the turn's loop sends the call's
// notifications in order: the question waits until the loop has shown the
// call (shown), so the client sees every earlier call's end, then this one
// pending, then the question.

// shownChan is the channel closed once the call was shown.
func (s *Server) shownChan(sessionID, callID string) chan struct{} {
	s.toolMu.Lock()
	defer s.toolMu.Unlock()
	key := sessionID + "\x00" + callID
	if s.toolShown == nil {
		s.toolShown = map[string]chan struct{}{}
	}
	ch := s.toolShown[key]
	if ch == nil {
		ch = make(chan struct{})
		s.toolShown[key] = ch
	}
	return ch
}

// shown records that the turn's loop sent the call's first notification.
func (s *Server) shown(sessionID, callID string) {
	ch := s.shownChan(sessionID, callID)
	select {
	case <-ch:
	default:
		close(ch)
	}
}

// waitShown waits until the call was shown (or ctx ends).
func (s *Server) waitShown(ctx context.Context, sessionID, callID string) {
	select {
	case <-s.shownChan(sessionID, callID):
	case <-ctx.Done():
	}
}

// ended forgets a call.
func (s *Server) ended(sessionID, callID string) {
	s.toolMu.Lock()
	delete(s.toolShown, sessionID+"\x00"+callID)
	s.toolMu.Unlock()
}

// setToolOptions takes allowReadOnlyTools and toolPermissionTimeoutSeconds
// (nil: unchanged; a timeout below 1 s is the default).
func (s *Server) setToolOptions(svc *service.Service, allowReadOnly *bool, timeoutSeconds *int) {
	if allowReadOnly != nil {
		svc.SetAllowReadOnly(*allowReadOnly)
	}
	if timeoutSeconds != nil {
		s.mu.Lock()
		s.permissionTimeout = time.Duration(max(*timeoutSeconds, 0)) * time.Second
		s.mu.Unlock()
	}
}
