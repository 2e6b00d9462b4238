package service

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat"
	"github.com/ctxls/ctxls/prompts"
	"github.com/ctxls/ctxls/session"
)

// SessionNew makes a session and makes it current.
func (s *Service) SessionNew(ctx context.Context, a *api.SessionNewArgs) (*api.SessionResult, error) {
	sess, err := s.store.Create(ctx, a.Title)
	if err != nil {
		return nil, fail(err)
	}
	sess = s.madeWithDefaults(ctx, sess)
	s.SetCurrent(sess.ID, false)
	s.tidyLater()
	return &api.SessionResult{V: api.V, Session: wireSession(sess)}, nil
}

// SessionResume makes a stored session current, records the connection's
// envHint in it and returns its context, missing files and the reminder
// its next turn carries; it publishes the context (reason "resume").
func (s *Service) SessionResume(ctx context.Context, a *api.SessionRefArgs) (*api.ResumeResult, error) {
	if a.SessionID == "" {
		return nil, required(api.SessionResume, "sessionId")
	}
	// Recorded first, so the reminder shows the environment the next
	// turn's prompt will show.
	s.recordEnv(ctx, a.SessionID, nil)
	r, ev, err := s.resumeState(ctx, a.SessionID)
	if err != nil {
		return nil, fail(err)
	}
	s.SetCurrent(a.SessionID, true)
	s.publish(ev)
	s.enforceStorage(ctx, 0)
	return r, nil
}

// ResumeAtStart resumes the session the client named at start-up
// (initializationOptions.session) once the connection is up: as
// SessionResume, without an answer.
func (s *Service) ResumeAtStart(ctx context.Context, id string) {
	if _, err := s.SessionResume(ctx, &api.SessionRefArgs{SessionID: id}); err != nil {
		s.log.Warn("resume at start failed", "session", id, "err", err)
	}
}

// resumeState gathers what resume returns, and the context event it
// publishes.
func (s *Service) resumeState(ctx context.Context, id string) (*api.ResumeResult, SessionContextChanged, error) {
	sess, err := s.store.Get(ctx, id)
	if err != nil {
		return nil, SessionContextChanged{}, err
	}
	sets, err := s.store.Context(ctx, id)
	if err != nil {
		return nil, SessionContextChanged{}, err
	}
	ev := s.contextEvent(id, "resume", sets, nil, nil)
	return &api.ResumeResult{
		V: api.V, Session: wireSession(sess), Context: ev.Context, MissingFiles: ev.Missing,
		Reminder: prompts.Reminder(sets, ev.Missing, sess.Meta.EnvHint),
	}, ev, nil
}

// missingFiles lists the files items that are neither an open editor
// buffer nor a regular file on disk: the same function the turn's prompt
// uses, so resume and the next turn agree.
func (s *Service) missingFiles(sets session.Context) []string {
	return nonNil(chat.MissingFiles(sets[prompts.SetFiles], s.docs))
}

// SessionList lists sessions, most recent activity first, leaving out the
// empty ones (tidy.go): a session is listed once it holds something.
func (s *Service) SessionList(ctx context.Context, a *api.SessionListArgs) (*api.SessionListResult, error) {
	return s.list(ctx, a, "")
}

// ListIn is SessionList of the sessions last used in the folder
// workspace (ACP's session/list with cwd).
func (s *Service) ListIn(ctx context.Context, a *api.SessionListArgs, workspace string) (*api.SessionListResult, error) {
	return s.list(ctx, a, workspace)
}

func (s *Service) list(ctx context.Context, a *api.SessionListArgs, workspace string) (*api.SessionListResult, error) {
	if a.Limit < 0 {
		return nil, api.Errorf(api.KindInvalidArgument, "%s: limit must not be negative", api.SessionList)
	}
	list, next, err := s.store.List(ctx, session.ListOptions{Query: a.Query, Limit: a.Limit, Cursor: a.Cursor, Workspace: workspace, NonEmpty: true})
	if err != nil {
		return nil, fail(err)
	}
	res := &api.SessionListResult{V: api.V, Sessions: make([]api.SessionSummary, len(list)), NextCursor: next}
	for i := range list {
		res.Sessions[i] = summary(&list[i])
		if i < maxQuestionRows {
			res.Sessions[i].Questions, res.Sessions[i].FirstQuestion = s.questionsOf(ctx, &list[i])
		}
	}
	return res, nil
}

// maxQuestionRows is how many rows of a list carry their questions: what a
// picker shows; a longer list (every session at once) would read them all.
const maxQuestionRows = 200

// questionStat is a session's questions as last read, with the message
// count they were read at.
type questionStat struct {
	messages, n int
	first       string
}

// questionCache holds listed sessions' questions, by session.
type questionCache struct {
	mu    sync.Mutex
	stats map[string]questionStat
}

// questionsOf is a listed session's question count and first question,
// read from its messages only when its message count changed since the
// last list (s.questions caches them); a session deleted meanwhile, or
// one that cannot be read, has none.
func (s *Service) questionsOf(ctx context.Context, sess *session.Session) (int, string) {
	if sess.MessageCount == 0 {
		return 0, ""
	}
	s.questions.mu.Lock()
	q, ok := s.questions.stats[sess.ID]
	s.questions.mu.Unlock()
	if ok && q.messages == sess.MessageCount {
		return q.n, q.first
	}
	msgs, err := s.store.Messages(ctx, sess.ID)
	if err != nil {
		return 0, ""
	}
	q = questionStat{messages: sess.MessageCount}
	q.n, q.first = questions(msgs)
	s.questions.mu.Lock()
	if s.questions.stats == nil {
		s.questions.stats = map[string]questionStat{}
	}
	s.questions.stats[sess.ID] = q
	s.questions.mu.Unlock()
	return q.n, q.first
}

