package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"

	"go.lsp.dev/jsonrpc2"

	"github.com/ctxls/ctxls/chat"
	"github.com/ctxls/ctxls/lsp/command"
	"github.com/ctxls/ctxls/session"
)

// chatParams are the params of ctxls/chat and the argument of ctxls.chat.
type chatParams = command.ChatArgs

// chatRequest handles the ctxls/chat request.
func (s *Server) chatRequest(ctx context.Context, raw json.RawMessage) (any, error) {
	var a chatParams
	if err := decodeArg(raw, &a); err != nil {
		return nil, invalidParams("ctxls/chat: %s", err)
	}
	return s.runChat(ctx, &a, a.WorkDoneToken)
}

// chatCommand handles ctxls.chat; its token comes from ExecuteCommandParams.
func (s *Server) chatCommand(ctx context.Context, a *command.ChatArgs) (any, error) {
	token := a.WorkDoneToken
	if len(token) == 0 {
		token = commandToken(ctx)
	}
	return s.runChat(ctx, a, token)
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
	s         *Server
	ctx       context.Context
	token     json.RawMessage
	sessionID string
	mu        sync.Mutex
	ended     bool
}

func (p *progress) send(value any) {
	if len(p.token) == 0 {
		return
	}
	p.s.notify(p.ctx, "$/progress", map[string]any{"token": p.token, "value": value})
}

func (p *progress) Delta(text string) {
	p.send(map[string]any{"kind": "report", "delta": text})
}

func (p *progress) Activity(message string) {
	p.send(map[string]any{"kind": "report", "message": message})
}

func (p *progress) TitleChanged(sess *session.Session) {
	p.s.notify(p.ctx, command.SessionUpdated, command.SessionUpdatedParams{SessionID: sess.ID, Title: sess.Title, TitleSource: sess.TitleSource})
}

func (p *progress) ContextChanged(ch *session.ContextChange) {
	p.s.notifyContext(p.ctx, p.sessionID, "changed", ch.Context, ch.Added, ch.Removed, p.s.missingFiles(ch.Context))
}

func (p *progress) FilesChanged(sessionID, subdir, name string, size int64, by string) {
	p.s.notifyFilesChanged(p.ctx, command.SessionFilesChangedParams{SessionID: sessionID, Subdir: subdir, Name: name, Size: size, By: by})
	p.s.enforceStorage(p.ctx, nil) // the model wrote into the session folder
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

// turnState is what a turn (or its preview) starts from.
type turnState struct {
	engine   *chat.Engine
	prov     chat.Provider
	roots    []string
	workDone bool
	files    []string // the turn's files, absolute
}

// turnStart checks a turn's arguments (what names the request or command
// in errors) and takes the connection's state for it.
func (s *Server) turnStart(a *command.ChatArgs, what string) (*turnState, error) {
	if a.Message == "" {
		return nil, invalidParams("%s: message is required", what)
	}
	s.mu.Lock()
	t := &turnState{engine: s.engine, prov: s.provider, roots: s.roots, workDone: s.clientWorkDone}
	s.mu.Unlock()
	if t.engine == nil {
		return nil, jsonrpc2.NewError(jsonrpc2.ServerNotInitialized, "the session store is not open")
	}
	var err error
	if t.files, err = turnFiles(a.Files, t.roots); err != nil {
		return nil, err
	}
	return t, nil
}

func (s *Server) runChat(ctx context.Context, a *command.ChatArgs, token json.RawMessage) (any, error) {
	ts, err := s.turnStart(a, command.ChatRequest)
	if err != nil {
		return nil, err
	}
	engine, prov, roots, workDone, files := ts.engine, ts.prov, ts.roots, ts.workDone, ts.files
	if prov.Model == "" {
		// A session with a model of its own needs none from the provider.
		if store, id, err := s.sessionFor(ctx, a.SessionID, false); err == nil && id != "" {
			if sess, err := store.Get(ctx, id); err == nil {
				prov.Model = sess.Meta.Model
			}
		}
	}
	resolved, err := chat.Resolve(prov, os.Getenv, chat.ProbeOllama)
	if err != nil {
		s.showMessage(ctx, 1, err.Error())
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, err.Error())
	}
	store, id, err := s.sessionFor(ctx, a.SessionID, true)
	if err != nil {
		return nil, err
	}
	s.recordEnv(ctx, store, id)
	if len(token) == 0 && workDone {
		t, _ := json.Marshal(fmt.Sprintf("ctxls-chat-%s-%d", id[:6], s.nextToken()))
		if _, err := s.conn.Call(ctx, "window/workDoneProgress/create", map[string]any{"token": json.RawMessage(t)}, nil); err == nil {
			token = t
		} else {
			s.log.Warn("workDoneProgress/create failed", "err", err)
		}
	}
	// window/workDoneProgress/cancel for the token cancels the turn.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if len(token) > 0 {
		defer s.register(s.tokens, string(token), cancel)()
	}
	p := &progress{s: s, ctx: ctx, token: token, sessionID: id}
	p.send(map[string]any{"kind": "begin", "title": "ctxls", "cancellable": true})
	resumed := s.takeResumed(id)
	defer s.enforceStorage(ctx, nil) // the turn wrote: messages, maybe files
	res, err := engine.Run(ctx, chat.Turn{
		SessionID: id, Message: a.Message, Files: files, Resumed: resumed,
		Candidates: s.candidatePaths(), Roots: roots, Provider: resolved,
	}, p)
	switch {
	case err == nil:
		p.end("done")
	case errors.Is(err, context.Canceled):
		p.end("cancelled")
		return nil, jsonrpc2.NewError(RequestCancelled, "chat turn cancelled; the partial answer is kept")
	default:
		p.end("error: " + err.Error())
		if errors.Is(err, chat.ErrSessionDeleted) {
			s.forgetCurrent(id)
		}
		if res == nil {
			return nil, err
		}
		s.showMessage(ctx, 1, err.Error())
	}
	return command.ChatResult{
		V: command.V, SessionID: res.SessionID, MessageID: res.MessageID, Text: res.Text,
		FinishReason: res.FinishReason,
		Usage:        command.ChatUsage{PromptTokens: res.Usage.PromptTokens, CompletionTokens: res.Usage.CompletionTokens},
	}, nil
}

