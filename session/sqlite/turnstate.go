package sqlite

import (
	"context"
	"sync"

	"github.com/ctxls/ctxls/session"
)

// TurnState reads what a turn gives the model of the session id (see
// TurnState), beginning the turn first when user is not nil: the answers
// left streaming by daemons that are gone are marked interrupted (this
// store's own too: its engine runs one turn per session at a time, and
// the caller holds the turn lock), and user is appended (AppendMessage)
// after the reads, in the background: the turn's request goes out while
// it is written (TurnState.Stored waits for it). A preview passes nil and
// changes nothing. Here each part is the method's own read.
func (s *Store) TurnState(ctx context.Context, id string, user *session.Message, mark *session.HistoryMark) (*session.TurnState, error) {
	if user != nil {
		if user.SessionID != id {
			return nil, session.Invalidf("the turn's message belongs to session %q, not %q", user.SessionID, id)
		}
		if err := session.CheckMessage(user); err != nil {
			return nil, err
		}
		if err := s.interruptStale(ctx, id); err != nil {
			return nil, err
		}
	}
	ts := &session.TurnState{}
	var err error
	if ts.Session, err = s.Get(ctx, id); err != nil {
		return nil, err
	}
	if ts.Context, err = s.Context(ctx, id); err != nil {
		return nil, err
	}
	if ts.AddedBy, err = s.AddedBy(ctx, id, session.SetFiles); err != nil {
		return nil, err
	}
	ts.Sources, ts.SourcesErr = s.ListFiles(ctx, id, "sources")
	if ts.Summary, ts.History, ts.Since, err = s.modelHistorySince(ctx, id, mark); err != nil {
		return nil, err
	}
	if user != nil {
		// Stored even when the turn is cancelled at once, as it would be
		// had it been stored first.
		done := make(chan error, 1)
		go func() { done <- s.AppendMessage(context.WithoutCancel(ctx), user) }()
		ts.Stored = sync.OnceValue(func() error { return <-done })
	}
	return ts, nil
}
