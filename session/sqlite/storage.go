package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/session"
)

func (s *Store) databaseSize() int64 {
	var n int64
	for _, name := range []string{"ctxls.db", "ctxls.db-wal", "ctxls.db-shm", "ctxls.lock"} {
		if fi, err := os.Lstat(filepath.Join(s.dir, name)); err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
	}
	return n
}

// DiskUsage measures the data directory. It takes no lock: a write in progress
// may or may not be counted.
func (s *Store) DiskUsage(ctx context.Context) (*session.DiskUsage, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT id, title, folder FROM sessions")
	if err != nil {
		return nil, err
	}
	u := &session.DiskUsage{Sessions: []api.FolderUsage{}}
	for rows.Next() {
		var su api.FolderUsage
		if err := rows.Scan(&su.ID, &su.Title, &su.Folder); err != nil {
			rows.Close()
			return nil, err
		}
		su.Folder = s.folderPath(su.Folder)
		u.Sessions = append(u.Sessions, su)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var inSessions int64
	for i := range u.Sessions {
		u.Sessions[i].Size = session.DirSize(u.Sessions[i].Folder)
		inSessions += u.Sessions[i].Size
	}
	slices.SortStableFunc(u.Sessions, func(a, b api.FolderUsage) int { return cmp.Compare(b.Size, a.Size) })
	u.Total = session.DirSize(s.dir)
	u.Database = s.databaseSize()
	u.Other = max(0, u.Total-u.Database-inSessions)
	return u, nil
}

// EnforceSoftLimit keeps the data directory under limit bytes as far as
// intermediate data allows: when it is over, the files in the data/ folders
// of all sessions are removed, least recently modified first, until it is
// under; the database's write-ahead log is truncated first. Nothing else is
// ever removed: not sources/, results/ or scripts/,
// not messages. A folder below data/ left empty is removed too. It runs
// inside the write lock, so no file is written or moved meanwhile, in any
// process; a session's activity time is not changed.
func (s *Store) EnforceSoftLimit(ctx context.Context, limit int64) (*session.Cleanup, error) {
	c := &session.Cleanup{Limit: limit, Removed: []session.Removed{}}
	if c.Before = session.DirSize(s.dir); c.Before <= limit {
		c.After = c.Before
		return c, nil // the common case, without the lock
	}
	// The write-ahead log keeps up to ~4 MB of pages already in the
	// database: give that back before anybody's files.
	s.checkpoint(ctx)
	if c.After = session.DirSize(s.dir); c.After <= limit {
		return c, nil
	}
	type candidate struct {
		session.Removed
		path, dataDir string
	}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, "SELECT id, title, folder FROM sessions")
		if err != nil {
			return err
		}
		type sess struct{ id, title, folder string }
		var all []sess
		for rows.Next() {
			var x sess
			if err := rows.Scan(&x.id, &x.title, &x.folder); err != nil {
				rows.Close()
				return err
			}
			all = append(all, x)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		var cands []candidate
		for _, x := range all {
			if err := s.findFolder(ctx, tx, x.folder); err != nil {
				return err
			}
			data := filepath.Join(s.folderPath(x.folder), "data")
			if fi, err := os.Lstat(data); err != nil || !fi.IsDir() {
				continue // missing, or not a real folder (never followed)
			}
			session.WalkFiles(data, "", session.MaxOutputDepth, func(name string, fi fs.FileInfo) {
				if fi.Mode().IsRegular() {
					cands = append(cands, candidate{session.Removed{SessionID: x.id, Title: x.title, Name: name, Size: fi.Size(), ModTime: fi.ModTime().UTC()},
						filepath.Join(data, filepath.FromSlash(name)), data})
				}
			})
		}
		slices.SortStableFunc(cands, func(a, b candidate) int {
			return cmp.Or(a.ModTime.Compare(b.ModTime), cmp.Compare(a.SessionID, b.SessionID), cmp.Compare(a.Name, b.Name))
		})
		total := session.DirSize(s.dir) // again, under the lock
		c.Before = total
		for _, f := range cands {
			if total <= limit {
				break
			}
			if err := os.Remove(f.path); err != nil {
				if !errors.Is(err, fs.ErrNotExist) {
					return fmt.Errorf("removing %s: %w", f.path, err)
				}
				continue
			}
			total -= f.Size
			c.Removed = append(c.Removed, f.Removed)
			for dir := filepath.Dir(f.path); dir != f.dataDir && strings.HasPrefix(dir, f.dataDir); dir = filepath.Dir(dir) {
				if os.Remove(dir) != nil {
					break // not empty
				}
			}
		}
		c.After = total
		return nil
	})
	if err != nil && len(c.Removed) == 0 {
		return nil, err
	}
	return c, err
}

// checkpoint copies the write-ahead log into the database and truncates it,
// holding the write lock so no writer of any process is in the way.
// Best effort: a reader in the way leaves the log as it is.
func (s *Store) checkpoint(ctx context.Context) {
	if err := s.writer.Acquire(ctx); err != nil {
		return
	}
	defer s.writer.Release()
	s.db.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
}

// PruneInactive deletes the sessions with no activity (updatedAt) before
// cutoff, with their messages, context and folders, and returns them, the
// oldest activity first. With dryRun it deletes nothing and returns what it
// would delete. A session that becomes active meanwhile is kept: each is
// deleted only if it is still inactive in the deleting transaction.
func (s *Store) PruneInactive(ctx context.Context, cutoff time.Time, dryRun bool) ([]session.Session, error) {
	query := "SELECT " + sessionColumns + " FROM sessions s WHERE s.updated_at < ? ORDER BY s.updated_at, s.id"
	list, _, err := s.list(ctx, s.db, query, []any{cutoff.UnixMilli()})
	if err != nil || dryRun {
		return list, err
	}
	out := []session.Session{}
	for _, ss := range list {
		var folder string
		err := s.inTx(ctx, func(tx *sql.Tx) error {
			err := tx.QueryRowContext(ctx, "DELETE FROM sessions WHERE id = ? AND updated_at < ? RETURNING folder", ss.ID, cutoff.UnixMilli()).Scan(&folder)
			if errors.Is(err, sql.ErrNoRows) {
				folder = "" // active again, or deleted by someone else
				return nil
			}
			return err
		})
		if err != nil {
			return out, err
		}
		if folder == "" {
			continue
		}
		s.forget(ss.ID)
		if err := os.RemoveAll(s.folderPath(folder)); err != nil {
			return out, fmt.Errorf("session %s deleted, but its folder could not be removed: %w", ss.ID, err)
		}
		out = append(out, ss)
	}
	return out, nil
}
