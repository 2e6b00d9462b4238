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

// askPermission asks the editor whether the model may call a tool (or
// trust a workspace's .mcp.json): in the chat with ctxls/question when the
// client set initializationOptions.questions (askInChat), else with
// window/showMessageRequest, which every LSP client shows as it is. No
// answer within the timeout
// (toolPermissionTimeoutSeconds), no action chosen or a failed request
// counts as denied (a trust question unanswered is asked again next time).
func (s *Server) askPermission(ctx context.Context, r service.PermissionRequest) (service.Decision, error) {
	ctx, cancel, timeout := s.questionContext(ctx)
	defer cancel()
	s.mu.Lock()
	inChat := s.asksInChat
	s.mu.Unlock()
	if inChat {
		return s.askInChat(ctx, timeout, r)
	}
	if r.Trust != nil {
		title, err := s.showMessageRequest(ctx, timeout, 2, service.TrustQuestion(*r.Trust), trust, distrust)
		if err == nil && title == "" {
			err = fmt.Errorf("no answer")
		}
		return decisions[title], err
	}
	s.shownCalls.Wait(ctx, r.SessionID, r.Call.ID)
	// The message is the only field window/showMessageRequest has: it holds
	// the call's arguments whole.
	q, _ := service.PermissionQuestion(r, 0)
	title, err := s.showMessageRequest(ctx, timeout, 3, q, allowOnce, allowAlways, deny)
	return decisions[title], err
}

// askInChat asks with ctxls/question (clients that set
// initializationOptions.questions): the chat shows it and the user answers
// with ctxls.question.answer. No answer within the timeout denies (a trust
// question unanswered is asked again next time).
func (s *Server) askInChat(ctx context.Context, timeout time.Duration, r service.PermissionRequest) (service.Decision, error) {
	q := api.QuestionParams{SessionID: r.SessionID}
	if r.Trust != nil {
		q.Kind, q.Message = api.QuestionTrust, service.TrustQuestion(*r.Trust)
		q.Actions = []api.QuestionAction{
			{ID: api.ActionTrust, Title: trust, Deliberate: true},
			{ID: api.ActionDistrust, Title: distrust},
		}
	} else {
		s.shownCalls.Wait(ctx, r.SessionID, r.Call.ID)
		q.Kind, q.ToolCallID = api.QuestionPermission, r.Call.ID
		q.Message, _ = service.PermissionQuestion(r, 0)
		q.Actions = []api.QuestionAction{
			{ID: api.ActionAllow, Title: allowOnce},
			{ID: api.ActionDeny, Title: deny},
			{ID: api.ActionAlways, Title: allowAlways, Deliberate: true},
		}
	}
	action, err := s.ask(ctx, q)
	return actionDecisions[action], notAnswered(ctx, timeout, err)
}

// actionDecisions are what the ctxls/question actions decide (any other:
// RejectOnce).
var actionDecisions = map[string]service.Decision{
	api.ActionAllow: service.AllowOnce, api.ActionAlways: service.AllowAlways,
	api.ActionTrust: service.AllowAlways, api.ActionDistrust: service.RejectAlways,
	api.ActionAccept: service.AllowOnce, api.ActionAcceptAll: service.AllowAlways,
}

// decisions are what the questions' answers decide (any other: RejectOnce).
var decisions = map[string]service.Decision{
	allowOnce: service.AllowOnce, allowAlways: service.AllowAlways,
	trust: service.AllowAlways, distrust: service.RejectAlways,
	accept: service.AllowOnce, acceptAll: service.AllowAlways,
}

// questionContext bounds a question to the user by
// toolPermissionTimeoutSeconds, which it returns.
func (s *Server) questionContext(ctx context.Context) (context.Context, context.CancelFunc, time.Duration) {
	s.mu.Lock()
	timeout := s.permissionTimeout
	s.mu.Unlock()
	if timeout <= 0 {
		timeout = api.DefaultToolPermissionTimeout * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	return ctx, cancel, timeout
}

// notAnswered is err, a question's failure, as service.ErrNotAnswered (the
// model is told the user did not answer) when the question's time ran out.
func notAnswered(ctx context.Context, timeout time.Duration, err error) error {
	if err != nil && ctx.Err() == context.DeadlineExceeded {
		return fmt.Errorf("no answer within %s: %w", timeout, service.ErrNotAnswered)
	}
	return err
}

// showMessageRequest asks with window/showMessageRequest (type 2 warning,
// 3 info) and returns the chosen action's title, "" when none was chosen.
func (s *Server) showMessageRequest(ctx context.Context, timeout time.Duration, kind int, message string, actions ...string) (string, error) {
	items := make([]map[string]string, len(actions))
	for i, a := range actions {
		items[i] = map[string]string{"title": a}
	}
	var answer *struct {
		Title string `json:"title"`
	}
	if _, err := s.conn.Call(ctx, "window/showMessageRequest", map[string]any{"type": kind, "message": message, "actions": items}, &answer); err != nil {
		return "", notAnswered(ctx, timeout, err)
	}
	if answer == nil {
		return "", nil
	}
	return answer.Title, nil
}

// setToolOptions takes allowReadOnlyTools and toolPermissionTimeoutSeconds
// (nil: unchanged; a timeout below 1 s is the default).
func (s *Server) setToolOptions(svc *service.Service, allowReadOnly *bool, timeoutSeconds *int) {
	if allowReadOnly != nil {
		svc.Tools().SetAllowReadOnly(*allowReadOnly)
	}
	if timeoutSeconds != nil {
		s.mu.Lock()
		s.permissionTimeout = time.Duration(max(*timeoutSeconds, 0)) * time.Second
		s.mu.Unlock()
	}
}
