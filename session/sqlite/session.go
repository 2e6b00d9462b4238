package sqlite

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ctxls/ctxls/session"
)

func (s *Store) folderPath(name string) string { return filepath.Join(s.dir, "sessions", name) }

// Create makes a session with its folder. An empty title gives
// DefaultTitle with source "auto"; a title given is the user's.
func (s *Store) Create(ctx context.Context, title string) (*session.Session, error) {
	source := session.TitleUser
	if strings.TrimSpace(title) == "" {
		title, source = session.DefaultTitle, session.TitleAuto
	}
	title, err := session.ValidTitle(title)
	if err != nil {
		return nil, err
	}
	id := session.NewID()
	now := s.millis()
	folder := session.FolderName(session.FromMillis(now), title, id)
	path := s.folderPath(folder)
	var ss *session.Session
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		// Inside the transaction: a folder left by a process killed before
		// its commit is one no live process is filling (see recoverFolders).
		for _, d := range session.Subdirs {
			if err := os.MkdirAll(filepath.Join(path, d), 0o700); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx,
			"INSERT INTO sessions (id, title, title_source, created_at, updated_at, folder) VALUES (?, ?, ?, ?, ?, ?)",
			id, title, source, now, now, folder); err != nil {
			return err
		}
		if err := s.writeHistoryTx(ctx, tx, id); err != nil {
			return err
		}
		ss, _, err = s.get(ctx, tx, id)
		return err
	})
	if err != nil {
		os.RemoveAll(path)
		return nil, err
	}
	return ss, nil
}

const sessionColumns = `s.id, s.title, s.title_source, s.created_at, s.updated_at, s.meta, s.folder,
	s.message_count`

// scanSession reads a session row; moved is true when its folder was not
// where the row says (a rename in flight), so FileCount is not to be
// trusted.
func (s *Store) scanSession(row interface{ Scan(...any) error }) (ss *session.Session, moved bool, err error) {
	var (
		created, updated int64
		meta             string
		folder           string
	)
	ss = &session.Session{}
	if err := row.Scan(&ss.ID, &ss.Title, &ss.TitleSource, &created, &updated, &meta, &folder, &ss.MessageCount); err != nil {
		return nil, false, err
	}
	ss.CreatedAt, ss.UpdatedAt = session.FromMillis(created), session.FromMillis(updated)
	_ = json.Unmarshal([]byte(meta), &ss.Meta)
	ss.Folder = s.folderPath(folder)
	n, ok := countFiles(filepath.Join(ss.Folder, "sources"))
	ss.FileCount = n
	return ss, !ok, nil
}

// countFiles counts the files directly in dir as ListFiles lists them
// (folders and hidden names left out); ok is false when dir cannot be read.
func countFiles(dir string) (n int, ok bool) {
	err := session.WalkFiles(dir, "", 0, func(string, fs.FileInfo) { n++ })
	return n, err == nil
}

// Get returns one session.
func (s *Store) Get(ctx context.Context, id string) (*session.Session, error) {
	ss, moved, err := s.get(ctx, s.db, id)
	if err == nil && moved {
		// Read again where the folder cannot move (see inFolder).
		err = s.inTx(ctx, func(tx *sql.Tx) error {
			ss, _, err = s.get(ctx, tx, id)
			return err
		})
	}
	if err != nil {
		return nil, err
	}
	return ss, nil
}

