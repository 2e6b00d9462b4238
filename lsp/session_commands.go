package lsp

import (
	"context"
	"errors"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat"
	"github.com/ctxls/ctxls/prompts"
	"github.com/ctxls/ctxls/session"
)

// sessionFor resolves the session a command works on: the id given, else the
// connection's current session. With create set, a connection without a
// current session gets a new one ("created on first need"); without it, ""
// is returned and the caller answers with an empty result.
func (s *Server) sessionFor(ctx context.Context, id string, create bool) (session.Store, string, error) {
	store, sess, err := s.sessionOf(ctx, id, create)
	if sess == nil {
		return store, "", err
	}
	return store, sess.ID, err
}

// sessionOf is sessionFor returning the session as it read it (nil when
// there is none), for a caller that needs more of it than its id.
func (s *Server) sessionOf(ctx context.Context, id string, create bool) (session.Store, *session.Session, error) {
	store, err := s.storeOrErr()
	if err != nil {
		return nil, nil, err
	}
	if id != "" {
		sess, err := store.Get(ctx, id)
		if err != nil {
			return nil, nil, err
		}
		return store, sess, nil
	}
	s.currentMu.Lock()
	defer s.currentMu.Unlock()
	s.mu.Lock()
	id = s.current
	s.mu.Unlock()
	if id != "" {
		sess, err := store.Get(ctx, id)
		if err == nil {
			return store, sess, nil
		}
		if !errors.Is(err, session.ErrNotFound) {
			return nil, nil, err
		}
		// Deleted by another process: forget it.
		s.log.Info("current session no longer exists", "session", id)
		s.forgetCurrent(id)
	}
	if !create {
		return store, nil, nil
	}
	sess, err := store.Create(ctx, "")
	if err != nil {
		return nil, nil, err
	}
	s.adoptNew(ctx, sess.ID)
	return store, sess, nil
}

// adoptNew makes a session created on first need (here or by the turn
// service) the current one, and says so when the last one was deleted.
func (s *Server) adoptNew(ctx context.Context, id string) {
	s.log.Info("session created on first need", "session", id)
	s.mu.Lock()
	s.current = id
	announce := s.lostCurrent
	s.lostCurrent = false
	s.mu.Unlock()
	if announce {
		s.showMessage(ctx, 3, "the current session was deleted; this starts a new session")
	}
}

// forgetCurrent clears the current session if it is id, because id was
// deleted: the next session created on first need says it is a new one.
func (s *Server) forgetCurrent(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.current == id {
		s.current = ""
		s.lostCurrent = true
	}
}

// existingSession is sessionFor for commands that need a session and never
// create one: no id and no current session is an error naming the command.
func (s *Server) existingSession(ctx context.Context, id, cmd string) (session.Store, string, error) {
	store, id, err := s.sessionFor(ctx, id, false)
	if err == nil && id == "" {
		err = invalidParams("%s: no sessionId given and no current session", cmd)
	}
	return store, id, err
}

func (s *Server) setCurrent(id string) {
	s.mu.Lock()
	s.current = id
	s.mu.Unlock()
}

func (s *Server) sessionNew(ctx context.Context, a *api.SessionNewArgs) (any, error) {
	store, err := s.storeOrErr()
	if err != nil {
		return nil, err
	}
	sess, err := store.Create(ctx, a.Title)
	if err != nil {
		return nil, err
	}
	s.setCurrent(sess.ID)
	return api.SessionResult{V: api.V, Session: sess}, nil
}

// resumeState gathers what resume returns.
func (s *Server) resumeState(ctx context.Context, store session.Store, id string) (*api.ResumeResult, error) {
	sess, err := store.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	sets, err := store.Context(ctx, id)
	if err != nil {
		return nil, err
	}
	missing := s.missingFiles(sets)
	return &api.ResumeResult{
		V:            api.V,
		Session:      sess,
		Context:      nonNilContext(sets),
		MissingFiles: missing,
		Reminder:     prompts.Reminder(sets, missing, sess.Meta.EnvHint),
	}, nil
}

// missingFiles lists the files items that are neither an open editor
// buffer nor a regular file on disk: the same function the turn's prompt
// uses, so resume and the next turn agree.
func (s *Server) missingFiles(sets session.Context) []string {
	return chat.MissingFiles(sets[prompts.SetFiles], s.docs)
}

func (s *Server) sessionResume(ctx context.Context, a *api.SessionRefArgs) (any, error) {
	if a.SessionID == "" {
		return nil, invalidParams("%s: sessionId is required", api.SessionResume)
	}
	store, err := s.storeOrErr()
	if err != nil {
		return nil, err
	}
	// Recorded first, so the reminder shows the environment the next
	// turn's prompt will show.
	s.recordEnv(ctx, store, a.SessionID)
	r, err := s.resumeState(ctx, store, a.SessionID)
	if err != nil {
		return nil, err
	}
	s.setCurrent(a.SessionID)
	s.mu.Lock()
	s.resumed[a.SessionID] = true
	s.mu.Unlock()
	s.notifyContext(ctx, a.SessionID, "resume", r.Context, nil, nil, r.MissingFiles)
	s.enforceStorage(ctx, store)
	return r, nil
}

