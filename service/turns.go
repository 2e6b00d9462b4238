package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat"
	"github.com/ctxls/ctxls/prompts"
	"github.com/ctxls/ctxls/session"
	"github.com/ctxls/ctxls/tool"
	"github.com/ctxls/ctxls/turn"
)

// TurnOptions are what a door adds to a turn beyond its arguments.
type TurnOptions struct {
	// Roots are the turn's workspace folders (nil: the connection's); the
	// first is the session's workspace and where relative files start.
	Roots []string
	// Model is the model for this turn, recorded as the session's model
	// from now on (the CLI's --model).
	Model string
	// Provider is set over the connection's provider for this turn (the
	// CLI's flags).
	Provider api.Provider
	// Buffers gives the editor's text for this turn (nil: the connection's
	// open documents); ACP passes its client's.
	Buffers chat.Buffers
	// Again asks the session's last question again in place of its answer
	// (the CLI's --again): ChatArgs.Rewind is set to it, and an empty
	// message is the question as it was.
	Again bool
	// WriteFile writes the model's output files (nil: the store writes
	// them); ACP writes through its client.
	WriteFile func(ctx context.Context, path, content string) error
}

// StartTurn checks a turn, resolves its session (the id given, else the
// current one, else a new one) and provider, and starts it. Errors before
// the turn starts are returned, nothing stored.
func (s *Service) StartTurn(ctx context.Context, a *api.ChatArgs, o TurnOptions) (*Turn, error) {
	if a.Message == "" && a.Rewind == 0 && !o.Again && len(a.Images) == 0 {
		return nil, required(api.ChatRequest, "message")
	}
	images, err := chat.DecodeImages(a.Images)
	if err != nil {
		return nil, fail(err)
	}
	roots := o.Roots
	if roots == nil {
		roots = s.Roots()
	}
	files, lines, err := chat.QuestionFiles(a.Files, a.Message, roots)
	if err != nil {
		return nil, fail(err)
	}
	sess, err := s.turnSession(ctx, a, o)
	if err != nil {
		return nil, err
	}
	model := o.Model
	if model == "" && sess == nil {
		// The turn makes the session: it starts with the default model
		// as its own, if the user made one the default.
		model = s.defaultModel()
	}
	p := o.Provider
	if model != "" {
		p.Model = model
	}
	resolved, err := s.resolve(p, sess)
	if err != nil {
		return nil, err
	}
	var imageNames []string
	if len(images) > 0 {
		if sess, imageNames, err = s.withImages(ctx, sess, a, images); err != nil {
			return nil, err
		}
	}
	id := ""
	if sess != nil {
		id = sess.ID
	}
	s.mu.Lock()
	compactAt := s.conn.compactAt
	s.mu.Unlock()
	resumed := s.isResumed(id)
	t, err := s.turns.Start(ctx, turn.Request{Model: model, TurnSpec: chat.TurnSpec{
		SessionID: id, Message: a.Message, Files: files, Lines: lines, Resumed: resumed,
		Candidates: s.candidatePaths(), Roots: roots, Provider: resolved, Env: s.envHint(roots),
		Buffers: o.Buffers, WriteFile: o.WriteFile, CompactAt: compactAt, Session: sess, Tools: s.box.Turn(id, true),
		Rewind: a.Rewind, NoInstructions: s.instructionsOff(),
	}, Observe: s.observe(ctx), Ended: s.ended(ctx)})
	if err != nil {
		for _, name := range imageNames { // the question was not asked: its images go
			if rerr := s.store.RemoveFile(ctx, id, name); rerr != nil {
				s.log.Warn("an image of a question not asked was not removed", "image", name, "err", rerr)
			}
		}
		return nil, fail(err)
	}
	if t.Created {
		s.adoptNew(t.SessionID)
	}
	if resumed {
		s.takeResumed(id)
	}
	return t, nil
}

// turnSession is the session a turn goes to (nil: one the turn makes),
// with a.Rewind and a.Message settled when the turn asks a question
// again; a new session's first question takes the editor's view captured
// before it existed.
func (s *Service) turnSession(ctx context.Context, a *api.ChatArgs, o TurnOptions) (*session.Session, error) {
	sess, err := s.sessionOf(ctx, a.SessionID, false)
	if err != nil {
		return nil, fail(err)
	}
	if a.Rewind != 0 || o.Again {
		if sess == nil {
			return nil, api.Errorf(api.KindInvalidArgument, "%s: rewind needs the session of the question (sessionId), and none is current", api.ChatRequest)
		}
		q, err := s.question(ctx, sess.ID, a.Rewind, o.Again)
		if err != nil {
			return nil, fail(err)
		}
		a.Rewind = q.ID
		if a.Message == "" {
			a.Message = q.Content // asked again as it was
		}
	}
	if sess == nil && a.SessionID == "" {
		if sess, err = s.withPendingView(ctx); err != nil {
			return nil, fail(err)
		}
	}
	return sess, nil
}

