package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/service"
)

// chatRequest handles the ctxls/chat request.
func (s *Server) chatRequest(ctx context.Context, raw json.RawMessage) (any, error) {
	var a api.ChatArgs
	if err := decodeArg(raw, &a); err != nil {
		return nil, api.Errorf(api.KindInvalidArgument, "%s: %s", api.ChatRequest, err)
	}
	return s.runChat(ctx, &a, a.WorkDoneToken)
}

type tokenKey struct{}

// commandToken is the workDoneToken of the executeCommand being served.
func commandToken(ctx context.Context) json.RawMessage {
	t, _ := ctx.Value(tokenKey{}).(json.RawMessage)
	return t
}

// progress sends $/progress for one turn. Deltas are sent as they come;
// end is sent exactly once.
type progress struct {
	s     *Server
	ctx   context.Context
	token json.RawMessage
	mu    sync.Mutex
	ended bool
}

func (p *progress) send(value any) {
	if len(p.token) == 0 {
		return
	}
	p.s.notify(p.ctx, "$/progress", map[string]any{"token": p.token, "value": value})
}

func (p *progress) end(message string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ended {
		return
	}
	p.ended = true
	p.send(map[string]any{"kind": "end", "message": message})
}

// runChat is the LSP door of a turn: it starts the turn on the service,
// negotiates $/progress and adapts the turn's answer to it; what the turn
// changes in the session reaches the editor as the service's events.
func (s *Server) runChat(ctx context.Context, a *api.ChatArgs, token json.RawMessage) (*api.ChatResult, error) {
	svc, err := s.service()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	t, err := svc.StartTurn(ctx, a, service.TurnOptions{})
	if api.KindOf(err) == api.KindNoProvider {
		s.showMessage(ctx, 1, err.Error())
	}
	if err != nil {
		return nil, err
	}
	defer t.Abandon() // a no-op once the stream was read to its end
	token = s.progressToken(ctx, token, t.SessionID)
	// window/workDoneProgress/cancel for the token cancels the turn.
	if len(token) > 0 {
		defer s.register(s.tokens, string(token), cancel)()
	}
	p := &progress{s: s, ctx: ctx, token: token}
	p.send(map[string]any{"kind": "begin", "title": "ctxls", "cancellable": true})
	var final service.Event
	for ev := range t.Events() {
		switch ev := ev.(type) {
		case service.TextDelta:
			p.send(map[string]any{"kind": "report", "delta": ev.Text})
		case service.Activity:
			p.send(map[string]any{"kind": "report", "message": ev.Message})
		case service.TokenUsage:
			p.send(map[string]any{"kind": "report", "usage": api.ChatUsage{
				PromptTokens: ev.Usage.PromptTokens, CompletionTokens: ev.Usage.CompletionTokens, CachedTokens: ev.Usage.CachedTokens}})
		case service.ToolStarted, service.ToolAllowed, service.ToolProgress, service.ToolFinished:
			tc, _ := service.ToolCallUpdate(t.SessionID, ev)
			s.notify(ctx, api.ToolCall, tc)
			switch ev.(type) {
			case service.ToolStarted: // a question about it may now be asked
				s.shownCalls.Shown(tc.SessionID, tc.ID)
			case service.ToolFinished:
				s.shownCalls.Ended(tc.SessionID, tc.ID)
			}
			p.send(map[string]any{"kind": "report", "message": service.ToolCallLine(tc)})
		case service.PlanChanged:
			s.notify(ctx, api.Plan, service.PlanParams(ev))
		case service.Compacted:
			sp := ev.Compaction.Summary.SummaryOf
			p.send(map[string]any{"kind": "report", "message": fmt.Sprintf("earlier turns summarised (%s)", service.FirstQuestions(sp.Questions))})
		case service.Done, service.Cancelled, service.Failed:
			final = ev
		}
	}
	res, err := service.Outcome(final)
	switch {
	case err == nil && len(res.Edited) > 0:
		p.end("done; changed " + strings.Join(res.Edited, ", "))
	case err == nil:
		p.end("done")
	case api.KindOf(err) == api.KindCancelled:
		p.end("cancelled")
	default:
		p.end("error: " + err.Error())
		if res != nil { // the answer's failure was stored: the editor shows it
			s.showMessage(ctx, 1, err.Error())
			return res, nil
		}
	}
	return res, err
}

// progressToken is the turn's $/progress token: the client's, else one
// created with window/workDoneProgress/create when the client supports it
// (none when it fails).
func (s *Server) progressToken(ctx context.Context, token json.RawMessage, id string) json.RawMessage {
	s.mu.Lock()
	workDone := s.clientWorkDone
	s.mu.Unlock()
	if len(token) > 0 || !workDone {
		return token
	}
	tok, _ := json.Marshal(fmt.Sprintf("ctxls-chat-%s-%d", id[:6], s.nextToken()))
	if _, err := s.conn.Call(ctx, "window/workDoneProgress/create", map[string]any{"token": json.RawMessage(tok)}, nil); err != nil {
		s.log.Warn("workDoneProgress/create failed", "err", err)
		return nil
	}
	return tok
}

func (s *Server) nextToken() int64 {
	s.inflightMu.Lock()
	defer s.inflightMu.Unlock()
	s.tokenSeq++
	return s.tokenSeq
}

// cancelProgress handles window/workDoneProgress/cancel.
func (s *Server) cancelProgress(params json.RawMessage) {
	var p struct {
		Token json.RawMessage `json:"token"`
	}
	if err := json.Unmarshal(params, &p); err != nil || len(p.Token) == 0 {
		s.log.Warn("malformed window/workDoneProgress/cancel")
		return
	}
	s.inflightMu.Lock()
	cancel := s.tokens[string(p.Token)]
	s.inflightMu.Unlock()
	if cancel != nil {
		cancel()
	}
}
