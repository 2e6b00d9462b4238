package postgres

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/ctxls/ctxls/session"
)

// TurnState reads what a turn gives the model of the session id (see
// TurnState and sqlite.Store.TurnState). Everything goes out at once (a
// pipe), so the database is asked once: the session's streaming answers, the
// session with its files, its context, its model history, and last user
// appended. The reads' results come back before the insert runs: TurnState
// returns with them and the insert's result is read in the background
// (TurnState.Stored waits for it), so the turn's request goes out while
// the message is written and committed, as on SQLite; the reads did not see
// it. Stale answers found cost a second statement (rare: a daemon died
// mid-answer); then the mirror is brought up to date as Get brings it.
func (s *Store) TurnState(ctx context.Context, id string, user *session.Message, mark *session.HistoryMark) (*session.TurnState, error) {
	ts := &session.TurnState{}
	if user != nil {
		if user.SessionID != id {
			return nil, session.Invalidf("the turn's message belongs to session %q, not %q", user.SessionID, id)
		}
		if err := session.CheckMessage(user); err != nil {
			return nil, err
		}
	}
	now := s.millis()
	var held session.HistoryMark // none: the whole history (-1 is no summary's id)
	held.Summary = -1
	if mark != nil {
		held = *mark
	}
	var stmts []stmt
	if user != nil {
		stmts = append(stmts, stmt{pgStreaming, []any{id}})
	}
	stmts = append(stmts, stmt{pgSessionWithFiles, []any{id}}, stmt{pgContext, []any{id}},
		stmt{pgModelHistorySince, []any{id, held.Summary, held.Through}})
	reads := len(stmts)
	if user != nil {
		stmts = append(stmts, stmt{pgAppendMessage, session.MessageArgs(user, now, s.owner)})
	}
	// The reads' results come back as soon as they are done, the insert's
	// later (see pipe).
	p, err := s.sendPipe(ctx, stmts, reads)
	if err != nil {
		return nil, err
	}
	end := p.close
	var (
		files  []pgFile
		stale  []int64
		reread bool
	)
	err = func() (err error) {
		if user != nil {
			rows, err := p.rows()
			if stale, err = s.staleAmong(rows, err, now); err != nil {
				return err
			}
		}
		if ts.Session, files, err = s.scanRowFiles(p.row(), id); err != nil {
			return err
		}
		if ts.Context, ts.AddedBy, err = scanContext(p.rows()); err != nil {
			return err
		}
		if ts.Summary, ts.History, err = splitModelHistory(s.scanMessages(p.rows())); err != nil {
			return err
		}
		if mark != nil && session.SummaryID(ts.Summary) == mark.Summary {
			// As the statement decided, when the message held last is
			// still there (read first); when it is gone, all of it again.
			if len(ts.History) > 0 && ts.History[0].ID == mark.Through {
				ts.History, ts.Since = ts.History[1:], mark.Through
			} else {
				reread = true
			}
		}
		return nil
	}()
	if err != nil {
		// A statement that failed made the database skip the rest, the
		// insert too; a session not found (or not this role's) leaves the
		// insert no row to touch.
		return nil, errors.Join(err, end())
	}
	fail := func(err error) (*session.TurnState, error) { return nil, err }
	if user == nil {
		if err := end(); err != nil {
			return nil, err
		}
	} else {
		done := make(chan error, 1)
		go func() {
			err := scanAppended(user, p.row())
			err = errors.Join(err, end())
			if err == nil {
				user.CreatedAt = session.FromMillis(now)
				err = s.history.Later(context.WithoutCancel(ctx), id)
			}
			done <- err
		}()
		ts.Stored = sync.OnceValue(func() error { return <-done })
		fail = func(err error) (*session.TurnState, error) {
			ts.Stored() // stored or not, the turn does not start
			return nil, err
		}
	}
	if reread {
		if ts.Summary, ts.History, err = splitModelHistory(s.scanMessages(s.pool.Query(ctx, pgModelHistory, id))); err != nil {
			return fail(err)
		}
	}
	if len(stale) > 0 {
		// Read streaming above, before they were marked.
		marked, err := s.markInterrupted(ctx, stale, now)
		if err != nil {
			return fail(err)
		}
		for i, m := range ts.History {
			if slices.Contains(marked, m.ID) {
				ts.History[i].Status = session.StatusInterrupted
			}
		}
	}
	if err := s.syncFolder(ctx, ts.Session, files); err != nil {
		return fail(err)
	}
	ts.Sources = namesIn(files, "sources")
	return ts, nil
}
