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
		s.shownCalls.Wait(ctx, r.SessionID, r.Call.ID)
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