// get reads one session through q (the database or a transaction).
func (s *Store) get(ctx context.Context, q querier, id string) (*session.Session, bool, error) {
	ss, moved, err := s.scanSession(q.QueryRowContext(ctx, "SELECT "+sessionColumns+" FROM sessions s WHERE s.id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, session.NotFound(id)
	}
	return ss, moved, err
}

// List returns sessions, most recent activity first, and a cursor for the
// next page ("" at the end).
func (s *Store) List(ctx context.Context, opt session.ListOptions) ([]session.Session, string, error) {
	limit, err := session.PageLimit(opt.Limit, 50, 500)
	if err != nil {
		return nil, "", err
	}
	where := []string{"1"}
	var args []any
	if opt.Cursor != "" {
		raw, err := base64.RawURLEncoding.DecodeString(opt.Cursor)
		var c session.Cursor
		if err != nil || json.Unmarshal(raw, &c) != nil || c.ID == "" {
			return nil, "", session.Invalidf("cursor %q is not one this server returned", session.Truncate(opt.Cursor, 60))
		}
		where = append(where, "(s.updated_at < ? OR s.updated_at = ? AND s.id < ?)")
		args = append(args, c.U, c.U, c.ID)
	}
	if q := strings.TrimSpace(opt.Query); q != "" {
		escaped := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(q)
		where = append(where, `s.title LIKE ? ESCAPE '\'`)
		args = append(args, "%"+escaped+"%")
	}
	if opt.Workspace != "" {
		where = append(where, "json_extract("+metaJSON+", '$.workspace') = ?")
		args = append(args, opt.Workspace)
	}
	if opt.NonEmpty {
		// The folder is on disk, not in the database: the sessions empty by
		// their rows whose folder holds files are named.
		withFiles, err := s.emptyRowsWithFiles(ctx)
		if err != nil {
			return nil, "", err
		}
		cond := "NOT (" + emptyRow + ")"
		if len(withFiles) > 0 {
			cond = "(" + cond + " OR s.id IN (" + strings.TrimSuffix(strings.Repeat("?, ", len(withFiles)), ", ") + "))"
			for _, id := range withFiles {
				args = append(args, id)
			}
		}
		where = append(where, cond)
	}
	args = append(args, limit+1)
	query := "SELECT " + sessionColumns + " FROM sessions s WHERE " + strings.Join(where, " AND ") +
		" ORDER BY s.updated_at DESC, s.id DESC LIMIT ?"
	out, moved, err := s.list(ctx, s.db, query, args)
	if err == nil && moved {
		// A folder moved while it was read: read again where none can move.
		err = s.inTx(ctx, func(tx *sql.Tx) error {
			out, _, err = s.list(ctx, tx, query, args)
			return err
		})
	}
	if err != nil {
		return nil, "", err
	}
	next := ""
	if len(out) > limit {
		out = out[:limit]
		last := out[limit-1]
		b, _ := json.Marshal(session.Cursor{U: last.UpdatedAt.UnixMilli(), ID: last.ID})
		next = base64.RawURLEncoding.EncodeToString(b)
	}
	return out, next, nil
}

// emptyRow is true for a session row that is empty as far as the database
// tells (see session.EmptyAfter): its folder may still hold files.
const emptyRow = `s.message_count = 0 AND s.title_source <> 'user'
	AND NOT EXISTS (SELECT 1 FROM context_items c WHERE c.session_id = s.id AND c.set_name <> 'applet')`

// emptyRowsWithFiles returns the sessions empty by their rows whose folder
// holds a file (or cannot be read), which are not empty.
func (s *Store) emptyRowsWithFiles(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT s.id, s.folder FROM sessions s WHERE "+emptyRow)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id, folder string
		if err := rows.Scan(&id, &folder); err != nil {
			return nil, err
		}
		if s.folderHasFiles(folder) {
			out = append(out, id)
		}
	}
	return out, rows.Err()
}

// folderHasFiles reports whether a session folder's subfolders hold a
// file; true when one cannot be read (a rename in flight): not empty is
// the safe answer.
func (s *Store) folderHasFiles(folder string) bool {
	for _, sub := range session.Subdirs {
		dir := filepath.Join(s.folderPath(folder), sub)
		n := 0
		err := session.WalkFiles(dir, "", 8, func(string, fs.FileInfo) { n++ })
		if n > 0 || err != nil && !missing(dir) {
			return true
		}
	}
	return false
}