func (s *Server) sessionList(ctx context.Context, a *api.SessionListArgs) (any, error) {
	store, err := s.storeOrErr()
	if err != nil {
		return nil, err
	}
	if a.Limit < 0 {
		return nil, invalidParams("%s: limit must not be negative", api.SessionList)
	}
	list, next, err := store.List(ctx, session.ListOptions{Query: a.Query, Limit: a.Limit, Cursor: a.Cursor})
	if err != nil {
		return nil, err
	}
	res := api.SessionListResult{V: api.V, Sessions: make([]api.SessionSummary, len(list)), NextCursor: next}
	for i, ss := range list {
		res.Sessions[i] = api.SessionSummary{
			ID: ss.ID, Title: ss.Title, TitleSource: ss.TitleSource,
			CreatedAt: ss.CreatedAt, UpdatedAt: ss.UpdatedAt,
			MessageCount: ss.MessageCount, FileCount: ss.FileCount,
			Owner: ss.Owner, Visibility: ss.Visibility,
		}
	}
	return res, nil
}

func (s *Server) sessionShow(ctx context.Context, a *api.SessionIDArgs) (any, error) {
	store, id, err := s.existingSession(ctx, a.SessionID, api.SessionShow)
	if err != nil {
		return nil, err
	}
	sess, err := store.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	msgs, err := store.Messages(ctx, id)
	if err != nil {
		return nil, err
	}
	if msgs == nil {
		msgs = []session.Message{}
	}
	return api.ShowResult{V: api.V, Session: sess, Messages: msgs}, nil
}

func (s *Server) sessionRename(ctx context.Context, a *api.SessionRenameArgs) (any, error) {
	store, id, err := s.existingSession(ctx, a.SessionID, api.SessionRename)
	if err != nil {
		return nil, err
	}
	sess, err := store.Rename(ctx, id, a.Title, session.TitleUser)
	if err != nil {
		return nil, err
	}
	s.notify(ctx, api.SessionUpdated, api.SessionUpdatedParams{SessionID: sess.ID, Title: sess.Title, TitleSource: sess.TitleSource})
	return api.SessionResult{V: api.V, Session: sess}, nil
}

func (s *Server) sessionShare(ctx context.Context, a *api.SessionShareArgs) (any, error) {
	if a.Visibility != session.VisibilityPrivate && a.Visibility != session.VisibilityTeam {
		return nil, invalidParams("%s: visibility %q: want \"private\" or \"team\"", api.SessionShare, a.Visibility)
	}
	store, id, err := s.existingSession(ctx, a.SessionID, api.SessionShare)
	if err != nil {
		return nil, err
	}
	sess, err := store.Share(ctx, id, a.Visibility)
	if err != nil {
		return nil, err
	}
	return api.SessionResult{V: api.V, Session: sess}, nil
}

func (s *Server) sessionDelete(ctx context.Context, a *api.SessionRefArgs) (any, error) {
	if a.SessionID == "" {
		return nil, invalidParams("%s: sessionId is required", api.SessionDelete)
	}
	store, err := s.storeOrErr()
	if err != nil {
		return nil, err
	}
	if err := store.Delete(ctx, a.SessionID); err != nil {
		return nil, err
	}
	s.mu.Lock()
	engine := s.engine
	s.mu.Unlock()
	if engine != nil {
		engine.Abort(a.SessionID) // a turn streaming in it ends now
	}
	s.forgetCurrent(a.SessionID)
	return api.DeleteResult{V: api.V, SessionID: a.SessionID, Deleted: true}, nil
}

func (s *Server) sessionSearch(ctx context.Context, a *api.SessionSearchArgs) (any, error) {
	if a.Query == "" {
		return nil, invalidParams("%s: query is required", api.SessionSearch)
	}
	if a.Limit < 0 {
		return nil, invalidParams("%s: limit must not be negative", api.SessionSearch)
	}
	store, err := s.storeOrErr()
	if err != nil {
		return nil, err
	}
	hits, err := store.Search(ctx, a.Query, a.Limit)
	if err != nil {
		return nil, err
	}
	if hits == nil {
		hits = []session.Hit{}
	}
	return api.SearchResult{V: api.V, Hits: hits}, nil
}

func (s *Server) sessionExport(ctx context.Context, a *api.SessionExportArgs) (any, error) {
	store, id, err := s.existingSession(ctx, a.SessionID, api.SessionExport)
	if err != nil {
		return nil, err
	}
	format := a.Format
	if format == "" {
		format = "markdown"
	}
	path, content, err := store.Export(ctx, id, format)
	if err != nil {
		return nil, err
	}
	return api.ExportResult{V: api.V, Path: path, Content: content}, nil
}

func nonNilContext(c session.Context) session.Context {
	if c == nil {
		return session.Context{}
	}
	return c
}