// turnFiles normalises a turn's files to absolute paths.
func turnFiles(items, roots []string) ([]string, error) {
	var files []string
	for _, f := range items {
		p, err := session.NormalizeFileItem(f, roots)
		if err != nil {
			return nil, err
		}
		files = append(files, p)
	}
	return files, nil
}

// candidatePaths are the open and recently edited files, most recent first.
func (s *Server) candidatePaths() []string {
	var out []string
	for _, c := range s.docs.Candidates() {
		if c.Path != "" {
			out = append(out, c.Path)
		}
	}
	return out
}

// chatPreview handles ctxls.chat.preview: the model input of a turn, built
// as runChat's turn would build it, with nothing stored and no provider.
func (s *Server) chatPreview(ctx context.Context, a *command.ChatArgs) (any, error) {
	ts, err := s.turnStart(a, command.ChatPreview)
	if err != nil {
		return nil, err
	}
	engine, prov, roots, files := ts.engine, ts.prov, ts.roots, ts.files
	_, id, err := s.sessionFor(ctx, a.SessionID, false)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	resumed := id != "" && s.resumed[id]
	s.mu.Unlock()
	pv, err := engine.Preview(ctx, chat.Turn{
		SessionID: id, Message: a.Message, Files: files, Resumed: resumed,
		Candidates: s.candidatePaths(), Roots: roots, Provider: chat.PreviewProvider(prov, os.Getenv),
		Env: s.envHint(), // what the turn records
	})
	if err != nil {
		return nil, err
	}
	res := command.ChatPreviewResult{
		V: command.V, SessionID: id, Model: pv.Model, Messages: []command.PreviewMessage{}, Tools: []command.PreviewTool{},
		Tokens: command.PreviewTokens{System: pv.System, History: pv.History, Files: pv.Files, Total: pv.Total},
		Budget: pv.Budget, Dropped: pv.Dropped,
	}
	for _, m := range pv.Messages {
		pm := command.PreviewMessage{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID}
		for _, c := range m.ToolCalls {
			pm.ToolCalls = append(pm.ToolCalls, command.PreviewToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
		}
		res.Messages = append(res.Messages, pm)
	}
	for _, t := range pv.Tools {
		params, _ := json.Marshal(t.Function.Parameters)
		res.Tools = append(res.Tools, command.PreviewTool{Name: t.Function.Name, Description: t.Function.Description, Parameters: params})
	}
	return res, nil
}

// showMessage sends window/showMessage (type 1 error, 2 warning, 3 info).
func (s *Server) showMessage(ctx context.Context, kind int, msg string) {
	s.notify(ctx, "window/showMessage", map[string]any{"type": kind, "message": "ctxls: " + msg})
}

func (s *Server) nextToken() int64 {
	s.inflightMu.Lock()
	defer s.inflightMu.Unlock()
	s.tokenSeq++
	return s.tokenSeq
}

// takeResumed reports (once) whether the session was resumed since its last
// turn.
func (s *Server) takeResumed(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.resumed[id] {
		delete(s.resumed, id)
		return true
	}
	return false
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

// didChangeConfiguration takes settings.ctxls.provider and
// settings.ctxls.storageSoftLimitMB and settings.ctxls.viewIdleMs.
func (s *Server) didChangeConfiguration(raw json.RawMessage) error {
	var p struct {
		Settings struct {
			Ctxls struct {
				Provider           json.RawMessage `json:"provider"`
				StorageSoftLimitMB json.RawMessage `json:"storageSoftLimitMB"`
				ViewIdleMs         json.RawMessage `json:"viewIdleMs"`
			} `json:"ctxls"`
		} `json:"settings"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return err
	}
	s.setStorageLimit(p.Settings.Ctxls.StorageSoftLimitMB)
	if idle, err := parseViewIdle(p.Settings.Ctxls.ViewIdleMs); err != nil {
		s.showMessage(context.Background(), 2, "settings ignored: "+err.Error())
	} else if idle > 0 {
		s.view.setIdle(idle)
	}
	if len(p.Settings.Ctxls.Provider) == 0 {
		return nil
	}
	prov, err := chat.ParseProvider(p.Settings.Ctxls.Provider)
	if err != nil {
		s.showMessage(context.Background(), 2, "settings ignored: "+err.Error())
		return err
	}
	s.mu.Lock()
	s.provider = prov.Merge(s.cfg.Provider)
	s.mu.Unlock()
	return nil
}

func (s *Server) regenerateTitle(ctx context.Context, a *command.SessionIDArgs) (any, error) {
	_, id, err := s.existingSession(ctx, a.SessionID, command.RegenerateTitle)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	engine, prov := s.engine, s.provider
	s.mu.Unlock()
	resolved, err := chat.Resolve(prov, os.Getenv, chat.ProbeOllama)
	if err != nil {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, err.Error())
	}
	sess, err := engine.RegenerateTitle(ctx, id, resolved)
	if err != nil {
		return nil, err
	}
	s.notify(ctx, command.SessionUpdated, command.SessionUpdatedParams{SessionID: sess.ID, Title: sess.Title, TitleSource: sess.TitleSource})
	return command.SessionResult{V: command.V, Session: sess}, nil
}