// missing reports whether path does not exist.
func missing(path string) bool {
	_, err := os.Lstat(path)
	return errors.Is(err, fs.ErrNotExist)
}

// PruneEmpty deletes the empty sessions with no activity since cutoff,
// but those in keep (see session.Storage).
func (s *Store) PruneEmpty(ctx context.Context, cutoff time.Time, keep []string) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT s.id, s.folder FROM sessions s WHERE s.updated_at < ? AND "+emptyRow, cutoff.UnixMilli())
	if err != nil {
		return nil, err
	}
	type cand struct{ id, folder string }
	var cands []cand
	for rows.Next() {
		var c cand
		if err := rows.Scan(&c.id, &c.folder); err != nil {
			rows.Close()
			return nil, err
		}
		if !slices.Contains(keep, c.id) {
			cands = append(cands, c)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := []string{}
	for _, c := range cands {
		var folder string
		err := s.inTx(ctx, func(tx *sql.Tx) error {
			// Checked where no one writes: the folder, then the row again.
			if s.folderHasFiles(c.folder) {
				return nil
			}
			err := tx.QueryRowContext(ctx, "DELETE FROM sessions AS s WHERE s.id = ? AND s.updated_at < ? AND "+emptyRow+" RETURNING folder",
				c.id, cutoff.UnixMilli()).Scan(&folder)
			if errors.Is(err, sql.ErrNoRows) {
				folder = "" // used meanwhile, or deleted by someone else
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
		s.forget(c.id)
		if err := os.RemoveAll(s.folderPath(folder)); err != nil {
			return out, fmt.Errorf("empty session %s deleted, but its folder could not be removed: %w", c.id, err)
		}
		out = append(out, c.id)
	}
	return out, nil
}

func (s *Store) list(ctx context.Context, q querier, query string, args []any) (out []session.Session, anyMoved bool, err error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	out = []session.Session{}
	for rows.Next() {
		ss, moved, err := s.scanSession(rows)
		if err != nil {
			return nil, false, err
		}
		anyMoved = anyMoved || moved
		out = append(out, *ss)
	}
	return out, anyMoved, rows.Err()
}

// Rename sets a session's title and renames its folder with it: if the
// folder cannot be renamed nothing changes, and if the database update
// fails the folder is renamed back. The session returned is as the rename
// left it.
func (s *Store) Rename(ctx context.Context, id, title string, source session.TitleSource) (*session.Session, error) {
	ss, _, err := s.renameIf(ctx, id, title, source, nil)
	return ss, err
}

// renameIf is Rename, done only if cond (when not nil) accepts the current
// title and source; the check and the rename are one transaction, so a
// title set meanwhile by another process is never overridden by mistake.
func (s *Store) renameIf(ctx context.Context, id, title string, source session.TitleSource, cond func(title string, source session.TitleSource) bool) (*session.Session, bool, error) {
	title, err := session.ValidTitle(title)
	if err != nil {
		return nil, false, err
	}
	ss, changed, restore, err := s.renameTx(ctx, id, title, source, cond)
	if restore {
		// The folder went back, but its history.md may show the new title.
		if herr := s.writeHistory(context.WithoutCancel(ctx), id); herr != nil {
			err = fmt.Errorf("%w (and history.md could not be restored: %v)", err, herr)
		}
	}
	return ss, changed, err
}

func (s *Store) renameTx(ctx context.Context, id, title string, source session.TitleSource, cond func(string, session.TitleSource) bool) (ss *session.Session, changed, restore bool, err error) {
	tx, end, err := s.begin(ctx)
	if err != nil {
		return nil, false, false, err
	}
	defer end()
	var (
		folder, curTitle string
		curSource        session.TitleSource
		created          int64
	)
	if err := tx.QueryRowContext(ctx, "SELECT folder, created_at, title, title_source FROM sessions WHERE id = ?", id).Scan(&folder, &created, &curTitle, &curSource); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, false, false, session.NotFound(id)
		}
		return nil, false, false, err
	}
	if cond != nil && !cond(curTitle, curSource) {
		return nil, false, false, nil
	}
	newFolder := session.FolderName(session.FromMillis(created), title, id)
	if err := s.findFolder(ctx, tx, folder); err != nil {
		return nil, false, false, err
	}
	if newFolder != folder {
		if err := os.Rename(s.folderPath(folder), s.folderPath(newFolder)); err != nil {
			return nil, false, false, fmt.Errorf("renaming the session folder: %w", err)
		}
	}
	_, err = tx.ExecContext(ctx, "UPDATE sessions SET title = ?, title_source = ?, folder = ? WHERE id = ?", title, source, newFolder, id)
	if err == nil {
		err = s.touch(ctx, tx, id)
	}
	if err == nil {
		err = s.writeHistoryTx(ctx, tx, id)
	}
	if err == nil {
		ss, _, err = s.get(ctx, tx, id)
	}
	if err == nil {
		err = tx.Commit()
	}
	if err != nil && newFolder != folder {
		// Put the folder back: the database still names the old one. The
		// write lock is still held, so nothing was written into it meanwhile.
		if rerr := os.Rename(s.folderPath(newFolder), s.folderPath(folder)); rerr != nil {
			return nil, false, false, fmt.Errorf("%w (and the folder could not be renamed back: %v)", err, rerr)
		}
		return nil, false, true, err
	}
	if err != nil {
		return nil, false, false, err
	}
	return ss, true, false, nil
}

// SetTitleIfAuto replaces an "auto" title with one the model suggested.
// It never overrides a user's or an earlier model title.
func (s *Store) SetTitleIfAuto(ctx context.Context, id, title string) (bool, error) {
	return s.setTitleIf(ctx, id, title, session.TitleModel, session.TitleIsAuto)
}

// SetAutoTitle sets an "auto" title (from the first message) if the title
// is still the default one.
func (s *Store) SetAutoTitle(ctx context.Context, id, title string) (bool, error) {
	return s.setTitleIf(ctx, id, title, session.TitleAuto, session.TitleIsDefault)
}

// setTitleIf renames the session if cond accepts its title and source. A
// read answers the common "no" without the write lock; the rename checks
// cond again inside its transaction.
func (s *Store) setTitleIf(ctx context.Context, id, title string, source session.TitleSource, cond func(string, session.TitleSource) bool) (bool, error) {
	var cur string
	var src session.TitleSource
	if err := s.db.QueryRowContext(ctx, "SELECT title, title_source FROM sessions WHERE id = ?", id).Scan(&cur, &src); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return false, session.NotFound(id)
		}
		return false, err
	}
	if !cond(cur, src) {
		return false, nil
	}
	_, changed, err := s.renameIf(ctx, id, title, source, cond)
	return changed, err
}

// Delete removes a session, its messages, context and folder.
func (s *Store) Delete(ctx context.Context, id string) error {
	var folder string
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, "SELECT folder FROM sessions WHERE id = ?", id).Scan(&folder); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return session.NotFound(id)
			}
			return err
		}
		_, err := tx.ExecContext(ctx, "DELETE FROM sessions WHERE id = ?", id)
		return err
	})
	if err != nil {
		return err
	}
	s.forget(id)
	if err := os.RemoveAll(s.folderPath(folder)); err != nil {
		return fmt.Errorf("session deleted, but its folder could not be removed: %w", err)
	}
	return nil
}

// AllSessions returns every session of the store, oldest first (what
// postgres.Copy reads, see postgres.Source).
func (s *Store) AllSessions(ctx context.Context) ([]session.Session, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT "+sessionColumns+" FROM sessions s ORDER BY s.created_at, s.id")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var all []session.Session
	for rows.Next() {
		ss, _, err := s.scanSession(rows)
		if err != nil {
			return nil, err
		}
		all = append(all, *ss)
	}
	return all, rows.Err()
}
