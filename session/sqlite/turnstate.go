package sqlite

import (
	"context"

	"github.com/ctxls/ctxls/session"
)

// TurnState reads what a turn gives the model of the session id (see
// TurnState), beginning the turn first when user is not nil: the answers
// left streaming by daemons that are gone are marked interrupted (this
// store's own too: its engine runs one turn per session at a time, and
// the caller holds the turn lock), and user is appended (AppendMessage).
// A preview passes nil and changes nothing. Here each part is the
// method's own read.
func (s *Store) TurnState(ctx context.Context, id string, user *session.Message, mark *session.HistoryMark) (*session.TurnState, error) {
	if user != nil {
		if user.SessionID != id {
			return nil, session.Invalidf("the turn's message belongs to session %q, not %q", user.SessionID, id)
		}
		if err := s.interruptStale(ctx, id); err != nil {
			return nil, err
		}
		if err := s.AppendMessage(ctx, user); err != nil {
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
	return ts, nil
}