// withImages stores a question's images in the session folder (making
// the session if needed: the question names them) and names each in
// a.Message; it returns the session and the images' names.
func (s *Service) withImages(ctx context.Context, sess *session.Session, a *api.ChatArgs, images []Image) (*session.Session, []string, error) {
	var err error
	if sess == nil {
		if sess, err = s.sessionOf(ctx, "", true); err != nil {
			return nil, nil, fail(err)
		}
	}
	names, err := s.storeImages(ctx, sess.ID, images)
	if err != nil {
		return nil, nil, fail(err)
	}
	var lines []string
	for _, name := range names {
		lines = append(lines, chat.ImageMarker(name))
	}
	named := strings.Join(lines, "\n")
	if a.Message == "" {
		a.Message = named
	} else {
		a.Message += "\n\n" + named
	}
	return sess, names, nil
}

// question is message id of session sessionID when it is one of the
// user's questions (what a turn may rewind to), or with last the session's
// last question; else an error saying why.
func (s *Service) question(ctx context.Context, sessionID string, id int64, last bool) (*session.Message, error) {
	msgs, err := s.store.Messages(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	if last {
		for i := len(msgs) - 1; i >= 0; i-- {
			if msgs[i].Role == session.RoleUser {
				return &msgs[i], nil
			}
		}
		return nil, api.Errorf(api.KindInvalidArgument, "session %s has no question to ask again", sessionID)
	}
	for i := range msgs {
		if msgs[i].ID != id {
			continue
		}
		if msgs[i].Role != session.RoleUser {
			return nil, session.Invalidf("message %d is not a question (it is a %s message); rewind to a question", id, msgs[i].Role)
		}
		return &msgs[i], nil
	}
	return nil, fmt.Errorf("message %d of session %s: %w", id, sessionID, session.ErrNotFound)
}

// observe is a turn's Observe: what the turn changed in the session
// (its title, context, files) is published, not handed to the door; a
// compaction is both; a failure's error is the service's.
func (s *Service) observe(ctx context.Context) func(string, Event) (Event, bool) {
	return func(id string, ev Event) (Event, bool) {
		switch ev := ev.(type) {
		case TitleChanged:
			s.titleChanged(ev.Session)
			return nil, false
		case chat.ContextChanged:
			s.contextChanged(ev.SessionID, "changed", ev.Change.Context, ev.Change.Added, ev.Change.Removed)
			return nil, false
		case chat.FilesChanged:
			s.publish(SessionFilesChanged{api.SessionFilesChangedParams{SessionID: ev.SessionID, Subdir: ev.Subdir, Name: ev.Name, Size: ev.Size, By: ev.By}})
			s.enforceStorage(ctx, ev.Size) // the model wrote into the session folder
			return nil, false
		case Compacted:
			s.compacted(ctx, ev.Compaction)
		case Failed:
			if errors.Is(ev.Err, chat.ErrSessionDeleted) {
				s.forgetCurrent(id)
			}
			ev.Err = fail(ev.Err)
			return ev, true
		}
		return ev, true
	}
}

// ended is a turn's Ended: once the door has the answer, the storage
// limit is kept (the turn wrote messages, maybe files).
func (s *Service) ended(ctx context.Context) func(Event) {
	return func(Event) { s.enforceStorage(ctx, 0) }
}

// compacted publishes a compaction: the session's title and where the
// model's view now starts.
func (s *Service) compacted(ctx context.Context, c chat.Compaction) {
	ev := SessionUpdated{SessionUpdatedParams: api.SessionUpdatedParams{SessionID: c.SessionID, CompactedThrough: c.Summary.SummaryOf.Last}, Tokens: c.Tokens, Window: c.Window}
	s.titles.Lock() // the title read is published before a newer one (events.go)
	defer s.titles.Unlock()
	if sess, err := s.store.Get(ctx, c.SessionID); err == nil {
		ev.Title, ev.TitleSource = sess.Title, sess.TitleSource
	}
	s.publish(ev)
}

// Chat runs a turn to its end (api.Interface's; a door that streams starts
// the turn with StartTurn and reads its events).
func (s *Service) Chat(ctx context.Context, a *api.ChatArgs) (*api.ChatResult, error) {
	t, err := s.StartTurn(ctx, a, TurnOptions{})
	if err != nil {
		return nil, err
	}
	defer t.Abandon()
	return Outcome(t.Wait())
}

// Outcome is the chat result of a turn's final event: Done's result;
// Cancelled is a KindCancelled error; Failed its error, with the partial
// result when an answer was stored (FinishReason "error").
func Outcome(final Event) (*api.ChatResult, error) {
	var res *chat.Result
	switch f := final.(type) {
	case Done:
		res = f.Result
	case Cancelled:
		return nil, api.Errorf(api.KindCancelled, "chat turn cancelled; the partial answer is kept")
	case Failed:
		if f.Result == nil {
			return nil, fail(f.Err)
		}
		return chatResult(f.Result), fail(f.Err)
	default:
		return nil, api.Errorf(api.KindInternal, "the turn ended without a result")
	}
	return chatResult(res), nil
}

func chatResult(r *chat.Result) *api.ChatResult {
	return &api.ChatResult{
		V: api.V, SessionID: r.SessionID, MessageID: r.MessageID, Text: r.Text, FinishReason: r.FinishReason,
		Usage:  api.ChatUsage{PromptTokens: r.Usage.PromptTokens, CompletionTokens: r.Usage.CompletionTokens, CachedTokens: r.Usage.CachedTokens},
		Edited: r.Edited, Instructions: wireInstructions(r.Instructions),
	}
}

// candidatePaths are the open and recently edited files, most recent first.
func (s *Service) candidatePaths() []string {
	var out []string
	data := ""
	if s.store != nil {
		data = s.store.DataDir()
	}
	for _, c := range s.docs.Candidates() {
		// Files ctxls wrote itself (a session folder's results/, an
		// export) are not the user's recently edited files.
		if c.Path != "" && (data == "" || !session.Within(c.Path, data)) {
			out = append(out, c.Path)
		}
	}
	return out
}

// ChatPreview builds the model input a turn with the same arguments would
// send, without storing anything or calling the provider.
func (s *Service) ChatPreview(ctx context.Context, a *api.ChatArgs) (*api.ChatPreviewResult, error) {
	if a.Message == "" {
		return nil, required(api.ChatPreview, "message")
	}
	roots := s.Roots()
	files, lines, err := chat.QuestionFiles(a.Files, a.Message, roots)
	if err != nil {
		return nil, fail(err)
	}
	var sess *session.Session
	if s.store != nil {
		if sess, err = s.sessionOf(ctx, a.SessionID, false); err != nil {
			return nil, fail(err)
		}
	}
	id := ""
	if sess != nil {
		id = sess.ID
	}
	prov := s.previewProvider(sess)
	pv, err := s.engine.Preview(ctx, chat.TurnSpec{
		SessionID: id, Message: a.Message, Files: files, Lines: lines, Resumed: s.isResumed(id),
		Candidates: s.candidatePaths(), Roots: roots, Provider: prov,
		Env: s.envHint(roots), Session: sess, Tools: s.box.Turn(id, false), NoInstructions: s.instructionsOff(),
	})
	if err != nil {
		return nil, fail(err)
	}
	counter := prompts.TokenizerFor(pv.Model)
	res := &api.ChatPreviewResult{
		V: api.V, SessionID: id, Model: pv.Model, ReviewMode: api.ReviewMode(tool.ReviewMode(sess)), Messages: []api.PreviewMessage{}, Tools: []api.PreviewTool{},
		Tokens: api.PreviewTokens{System: pv.System, History: pv.History, Files: pv.Files, Tools: pv.ToolTokens, Total: pv.Total},
		Budget: pv.Budget, Dropped: pv.Dropped, Instructions: wireInstructions(pv.Instructions), Files: pv.QuestionFiles,
	}
	for _, m := range pv.Messages {
		content, images := chat.PreviewContent(m)
		pm := api.PreviewMessage{Role: m.Role, Content: content, ToolCallID: m.ToolCallID, Tokens: counter.Count(content) + images*chat.ImageTokens}
		for _, c := range m.ToolCalls {
			pm.ToolCalls = append(pm.ToolCalls, api.PreviewToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
		}
		res.Messages = append(res.Messages, pm)
	}
	for _, t := range pv.Tools {
		params, _ := json.Marshal(t.Function.Parameters)
		whole, _ := json.Marshal(t)
		res.Tools = append(res.Tools, api.PreviewTool{Name: t.Function.Name, Description: t.Function.Description, Parameters: params, Tokens: counter.Count(string(whole))})
	}
	return res, nil
}

// SessionCompact summarises the session's earlier turns now.
func (s *Service) SessionCompact(ctx context.Context, a *api.SessionIDArgs) (*api.SessionCompactResult, error) {
	return s.Compact(ctx, a, api.Provider{})
}

// Compact is SessionCompact with provider settings over the connection's
// (the CLI's flags).
func (s *Service) Compact(ctx context.Context, a *api.SessionIDArgs, p api.Provider) (*api.SessionCompactResult, error) {
	sess, err := s.existing(ctx, a.SessionID, api.SessionCompact)
	if err != nil {
		return nil, fail(err)
	}
	resolved, err := s.resolve(p, sess)
	if err != nil {
		return nil, err
	}
	c, err := s.engine.Compact(ctx, sess.ID, resolved)
	if err != nil {
		return nil, fail(err)
	}
	s.compacted(ctx, *c)
	return &api.SessionCompactResult{V: api.V, SessionID: sess.ID, Summary: wireMessage(*c.Summary),
		CompactedThrough: c.Summary.SummaryOf.Last, Covered: c.Covered, Tokens: c.Tokens}, nil
}

// CompactionMarker is the marker line of the summary a turn made
// (turn.Compacted), as the CLI prints it.
func CompactionMarker(ev Compacted) string {
	return session.SummaryMarker(*ev.Compaction.Summary.SummaryOf)
}