// questions counts a session's questions (its user messages) and returns
// the first one's first line, cut at 120 characters.
func questions(msgs []session.Message) (n int, first string) {
	for _, m := range msgs {
		if m.Role != session.RoleUser {
			continue
		}
		if n++; n == 1 {
			first, _, _ = strings.Cut(strings.TrimSpace(m.Content), "\n")
			if r := []rune(first); len(r) > 120 {
				first = string(r[:119]) + "…"
			}
		}
	}
	return n, first
}

// SessionShow returns a session and its messages, oldest first.
func (s *Service) SessionShow(ctx context.Context, a *api.SessionIDArgs) (*api.ShowResult, error) {
	sess, err := s.existing(ctx, a.SessionID, api.SessionShow)
	if err != nil {
		return nil, fail(err)
	}
	msgs, err := s.store.Messages(ctx, sess.ID)
	if err != nil {
		return nil, fail(err)
	}
	return &api.ShowResult{V: api.V, Session: wireSession(sess), Messages: wireMessages(msgs)}, nil
}

// SessionRename renames a session (source "user") and its folder.
func (s *Service) SessionRename(ctx context.Context, a *api.SessionRenameArgs) (*api.SessionResult, error) {
	sess, err := s.existing(ctx, a.SessionID, api.SessionRename)
	if err != nil {
		return nil, fail(err)
	}
	if sess, err = s.store.Rename(ctx, sess.ID, a.Title, session.TitleUser); err != nil {
		return nil, fail(err)
	}
	s.titleChanged(sess)
	return &api.SessionResult{V: api.V, Session: wireSession(sess)}, nil
}

// SessionShare sets who sees a session (PostgreSQL).
func (s *Service) SessionShare(ctx context.Context, a *api.SessionShareArgs) (*api.SessionResult, error) {
	if a.Visibility != api.VisibilityPrivate && a.Visibility != api.VisibilityTeam {
		return nil, api.Errorf(api.KindInvalidArgument, "%s: visibility %q: want \"private\" or \"team\"", api.SessionShare, a.Visibility)
	}
	sess, err := s.existing(ctx, a.SessionID, api.SessionShare)
	if err != nil {
		return nil, fail(err)
	}
	if sess, err = s.store.Share(ctx, sess.ID, a.Visibility); err != nil {
		return nil, fail(err)
	}
	return &api.SessionResult{V: api.V, Session: wireSession(sess)}, nil
}

// deleteWait bounds how long a delete waits for the session's turn to end
// after stopping it.
const deleteWait = 5 * time.Second

// SessionDelete deletes a session: a turn running in it is stopped first
// and has ended (its partial answer not kept) before the session, its
// messages, context and folder go, so nothing of it is written after.
func (s *Service) SessionDelete(ctx context.Context, a *api.SessionRefArgs) (*api.DeleteResult, error) {
	if a.SessionID == "" {
		return nil, required(api.SessionDelete, "sessionId")
	}
	if _, err := s.store.Get(ctx, a.SessionID); err != nil {
		return nil, fail(err)
	}
	done := s.engine.Abort(a.SessionID)
	select {
	case <-done:
	case <-ctx.Done():
		return nil, fail(ctx.Err())
	case <-time.After(deleteWait):
		s.log.Warn("turn did not end after abort; deleting anyway", "session", a.SessionID)
	}
	if err := s.store.Delete(ctx, a.SessionID); err != nil {
		return nil, fail(err)
	}
	s.forgetCurrent(a.SessionID)
	s.takeResumed(a.SessionID)
	return &api.DeleteResult{V: api.V, SessionID: a.SessionID, Deleted: true}, nil
}

// SessionSearch searches titles and messages.
func (s *Service) SessionSearch(ctx context.Context, a *api.SessionSearchArgs) (*api.SearchResult, error) {
	if a.Query == "" {
		return nil, required(api.SessionSearch, "query")
	}
	if a.Limit < 0 {
		return nil, api.Errorf(api.KindInvalidArgument, "%s: limit must not be negative", api.SessionSearch)
	}
	hits, err := s.store.Search(ctx, a.Query, a.Limit)
	if err != nil {
		return nil, fail(err)
	}
	return &api.SearchResult{V: api.V, Hits: wireHits(hits)}, nil
}

// SessionExport writes the session as Markdown or JSON into its folder.
func (s *Service) SessionExport(ctx context.Context, a *api.SessionExportArgs) (*api.ExportResult, error) {
	sess, err := s.existing(ctx, a.SessionID, api.SessionExport)
	if err != nil {
		return nil, fail(err)
	}
	format := a.Format
	if format == "" {
		format = "markdown"
	}
	path, content, err := s.store.Export(ctx, sess.ID, format)
	if err != nil {
		return nil, fail(err)
	}
	return &api.ExportResult{V: api.V, Path: path, Content: content}, nil
}

// ResolveID resolves a unique prefix of a session id (at least 4
// characters), as the CLI takes them.
func (s *Service) ResolveID(ctx context.Context, prefix string) (string, error) {
	id, err := s.store.ResolveID(ctx, prefix)
	return id, fail(err)
}

// SessionText is a session as the Markdown of its export (title, relevant
// context, messages in conversation order), without writing it.
func (s *Service) SessionText(ctx context.Context, id string) (string, error) {
	_, content, err := session.ExportOf(ctx, s.store, id, "markdown")
	return content, fail(err)
}
