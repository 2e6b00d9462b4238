package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"

	"go.lsp.dev/jsonrpc2"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat"
	"github.com/ctxls/ctxls/session"
	"github.com/ctxls/ctxls/turn"
)

// chatParams are the params of ctxls/chat and the argument of ctxls.chat.
type chatParams = api.ChatArgs

// chatRequest handles the ctxls/chat request.
func (s *Server) chatRequest(ctx context.Context, raw json.RawMessage) (any, error) {
	var a chatParams
	if err := decodeArg(raw, &a); err != nil {
		return nil, invalidParams("ctxls/chat: %s", err)
	}
	return s.runChat(ctx, &a, a.WorkDoneToken)
}

// chatCommand handles ctxls.chat; its token comes from ExecuteCommandParams.
func (s *Server) chatCommand(ctx context.Context, a *api.ChatArgs) (any, error) {
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

// sessionUpdated sends ctxls/sessionUpdated with a session's title.
func (s *Server) sessionUpdated(ctx context.Context, sess *session.Session) {
	s.notify(ctx, api.SessionUpdated, api.SessionUpdatedParams{SessionID: sess.ID, Title: sess.Title, TitleSource: sess.TitleSource})
}

// compacted sends ctxls/sessionUpdated for a session just compacted, with
// compactedThrough.
func (s *Server) compacted(ctx context.Context, c chat.Compaction) {
	s.mu.Lock()
	store := s.store
	s.mu.Unlock()
	p := api.SessionUpdatedParams{SessionID: c.SessionID, CompactedThrough: c.Summary.SummaryOf.Last}
	if store != nil {
		if sess, err := store.Get(ctx, c.SessionID); err == nil {
			p.Title, p.TitleSource = sess.Title, sess.TitleSource
		}
	}
	s.notify(ctx, api.SessionUpdated, p)
}

// lateEvent takes the turn service's events that belong to no running turn
// (the model's title, suggested after the turn ended).
func (s *Server) lateEvent(ev turn.Event) {
	if tc, ok := ev.(turn.TitleChanged); ok {
		s.sessionUpdated(context.Background(), tc.Session)
	}
}

// turnState is what a turn preview starts from.
type turnState struct {
	engine *chat.Engine
	prov   chat.Provider
	roots  []string
	files  []string // the turn's files, absolute
}

// turnStart checks a preview's arguments (what names the command in
// errors) and takes the connection's state for it.
func (s *Server) turnStart(a *api.ChatArgs, what string) (*turnState, error) {
	if a.Message == "" {
		return nil, invalidParams("%s: message is required", what)
	}
	s.mu.Lock()
	t := &turnState{engine: s.engine, prov: s.provider, roots: s.roots}
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

// runChat is the LSP door of a turn: it picks the connection's current
// session, starts the turn on the service, negotiates $/progress and
// adapts the turn's events to it and to ctxls/* notifications.
func (s *Server) runChat(ctx context.Context, a *api.ChatArgs, token json.RawMessage) (any, error) {
	if a.Message == "" {
		return nil, invalidParams("%s: message is required", api.ChatRequest)
	}
	s.mu.Lock()
	svc, prov, roots, workDone, compactAt := s.turns, s.provider, s.roots, s.clientWorkDone, s.compactAt
	s.mu.Unlock()
	if svc == nil {
		return nil, jsonrpc2.NewError(jsonrpc2.ServerNotInitialized, "the session store is not open")
	}
	// The connection's current session, if it has one; the service makes
	// a session when there is none.
	_, sess, err := s.sessionOf(ctx, a.SessionID, false)
	if err != nil {
		return nil, err
	}
	id := ""
	if sess != nil {
		id = sess.ID
	}
	s.mu.Lock()
	resumed := id != "" && s.resumed[id]
	s.mu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	t, err := svc.Start(ctx, turn.Request{
		SessionID: id, Message: a.Message, Files: a.Files, Provider: prov, Roots: roots,
		Candidates: s.candidatePaths(), Resumed: resumed, Env: s.envHint(), CompactAt: compactAt, Session: sess,
	})
	var provErr *turn.ProviderError
	switch {
	case errors.As(err, &provErr):
		s.showMessage(ctx, 1, err.Error())
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, err.Error())
	case err != nil:
		return nil, err
	}
	defer t.Abandon() // a no-op once the stream was read to its end
	id = t.SessionID
	if t.Created {
		s.adoptNew(ctx, id)
	}
	if resumed {
		s.takeResumed(id)
	}
	if len(token) == 0 && workDone {
		tok, _ := json.Marshal(fmt.Sprintf("ctxls-chat-%s-%d", id[:6], s.nextToken()))
		if _, err := s.conn.Call(ctx, "window/workDoneProgress/create", map[string]any{"token": json.RawMessage(tok)}, nil); err == nil {
			token = tok
		} else {
			s.log.Warn("workDoneProgress/create failed", "err", err)
		}
	}
	// window/workDoneProgress/cancel for the token cancels the turn.
	if len(token) > 0 {
		defer s.register(s.tokens, string(token), cancel)()
	}
	p := &progress{s: s, ctx: ctx, token: token}
	p.send(map[string]any{"kind": "begin", "title": "ctxls", "cancellable": true})
	defer s.enforceStorage(ctx, nil) // the turn wrote: messages, maybe files
	var final turn.Event
	for ev := range t.Events() {
		switch ev := ev.(type) {
		case turn.TextDelta:
			p.send(map[string]any{"kind": "report", "delta": ev.Text})
		case turn.Activity:
			p.send(map[string]any{"kind": "report", "message": ev.Message})
		case turn.TitleChanged:
			s.sessionUpdated(ctx, ev.Session)
		case turn.Compacted:
			c := ev.Compaction
			p.send(map[string]any{"kind": "report", "message": fmt.Sprintf("earlier turns summarised (messages %d–%d)", c.Summary.SummaryOf.First, c.Summary.SummaryOf.Last)})
			s.compacted(ctx, c)
		case turn.ContextChanged:
			s.notifyContext(ctx, id, "changed", ev.Change.Context, ev.Change.Added, ev.Change.Removed, s.missingFiles(ev.Change.Context))
		case turn.FilesChanged:
			s.notifyFilesChanged(ctx, api.SessionFilesChangedParams{SessionID: ev.SessionID, Subdir: ev.Subdir, Name: ev.Name, Size: ev.Size, By: ev.By})
			s.enforceStorage(ctx, nil) // the model wrote into the session folder
		case turn.Done, turn.Cancelled, turn.Failed:
			final = ev
		}
	}
	var res *chat.Result
	switch f := final.(type) {
	case turn.Done:
		p.end("done")
		res = f.Result
	case turn.Cancelled:
		p.end("cancelled")
		return nil, jsonrpc2.NewError(RequestCancelled, "chat turn cancelled; the partial answer is kept")
	case turn.Failed:
		p.end("error: " + f.Err.Error())
		if errors.Is(f.Err, chat.ErrSessionDeleted) {
			s.forgetCurrent(id)
		}
		if f.Result == nil {
			return nil, f.Err
		}
		s.showMessage(ctx, 1, f.Err.Error())
		res = f.Result
	}
	return api.ChatResult{
		V: api.V, SessionID: res.SessionID, MessageID: res.MessageID, Text: res.Text,
		FinishReason: res.FinishReason,
		Usage:        api.ChatUsage{PromptTokens: res.Usage.PromptTokens, CompletionTokens: res.Usage.CompletionTokens},
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
func (s *Server) chatPreview(ctx context.Context, a *api.ChatArgs) (any, error) {
	ts, err := s.turnStart(a, api.ChatPreview)
	if err != nil {
		return nil, err
	}
	engine, prov, roots, files := ts.engine, ts.prov, ts.roots, ts.files
	_, sess, err := s.sessionOf(ctx, a.SessionID, false)
	if err != nil {
		return nil, err
	}
	id := ""
	if sess != nil {
		id = sess.ID
	}
	s.mu.Lock()
	resumed := id != "" && s.resumed[id]
	s.mu.Unlock()
	pv, err := engine.Preview(ctx, chat.Turn{
		SessionID: id, Message: a.Message, Files: files, Resumed: resumed,
		Candidates: s.candidatePaths(), Roots: roots, Provider: chat.PreviewProvider(prov, os.Getenv),
		Env:     s.envHint(), // what the turn records
		Session: sess,
	})
	if err != nil {
		return nil, err
	}
	res := api.ChatPreviewResult{
		V: api.V, SessionID: id, Model: pv.Model, Messages: []api.PreviewMessage{}, Tools: []api.PreviewTool{},
		Tokens: api.PreviewTokens{System: pv.System, History: pv.History, Files: pv.Files, Total: pv.Total},
		Budget: pv.Budget, Dropped: pv.Dropped,
	}
	for _, m := range pv.Messages {
		pm := api.PreviewMessage{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID}
		for _, c := range m.ToolCalls {
			pm.ToolCalls = append(pm.ToolCalls, api.PreviewToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
		}
		res.Messages = append(res.Messages, pm)
	}
	for _, t := range pv.Tools {
		params, _ := json.Marshal(t.Function.Parameters)
		res.Tools = append(res.Tools, api.PreviewTool{Name: t.Function.Name, Description: t.Function.Description, Parameters: params})
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

// didChangeConfiguration takes settings.ctxls.provider,
// settings.ctxls.storageSoftLimitMB, settings.ctxls.viewIdleMs and
// settings.ctxls.compactAt.
func (s *Server) didChangeConfiguration(raw json.RawMessage) error {
	var p struct {
		Settings struct {
			Ctxls struct {
				Provider           json.RawMessage `json:"provider"`
				StorageSoftLimitMB json.RawMessage `json:"storageSoftLimitMB"`
				ViewIdleMs         json.RawMessage `json:"viewIdleMs"`
				CompactAt          json.RawMessage `json:"compactAt"`
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
	if at, err := chat.ParseCompactAt(p.Settings.Ctxls.CompactAt); err != nil {
		s.showMessage(context.Background(), 2, "settings ignored: "+err.Error())
	} else if raw := p.Settings.Ctxls.CompactAt; len(raw) > 0 && string(raw) != "null" {
		// "" puts the default back (an editor's empty setting); absent or
		// null keeps the current value.
		s.mu.Lock()
		s.compactAt = at
		s.mu.Unlock()
	}
	if len(p.Settings.Ctxls.Provider) == 0 {
		return nil
	}
	prov, err := api.ParseProvider(p.Settings.Ctxls.Provider)
	if err != nil {
		s.showMessage(context.Background(), 2, "settings ignored: "+err.Error())
		return err
	}
	s.mu.Lock()
	s.provider = prov.Merge(s.cfg.Provider)
	s.mu.Unlock()
	return nil
}

// sessionCompact handles ctxls.session.compact: the session's earlier
// turns summarised now.
func (s *Server) sessionCompact(ctx context.Context, a *api.SessionIDArgs) (any, error) {
	store, id, err := s.existingSession(ctx, a.SessionID, api.SessionCompact)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	engine, prov := s.engine, s.provider
	s.mu.Unlock()
	if prov.Model == "" { // the session's own model needs none from the provider
		if sess, err := store.Get(ctx, id); err == nil {
			prov.Model = sess.Meta.Model
		}
	}
	resolved, err := chat.Resolve(prov, os.Getenv, chat.ProbeOllama)
	if err != nil {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, err.Error())
	}
	c, err := engine.Compact(ctx, id, resolved)
	if err != nil {
		return nil, err
	}
	s.compacted(ctx, *c)
	return api.SessionCompactResult{V: api.V, SessionID: id, Summary: *c.Summary,
		CompactedThrough: c.Summary.SummaryOf.Last, Covered: c.Covered, Tokens: c.Tokens}, nil
}

func (s *Server) regenerateTitle(ctx context.Context, a *api.SessionIDArgs) (any, error) {
	_, id, err := s.existingSession(ctx, a.SessionID, api.RegenerateTitle)
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
	s.sessionUpdated(ctx, sess)
	return api.SessionResult{V: api.V, Session: sess}, nil
}
