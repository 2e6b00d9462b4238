package session

import (
	"context"
	"slices"

	"github.com/jackc/pgx/v5"
)

// TurnState is what a turn reads of its session before it calls the
// model, besides the message: Store.TurnState begins the turn and reads it
// at once (on PostgreSQL in one round trip, where it was seven).
type TurnState struct {
	// Session is the session, its folder brought up to date.
	Session *Session
	// Context holds every set of the session.
	Context Context
	// AddedBy says who added each item of the files set (AddedByUser or
	// AddedByModel).
	AddedBy map[string]string
	// Sources are the names in the folder's sources/, sorted (ListFiles);
	// when they could not be listed, SourcesErr says why and the turn goes
	// on without them.
	Sources    []string
	SourcesErr error
	// Summary and History are ModelHistory's: the newest summary (nil when
	// none) and the messages after what it covers (the turn's message
	// among them).
	Summary *Message
	History []Message
}

// TurnState reads what a turn gives the model of the session id (see
// TurnState), beginning the turn first when user is not nil: the answers
// left streaming by daemons that are gone are marked interrupted (this
// store's own too: its engine runs one turn per session at a time, and
// the caller holds the turn lock), and user is appended (AppendMessage).
// A preview passes nil and changes nothing. Here each part is the
// method's own read.
func (s *SQLite) TurnState(ctx context.Context, id string, user *Message) (*TurnState, error) {
	if user != nil {
		if user.SessionID != id {
			return nil, invalid("the turn's message belongs to session %q, not %q", user.SessionID, id)
		}
		if err := s.interruptStale(ctx, id); err != nil {
			return nil, err
		}
		if err := s.AppendMessage(ctx, user); err != nil {
			return nil, err
		}
	}
	ts := &TurnState{}
	var err error
	if ts.Session, err = s.Get(ctx, id); err != nil {
		return nil, err
	}
	if ts.Context, err = s.Context(ctx, id); err != nil {
		return nil, err
	}
	if ts.AddedBy, err = s.AddedBy(ctx, id, SetFiles); err != nil {
		return nil, err
	}
	ts.Sources, ts.SourcesErr = s.ListFiles(ctx, id, "sources")
	if ts.Summary, ts.History, err = s.ModelHistory(ctx, id); err != nil {
		return nil, err
	}
	return ts, nil
}

// TurnState reads what a turn gives the model of the session id (see
// TurnState and SQLite.TurnState). Everything goes out as one batch, so
// the database is asked once: the session's streaming answers, user
// appended, the session with its files, its context and its model
// history. Stale answers found cost a second statement (rare: a daemon
// died mid-answer); then the mirror is brought up to date as Get brings
// it.
func (s *Postgres) TurnState(ctx context.Context, id string, user *Message) (*TurnState, error) {
	ts := &TurnState{}
	var (
		files []pgFile
		stale []int64
	)
	now := s.millis()
	b := &pgx.Batch{}
	if user != nil {
		if user.SessionID != id {
			return nil, invalid("the turn's message belongs to session %q, not %q", user.SessionID, id)
		}
		if err := checkMessage(user); err != nil {
			return nil, err
		}
		b.Queue(pgStreaming, id).Query(func(rows pgx.Rows) (err error) {
			stale, err = s.staleAmong(rows, nil, now)
			return err
		})
		b.Queue(pgAppendMessage, messageArgs(user, now, s.owner)...).QueryRow(func(row pgx.Row) error {
			return scanAppended(user, row)
		})
	}
	b.Queue(pgSessionWithFiles, id).QueryRow(func(row pgx.Row) (err error) {
		ts.Session, files, err = s.scanRowFiles(row, id)
		return err
	})
	b.Queue(pgContext, id).Query(func(rows pgx.Rows) (err error) {
		ts.Context, ts.AddedBy, err = scanContext(rows, nil)
		return err
	})
	b.Queue(pgModelHistory, id).Query(func(rows pgx.Rows) (err error) {
		ts.Summary, ts.History, err = splitModelHistory(s.scanMessages(rows, nil))
		return err
	})
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return nil, err
	}
	if user != nil {
		user.CreatedAt = fromMillis(now)
		if err := s.history.later(ctx, id); err != nil {
			return nil, err
		}
		if len(stale) > 0 {
			// Read streaming above, before they were marked.
			marked, err := s.markInterrupted(ctx, stale, now)
			if err != nil {
				return nil, err
			}
			for i, m := range ts.History {
				if slices.Contains(marked, m.ID) {
					ts.History[i].Status = StatusInterrupted
				}
			}
		}
	}
	if err := s.syncFolder(ctx, ts.Session, files); err != nil {
		return nil, err
	}
	ts.Sources = namesIn(files, "sources")
	return ts, nil
}
