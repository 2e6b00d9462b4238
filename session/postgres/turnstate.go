package postgres

import (
	"context"
	"slices"

	"github.com/ctxls/ctxls/session"
	"github.com/jackc/pgx/v5"
)

// TurnState reads what a turn gives the model of the session id (see
// TurnState and sqlite.Store.TurnState). Everything goes out as one batch, so
// the database is asked once: the session's streaming answers, user
// appended, the session with its files, its context and its model
// history. Stale answers found cost a second statement (rare: a daemon
// died mid-answer); then the mirror is brought up to date as Get brings
// it.
func (s *Store) TurnState(ctx context.Context, id string, user *session.Message, mark *session.HistoryMark) (*session.TurnState, error) {
	ts := &session.TurnState{}
	var (
		files []pgFile
		stale []int64
	)
	now := s.millis()
	b := &pgx.Batch{}
	if user != nil {
		if user.SessionID != id {
			return nil, session.Invalidf("the turn's message belongs to session %q, not %q", user.SessionID, id)
		}
		if err := session.CheckMessage(user); err != nil {
			return nil, err
		}
		b.Queue(pgStreaming, id).Query(func(rows pgx.Rows) (err error) {
			stale, err = s.staleAmong(rows, nil, now)
			return err
		})
		b.Queue(pgAppendMessage, session.MessageArgs(user, now, s.owner)...).QueryRow(func(row pgx.Row) error {
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
	var held session.HistoryMark // none: the whole history (-1 is no summary's id)
	held.Summary = -1
	if mark != nil {
		held = *mark
	}
	reread := false
	b.Queue(pgModelHistorySince, id, held.Summary, held.Through).Query(func(rows pgx.Rows) (err error) {
		ts.Summary, ts.History, err = splitModelHistory(s.scanMessages(rows, nil))
		if err == nil && mark != nil && session.SummaryID(ts.Summary) == mark.Summary {
			// As the statement decided, when the message held last is
			// still there (read first); when it is gone, all of it again.
			if len(ts.History) > 0 && ts.History[0].ID == mark.Through {
				ts.History, ts.Since = ts.History[1:], mark.Through
			} else {
				reread = true
			}
		}
		return err
	})
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return nil, err
	}
	if reread {
		var err error
		if ts.Summary, ts.History, err = splitModelHistory(s.scanMessages(s.pool.Query(ctx, pgModelHistory, id))); err != nil {
			return nil, err
		}
	}
	if user != nil {
		user.CreatedAt = session.FromMillis(now)
		if err := s.history.Later(ctx, id); err != nil {
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
					ts.History[i].Status = session.StatusInterrupted
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
