package sqlite

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/ctxls/ctxls/session"
)

// LockTurn has nothing to hold across processes in the SQLite store: the
// engine's own claim keeps one turn per session in a daemon.
func (s *Store) LockTurn(context.Context, string) (func(), <-chan struct{}, error) {
	return func() {}, nil, nil
}

// DefaultWatchEvery is how often Watch looks at the database.
const DefaultWatchEvery = 500 * time.Millisecond

// Watch reports the sessions other processes on the same data directory
// changed (another editor's daemon, the CLI), until ctx ends. SQLite has
// no notifications, so it looks every DefaultWatchEvery: when the
// database's files changed since the last look, one indexed read of the
// newest activity, and, when that moved, the sessions changed since
// (updated_at, which every change to a session's row, messages, context
// or files bumps). A session whose updated_at is the value this store set
// itself is its own change, not reported; a change made here and one
// made elsewhere within the same look are reported as neither. Each change
// is reported as Kinds "sessions" and "messages" (what changed is not
// recorded); deletions are not reported (the next read finds the session
// gone).
func (s *Store) Watch(ctx context.Context, interested func(string) bool, fn func(session.Change)) error {
	every := s.watchEvery
	if every <= 0 {
		every = DefaultWatchEvery
	}
	mark, err := s.newestActivity(ctx)
	if err != nil {
		return err
	}
	files := s.dbFiles()
	// again: the files changed lately, so this look reads even if they
	// look unchanged since the last. Their state is not a sure sign of a
	// commit: a file's time of change is the kernel's coarse clock (a few
	// milliseconds), a write-ahead log rewound after a checkpoint keeps
	// its size, and a commit's frames are in the log before its index
	// lets readers see them; so a commit just after a look can leave the
	// files as that look saw them, and, with nothing written after it,
	// would never be read (a turn's answer from ctxls chat in a terminal
	// was never shown in the editor that way). Reading again while the
	// last change is under a second old costs a read or two per change.
	again := false
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		// A commit anywhere writes the database's files: until they change
		// there is nothing to read (and an idle daemon runs no SQLite code,
		// which would keep its pages resident).
		now := s.dbFiles()
		if now == files && !again {
			continue
		}
		again = now != files || time.Since(now.newest()) < time.Second
		files = now
		newest, err := s.newestActivity(ctx)
		if err != nil {
			again = true // a busy or closing database: the next look
			continue
		}
		if newest <= mark {
			continue
		}
		changed, err := s.changedSince(ctx, mark)
		if err != nil {
			again = true
			continue
		}
		mark = newest
		for id, at := range changed {
			mark = max(mark, at) // a write since newest was read: not reported twice
			s.touchedMu.Lock()
			own := s.touched[id] == at
			s.touchedMu.Unlock()
			if !own && interested(id) {
				fn(session.Change{SessionID: id, Kinds: []string{"sessions", "messages"}})
			}
		}
	}
}

// dbState is the size and time of change of the database and its
// write-ahead log.
type dbState struct {
	db, wal       int64
	dbMod, walMod time.Time
}

// newest is the later of the two files' times of change.
func (st dbState) newest() time.Time {
	if st.walMod.After(st.dbMod) {
		return st.walMod
	}
	return st.dbMod
}

func (s *Store) dbFiles() dbState {
	var st dbState
	if fi, err := os.Stat(filepath.Join(s.dir, "ctxls.db")); err == nil {
		st.db, st.dbMod = fi.Size(), fi.ModTime()
	}
	if fi, err := os.Stat(filepath.Join(s.dir, "ctxls.db-wal")); err == nil {
		st.wal, st.walMod = fi.Size(), fi.ModTime()
	}
	return st
}

// newestActivity is the largest updated_at of any session.
func (s *Store) newestActivity(ctx context.Context) (int64, error) {
	var at int64
	err := s.db.QueryRowContext(ctx, "SELECT coalesce(max(updated_at), 0) FROM sessions").Scan(&at)
	return at, err
}

// changedSince is the sessions whose updated_at is after mark, with it.
func (s *Store) changedSince(ctx context.Context, mark int64) (map[string]int64, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT id, updated_at FROM sessions WHERE updated_at > ?", mark)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var id string
		var at int64
		if err := rows.Scan(&id, &at); err != nil {
			return nil, err
		}
		out[id] = at
	}
	return out, rows.Err()
}
