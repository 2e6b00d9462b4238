package session

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
	"strconv"
	"strings"
	"time"
)

// DefaultSoftLimitMB is the data directory's default soft limit, in MiB.
const DefaultSoftLimitMB = 1024

// SoftLimitEnv names the environment variable that sets the soft limit in
// MiB when neither the command line nor the editor does.
const SoftLimitEnv = "CTXLS_STORAGE_SOFT_LIMIT_MB"

// ParseLimitMB parses a soft limit in MiB: a whole number of at least 1;
// "" gives 0 (not set).
func ParseLimitMB(s string) (int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 1<<30 {
		return 0, fmt.Errorf("storage soft limit %q: want a whole number of MiB, at least 1", truncate(s, 40))
	}
	return n, nil
}

// SessionUsage is the size of one session's folder.
type SessionUsage struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Folder string `json:"folder"`
	Size   int64  `json:"size"`
}

// DiskUsage is how much the data directory holds: the sizes of its regular
// files, symbolic links not followed.
type DiskUsage struct {
	Total    int64          `json:"total"`    // everything under the data directory
	Database int64          `json:"database"` // ctxls.db with its -wal and -shm files, and the lock file
	Sessions []SessionUsage `json:"sessions"` // each session's folder, largest first
	Other    int64          `json:"other"`    // the rest: tmp/, folders no session names
}

// DirSize is the size of the regular files under dir, symbolic links not
// followed; what cannot be read counts as nothing.
func DirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // skip what cannot be read; a missing dir is 0
		}
		if d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

func (s *SQLite) databaseSize() int64 {
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
func (s *SQLite) DiskUsage(ctx context.Context) (*DiskUsage, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT id, title, folder FROM sessions")
	if err != nil {
		return nil, err
	}
	u := &DiskUsage{Sessions: []SessionUsage{}}
	for rows.Next() {
		var su SessionUsage
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
		u.Sessions[i].Size = DirSize(u.Sessions[i].Folder)
		inSessions += u.Sessions[i].Size
	}
	slices.SortStableFunc(u.Sessions, func(a, b SessionUsage) int { return cmp.Compare(b.Size, a.Size) })
	u.Total = DirSize(s.dir)
	u.Database = s.databaseSize()
	u.Other = max(0, u.Total-u.Database-inSessions)
	return u, nil
}

// Removed is a file the storage clean-up removed.
type Removed struct {
	SessionID string    `json:"sessionId"`
	Title     string    `json:"title"` // the session's
	Name      string    `json:"name"`  // below the session's data/, "/"-separated
	Size      int64     `json:"size"`
	ModTime   time.Time `json:"modTime"`
}

// Cleanup is what EnforceSoftLimit found and did.
type Cleanup struct {
	Limit   int64     `json:"limit"`  // bytes
	Before  int64     `json:"before"` // the data directory's size before
	After   int64     `json:"after"`  // and after
	Removed []Removed `json:"removed"`
}

// EnforceSoftLimit keeps the data directory under limit bytes as far as
// intermediate data allows: when it is over, the files in the data/ folders
// of all sessions are removed, least recently modified first, until it is
// under; the database's write-ahead log is truncated first. Nothing else is
// ever removed: not sources/, results/ or scripts/,
// not messages. A folder below data/ left empty is removed too. It runs
// inside the write lock, so no file is written or moved meanwhile, in any
// process; a session's activity time is not changed.
func (s *SQLite) EnforceSoftLimit(ctx context.Context, limit int64) (*Cleanup, error) {
	c := &Cleanup{Limit: limit, Removed: []Removed{}}
	if c.Before = DirSize(s.dir); c.Before <= limit {
		c.After = c.Before
		return c, nil // the common case, without the lock
	}
	// The write-ahead log keeps up to ~4 MB of pages already in the
	// database: give that back before anybody's files.
	s.checkpoint(ctx)
	if c.After = DirSize(s.dir); c.After <= limit {
		return c, nil
	}
	type candidate struct {
		Removed
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
			walkFiles(data, "", maxOutputDepth, func(name string, fi fs.FileInfo) {
				if fi.Mode().IsRegular() {
					cands = append(cands, candidate{Removed{x.id, x.title, name, fi.Size(), fi.ModTime().UTC()},
						filepath.Join(data, filepath.FromSlash(name)), data})
				}
			})
		}
		slices.SortStableFunc(cands, func(a, b candidate) int {
			return cmp.Or(a.ModTime.Compare(b.ModTime), cmp.Compare(a.SessionID, b.SessionID), cmp.Compare(a.Name, b.Name))
		})
		total := DirSize(s.dir) // again, under the lock
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
func (s *SQLite) checkpoint(ctx context.Context) {
	if err := s.writer.acquire(ctx); err != nil {
		return
	}
	defer s.writer.release()
	s.db.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
}

// Summary says what a clean-up removed, for people: "" when nothing was.
// At most ten names are listed.
func (c *Cleanup) Summary() string {
	if c == nil || len(c.Removed) == 0 {
		return ""
	}
	var freed int64
	names := make([]string, 0, min(len(c.Removed), 10))
	for i, r := range c.Removed {
		freed += r.Size
		if i < 10 {
			names = append(names, fmt.Sprintf("%q data/%s", oneLineTitle(r.Title), r.Name))
		}
	}
	if n := len(c.Removed) - len(names); n > 0 {
		names = append(names, fmt.Sprintf("and %d more", n))
	}
	noun := "files"
	if len(c.Removed) == 1 {
		noun = "file"
	}
	msg := fmt.Sprintf("the data directory was over its soft limit of %s (%s), so %d intermediate %s in data/ folders, the oldest, were removed (%s freed): %s.",
		mib(c.Limit), Bytes(c.Before), len(c.Removed), noun, Bytes(freed), strings.Join(names, ", "))
	if c.After > c.Limit {
		msg += fmt.Sprintf(" It is still over the limit (%s): the rest is the user's files, results, scripts and messages, which are never removed; see ctxls sessions du.", Bytes(c.After))
	}
	return msg
}

func oneLineTitle(t string) string { return truncate(strings.Join(strings.Fields(t), " "), 60) }

// mib states a byte count that is a whole number of MiB as "1024 MiB".
func mib(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return Bytes(n)
}

// PruneInactive deletes the sessions with no activity (updatedAt) before
// cutoff, with their messages, context and folders, and returns them, the
// oldest activity first. With dryRun it deletes nothing and returns what it
// would delete. A session that becomes active meanwhile is kept: each is
// deleted only if it is still inactive in the deleting transaction.
func (s *SQLite) PruneInactive(ctx context.Context, cutoff time.Time, dryRun bool) ([]Session, error) {
	query := "SELECT " + sessionColumns + " FROM sessions s WHERE s.updated_at < ? ORDER BY s.updated_at, s.id"
	list, _, err := s.list(ctx, s.db, query, []any{cutoff.UnixMilli()})
	if err != nil || dryRun {
		return list, err
	}
	out := []Session{}
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
		if err := os.RemoveAll(s.folderPath(folder)); err != nil {
			return out, fmt.Errorf("session %s deleted, but its folder could not be removed: %w", ss.ID, err)
		}
		out = append(out, ss)
	}
	return out, nil
}
