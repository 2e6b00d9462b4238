package postgres

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/session"
	"github.com/jackc/pgx/v5"
)

// The PostgreSQL store keeps session files in the database and mirrors
// them into this machine's session folders, which are named as in the
// SQLite store. Each folder holds a manifest of what the mirror wrote, so
// a file removed elsewhere is removed here too, while a file a person put
// into the folder by hand is left alone (and, not being in the database,
// is not listed). Folders are changed under the data directory's write
// lock, so this machine's daemons take turns.

// mirrorManifest is the mirror's record in a session folder (hidden: no
// listing shows it).
const mirrorManifest = ".ctxls-mirror.json"

type manifest struct {
	// ID is the session's, so a folder can be found when its session is
	// gone from the database.
	ID string `json:"id"`
	// Files: "sub/name" → the database's updated_at of the copy here.
	Files map[string]int64 `json:"files"`
	// History: the session's updated_at that history.md shows.
	History int64 `json:"history"`
}

func readManifest(folder string) *manifest {
	m := &manifest{}
	if b, err := os.ReadFile(filepath.Join(folder, mirrorManifest)); err == nil {
		json.Unmarshal(b, m)
	}
	if m.Files == nil {
		m.Files = map[string]int64{}
	}
	return m
}

func (s *Store) writeManifest(folder string, m *manifest) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return s.writeStaged(filepath.Join(folder, mirrorManifest), bytes.NewReader(b))
}

// placeFolder makes sure a session's mirror folder is where its name says:
// a folder of the same session under an older name (renamed elsewhere) is
// moved there, else one is made. The local lock must be held. A folder it
// makes is recorded as the session's, then the session is looked up: one
// deleted meanwhile (on another machine, its notification handled before
// this folder existed) leaves no folder behind.
func (s *Store) placeFolder(ctx context.Context, id, name string) (string, error) {
	path := s.folderPath(name)
	if fi, err := os.Lstat(path); err == nil {
		if !fi.IsDir() {
			return "", fmt.Errorf("%w: %s is not a directory; refusing to use it", session.ErrInvalid, path)
		}
		return path, nil
	}
	entries, err := os.ReadDir(filepath.Join(s.dir, "sessions"))
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		// Its manifest says whose it is: a folder that only ends like the
		// session's name (made by someone else, say) is not taken.
		if e.IsDir() && session.SameSession(e.Name(), name) && readManifest(s.folderPath(e.Name())).ID == id {
			if err := os.Rename(s.folderPath(e.Name()), path); err != nil {
				return "", fmt.Errorf("renaming the session folder: %w", err)
			}
			return path, nil
		}
	}
	for _, d := range session.Subdirs {
		if err := os.MkdirAll(filepath.Join(path, d), 0o700); err != nil {
			return "", err
		}
	}
	if err := s.writeManifest(path, &manifest{ID: id, Files: map[string]int64{}}); err != nil {
		return "", err
	}
	if err := s.exists(ctx, s.pool, id); err != nil {
		os.RemoveAll(path)
		return "", err
	}
	return path, nil
}

// sweepMirror removes the mirror folders of sessions gone from the
// database (deleted, or no longer shared with this role) while this
// machine was not listening: the folders whose manifest names a session
// the role cannot see. Folders without a manifest (made by hand, or the
// SQLite store's in a data directory both used) are left alone.
func (s *Store) sweepMirror(ctx context.Context) error {
	entries, err := os.ReadDir(filepath.Join(s.dir, "sessions"))
	if err != nil {
		return err
	}
	byID := map[string][]string{}
	var ids []string
	for _, e := range entries {
		if !e.IsDir() || !session.FolderPattern().MatchString(e.Name()) {
			continue
		}
		if id := readManifest(s.folderPath(e.Name())).ID; id != "" {
			if byID[id] == nil {
				ids = append(ids, id)
			}
			byID[id] = append(byID[id], e.Name())
		}
	}
	if len(ids) == 0 {
		return nil
	}
	rows, err := s.pool.Query(ctx, "SELECT id FROM sessions WHERE id = ANY($1)", ids)
	if err != nil {
		return err
	}
	there, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	for _, id := range there {
		delete(byID, id)
	}
	return s.withLocal(ctx, func() error {
		for _, names := range byID {
			for _, name := range names {
				os.RemoveAll(s.folderPath(name)) // best effort: tried again at the next start
			}
		}
		return nil
	})
}

type pgFile struct {
	sub, name string
	updated   int64
	size      int64
}

func (f pgFile) key() string { return f.sub + "/" + f.name }

// syncFolder brings a session's mirror folder up to date with the
// database: placed under its current name, files fetched that changed,
// files removed elsewhere removed, and history.md queued for rewriting
// when the session changed elsewhere.
//
// files are the session's files in the database, read with ss (rowFiles).
func (s *Store) syncFolder(ctx context.Context, ss *session.Session, files []pgFile) error {
	_, err := s.syncFiles(ctx, ss, files)
	return err
}

// syncFiles is syncFolder, returning the files it fetched or removed.
func (s *Store) syncFiles(ctx context.Context, ss *session.Session, files []pgFile) ([]session.FileChange, error) {
	var done []session.FileChange
	stale := false
	err := s.withLocal(ctx, func() error {
		folder, err := s.placeFolder(ctx, ss.ID, filepath.Base(ss.Folder))
		if err != nil {
			return err
		}
		m := readManifest(folder)
		changed := m.ID != ss.ID
		m.ID = ss.ID
		inDB := make(map[string]bool, len(files))
		for _, f := range files {
			inDB[f.key()] = true
			path := filepath.Join(folder, f.sub, filepath.FromSlash(f.name))
			if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() && fi.Size() == f.size && m.Files[f.key()] == f.updated {
				continue
			}
			var content []byte
			err := s.pool.QueryRow(ctx, "SELECT content, updated_at FROM files WHERE session_id = $1 AND subdir = $2 AND name = $3", ss.ID, f.sub, f.name).Scan(&content, &f.updated)
			if errors.Is(err, pgx.ErrNoRows) {
				continue // removed meanwhile: the next sync removes it here
			}
			if err != nil {
				return err
			}
			if err := s.writeMirrorFile(folder, f.sub, f.name, content); err != nil {
				return err
			}
			m.Files[f.key()], changed = f.updated, true
			done = append(done, session.FileChange{Subdir: f.sub, Name: f.name, Size: int64(len(content))})
		}
		for key := range m.Files {
			if !inDB[key] {
				os.Remove(filepath.Join(folder, filepath.FromSlash(key)))
				delete(m.Files, key)
				sub, name, _ := strings.Cut(key, "/")
				done = append(done, session.FileChange{Subdir: sub, Name: name, Removed: true})
				changed = true
			}
		}
		stale = m.History != ss.UpdatedAt.UnixMilli()
		if changed {
			return s.writeManifest(folder, m)
		}
		return nil
	})
	if err != nil || !stale {
		return done, err
	}
	return done, s.history.Later(ctx, ss.ID)
}

// removeMirror removes the mirror folder of a session that is gone from
// the database (deleted elsewhere, or no longer shared with this role):
// the folder whose manifest names it.
func (s *Store) removeMirror(ctx context.Context, id string) error {
	if len(id) < 6 {
		return nil
	}
	return s.withLocal(ctx, func() error {
		entries, err := os.ReadDir(filepath.Join(s.dir, "sessions"))
		if err != nil {
			return err
		}
		for _, e := range entries {
			if !e.IsDir() || !strings.HasSuffix(e.Name(), "--"+id[:6]) {
				continue
			}
			path := s.folderPath(e.Name())
			if readManifest(path).ID == id {
				if err := os.RemoveAll(path); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// writeMirrorFile writes one file of the mirror, making its folders; a
// symbolic link or a file on the way is refused (outputTarget's rules).
func (s *Store) writeMirrorFile(folder, sub, name string, content []byte) error {
	target, _, err := session.OutputTarget(folder, sub, name, true)
	if err != nil {
		return err
	}
	return s.writeStaged(target, bytes.NewReader(content))
}

// writeStaged writes a file of the mirror through a temporary file in the
// data directory's tmp/ and a rename, so a daemon killed mid-write leaves
// nothing in a session folder (Open clears tmp/ of old ones).
func (s *Store) writeStaged(path string, data io.WriterTo) error {
	tmp, err := os.CreateTemp(filepath.Join(s.dir, "tmp"), ".mirror-*")
	if err != nil {
		return err
	}
	_, err = data.WriteTo(tmp)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// localTarget checks, before the database is written, that sub/name can
// be written in the session's mirror folder (no symbolic link or file on
// the way, no folder there), making its folders, and says whether a file
// is there already (put there by hand, or by an older mirror).
func (s *Store) localTarget(ctx context.Context, id, sub, name string) (exists bool, err error) {
	var folder string
	if err := s.pool.QueryRow(ctx, "SELECT folder FROM sessions WHERE id = $1", id).Scan(&folder); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return false, session.NotFound(id)
		}
		return false, err
	}
	err = s.withLocal(ctx, func() error {
		path, err := s.placeFolder(ctx, id, folder)
		if err != nil {
			return err
		}
		_, exists, err = session.OutputTarget(path, sub, name, true)
		return err
	})
	return exists, err
}

// mirrorWrote records in the manifest a file written into the mirror (or
// removed, with updated < 0) by this store.
func (s *Store) mirrorWrote(ctx context.Context, id, sub, name string, content []byte, updated int64) error {
	var folder string
	if err := s.pool.QueryRow(ctx, "SELECT folder FROM sessions WHERE id = $1", id).Scan(&folder); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return session.NotFound(id)
		}
		return err
	}
	return s.withLocal(ctx, func() error {
		path, err := s.placeFolder(ctx, id, folder)
		if err != nil {
			return err
		}
		m := readManifest(path)
		m.ID = id
		key := sub + "/" + name
		if updated < 0 {
			os.Remove(filepath.Join(path, sub, filepath.FromSlash(name)))
			delete(m.Files, key)
		} else {
			if content != nil {
				if err := s.writeMirrorFile(path, sub, name, content); err != nil {
					return err
				}
			}
			m.Files[key] = updated
		}
		return s.writeManifest(path, m)
	})
}

// putFile stores a file (inserted or replaced) and bumps the session's
// activity; it returns the file's new updated_at and whether it replaced
// one. Conflicts with folders are refused as on disk: a file where a
// folder of the path should be, or a folder (files below) at the path.
func (s *Store) putFile(ctx context.Context, id, sub, name string, content []byte) (updated int64, replaced bool, err error) {
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if err := s.touch(ctx, tx, id); err != nil {
			return err
		}
		if err := s.checkFilePath(ctx, tx, id, sub, name); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `INSERT INTO files (session_id, subdir, name, content, updated_at) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (session_id, subdir, name) DO UPDATE SET content = EXCLUDED.content, updated_at = GREATEST(files.updated_at + 1, EXCLUDED.updated_at)
			RETURNING updated_at, xmax <> 0`, id, sub, name, content, s.millis()).Scan(&updated, &replaced)
	})
	return updated, replaced, err
}

// checkFilePath refuses sub/name when a file stands where one of its
// folders would be, or files stand below it as a folder.
func (s *Store) checkFilePath(ctx context.Context, q pgQuerier, id, sub, name string) error {
	parts := strings.Split(name, "/")
	var prefixes []string
	for i := 1; i < len(parts); i++ {
		prefixes = append(prefixes, strings.Join(parts[:i], "/"))
	}
	var file string
	err := q.QueryRow(ctx, "SELECT name FROM files WHERE session_id = $1 AND subdir = $2 AND name = ANY($3) ORDER BY length(name) LIMIT 1", id, sub, prefixes).Scan(&file)
	switch {
	case err == nil:
		return session.Invalidf("%s/%s: %q is a file, not a folder", sub, name, file[strings.LastIndex(file, "/")+1:])
	case !errors.Is(err, pgx.ErrNoRows):
		return err
	}
	var folder bool
	escaped := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(name)
	if err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM files WHERE session_id = $1 AND subdir = $2 AND name LIKE $3 ESCAPE '\')`, id, sub, escaped+"/%").Scan(&folder); err != nil {
		return err
	}
	if folder {
		return session.Invalidf("%s/%s is a folder", sub, name)
	}
	return nil
}

// AddFile stores a file in the session's sources/ and its mirror.
func (s *Store) AddFile(ctx context.Context, sessionID, name string, r io.Reader) (*session.FileInfo, error) {
	if err := session.ValidName(name); err != nil {
		return nil, err
	}
	if err := s.exists(ctx, s.pool, sessionID); err != nil {
		return nil, err // fail before reading
	}
	content, err := io.ReadAll(io.LimitReader(r, session.MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(content) > session.MaxFileSize {
		return nil, fmt.Errorf("%w: %q is more than %s; the limit is %s", session.ErrTooLarge, name, session.Bytes(session.MaxFileSize), session.SizeLimit())
	}
	if _, err := s.localTarget(ctx, sessionID, "sources", name); err != nil {
		return nil, err
	}
	updated, _, err := s.putFile(ctx, sessionID, "sources", name, content)
	if err != nil {
		return nil, err
	}
	if err := s.mirrorWrote(ctx, sessionID, "sources", name, content, updated); err != nil {
		return nil, err
	}
	return &session.FileInfo{Name: name, Size: int64(len(content))}, nil
}

// AddFileFromPath copies a regular file into sources/ under its base name.
func (s *Store) AddFileFromPath(ctx context.Context, sessionID, path string) (*session.FileInfo, error) {
	return session.AddFileFromPath(ctx, s, sessionID, path)
}

// ListFiles lists the files of one of the session's folders ("" is
// sources/), sorted, as "sub/name" below results/, scripts/ and data/;
// the mirror is brought up to date first, so the names listed can be read
// there.
func (s *Store) ListFiles(ctx context.Context, sessionID, sub string) ([]string, error) {
	sub, err := session.CheckSubdir(sub)
	if err != nil {
		return nil, err
	}
	_, files, err := s.get(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	return namesIn(files, sub), nil
}

// namesIn lists the names of files in one of the session's folders,
// sorted (never nil).
func namesIn(files []pgFile, sub string) []string {
	names := []string{}
	for _, f := range files {
		if f.sub == sub {
			names = append(names, f.name)
		}
	}
	slices.Sort(names)
	return names
}

// RemoveFile removes a file from sources/.
func (s *Store) RemoveFile(ctx context.Context, sessionID, name string) error {
	if err := session.ValidName(name); err != nil {
		return err
	}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if err := s.touch(ctx, tx, sessionID); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, "DELETE FROM files WHERE session_id = $1 AND subdir = 'sources' AND name = $2", sessionID, name)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("file %q is not in the session's sources: %w", name, session.ErrNotFound)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return s.mirrorWrote(ctx, sessionID, "sources", name, nil, -1)
}

// WriteOutput stores a file the model made (see sqlite.Store.WriteOutput for the
// path rules) and mirrors it.
func (s *Store) WriteOutput(ctx context.Context, sessionID, path string, content []byte) (*session.Written, error) {
	sub, name, err := session.ParseOutputPath(path)
	if err != nil {
		return nil, err
	}
	if n := int64(len(content)); n > session.MaxFileSize {
		return nil, fmt.Errorf("%w: %s/%s would be %s; the limit is %s", session.ErrTooLarge, sub, name, session.Bytes(n), session.SizeLimit())
	}
	here, err := s.localTarget(ctx, sessionID, sub, name)
	if err != nil {
		return nil, err
	}
	updated, replaced, err := s.putFile(ctx, sessionID, sub, name, content)
	if err != nil {
		return nil, err
	}
	if err := s.mirrorWrote(ctx, sessionID, sub, name, content, updated); err != nil {
		return nil, err
	}
	// A file put into the folder by hand is replaced too: say so.
	return &session.Written{Subdir: sub, Name: name, Size: int64(len(content)), Replaced: replaced || here}, nil
}

// OutputTarget checks path as WriteOutput does and returns the mirror path
// a front door writes to; OutputWritten then stores what it wrote.
func (s *Store) OutputTarget(ctx context.Context, sessionID, path string, size int64) (string, *session.Written, error) {
	sub, name, err := session.ParseOutputPath(path)
	if err != nil {
		return "", nil, err
	}
	if size > session.MaxFileSize {
		return "", nil, fmt.Errorf("%w: %s/%s would be %s; the limit is %s", session.ErrTooLarge, sub, name, session.Bytes(size), session.SizeLimit())
	}
	if err := s.checkFilePath(ctx, s.pool, sessionID, sub, name); err != nil {
		return "", nil, err
	}
	ss, err := s.Get(ctx, sessionID)
	if err != nil {
		return "", nil, err
	}
	w := &session.Written{Subdir: sub, Name: name, Size: size}
	var target string
	err = s.withLocal(ctx, func() error {
		var err error
		target, w.Replaced, err = session.OutputTarget(ss.Folder, sub, name, false)
		return err
	})
	if err != nil {
		return "", nil, err
	}
	return target, w, nil
}

// OutputWritten stores the file a front door wrote at OutputTarget's path.
func (s *Store) OutputWritten(ctx context.Context, sessionID, path string, content []byte) error {
	sub, name, err := session.ParseOutputPath(path)
	if err != nil {
		return err
	}
	if n := int64(len(content)); n > session.MaxFileSize {
		return fmt.Errorf("%w: %s/%s would be %s; the limit is %s", session.ErrTooLarge, sub, name, session.Bytes(n), session.SizeLimit())
	}
	updated, _, err := s.putFile(ctx, sessionID, sub, name, content)
	if err != nil {
		return err
	}
	return s.mirrorWrote(ctx, sessionID, sub, name, nil, updated) // the file is there already
}

// writeHistory renders history.md into the mirror folder.
func (s *Store) writeHistory(ctx context.Context, id string) error {
	ss, err := s.row(ctx, s.pool, id)
	if err != nil {
		return err
	}
	sets, err := s.context(ctx, s.pool, id)
	if err != nil {
		return err
	}
	text, err := s.history.Cache.Render(ss, sets, func(after int64) ([]session.Message, error) {
		return s.queryMessages(ctx, s.pool, "session_id = $1 AND id > $2 ORDER BY id", id, after)
	})
	if err != nil {
		return err
	}
	return s.withLocal(ctx, func() error {
		folder, err := s.placeFolder(ctx, id, filepath.Base(ss.Folder))
		if err != nil {
			return err
		}
		if err := s.writeStaged(filepath.Join(folder, "history.md"), text); err != nil {
			return err
		}
		m := readManifest(folder)
		m.ID, m.History = ss.ID, ss.UpdatedAt.UnixMilli()
		return s.writeManifest(folder, m)
	})
}

// FlushHistory writes every pending history.md now.
func (s *Store) FlushHistory() error { return s.history.Flush() }

// Export writes the session as "markdown" or "json" into its mirror folder
// and returns the file's path and content.
func (s *Store) Export(ctx context.Context, id, format string) (string, string, error) {
	name, content, err := session.ExportOf(ctx, s, id, format)
	if err != nil {
		return "", "", err
	}
	ss, err := s.row(ctx, s.pool, id)
	if err != nil {
		return "", "", err
	}
	var path string
	err = s.withLocal(ctx, func() error {
		folder, err := s.placeFolder(ctx, id, filepath.Base(ss.Folder))
		if err != nil {
			return err
		}
		path = filepath.Join(folder, name)
		return s.writeStaged(path, strings.NewReader(content))
	})
	if err != nil {
		return "", "", err
	}
	return path, content, nil
}

// DiskUsage measures the data directory: the mirror folders, the lock and
// the logs. The database's own size is PostgreSQL's (Database is 0).
func (s *Store) DiskUsage(ctx context.Context) (*session.DiskUsage, error) {
	rows, err := s.pool.Query(ctx, "SELECT id, title, folder FROM sessions")
	if err != nil {
		return nil, err
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (api.FolderUsage, error) {
		var su api.FolderUsage
		return su, r.Scan(&su.ID, &su.Title, &su.Folder)
	})
	if err != nil {
		return nil, err
	}
	u := &session.DiskUsage{Sessions: []api.FolderUsage{}}
	var inSessions int64
	for _, su := range list {
		su.Folder = s.folderPath(su.Folder)
		su.Size = session.DirSize(su.Folder)
		inSessions += su.Size
		u.Sessions = append(u.Sessions, su)
	}
	slices.SortStableFunc(u.Sessions, func(a, b api.FolderUsage) int { return cmp.Compare(b.Size, a.Size) })
	u.Total = session.DirSize(s.dir)
	u.Other = max(0, u.Total-inSessions)
	return u, nil
}

// EnforceSoftLimit keeps the data directory under limit bytes as the
// SQLite store does: files in data/ folders are removed, least recently
// written first, until it is under. Only files mirrored here count (they
// are what fills this machine's disk), and only of this role's own
// sessions; each goes from the database and from every machine's mirror.
func (s *Store) EnforceSoftLimit(ctx context.Context, limit int64) (*session.Cleanup, error) {
	c := &session.Cleanup{Limit: limit, Removed: []session.Removed{}}
	if c.Before = session.DirSize(s.dir); c.Before <= limit {
		c.After = c.Before
		return c, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT f.session_id, s.title, s.folder, f.name, octet_length(f.content), f.updated_at
		FROM files f JOIN sessions s ON s.id = f.session_id
		WHERE f.subdir = 'data' AND s.owner = session_user ORDER BY f.updated_at, f.session_id, f.name`)
	if err != nil {
		return nil, err
	}
	type candidate struct {
		session.Removed
		folder  string
		updated int64
	}
	cands, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (candidate, error) {
		var x candidate
		err := r.Scan(&x.SessionID, &x.Title, &x.folder, &x.Name, &x.Size, &x.updated)
		x.ModTime = time.UnixMilli(x.updated).UTC()
		return x, err
	})
	if err != nil {
		return nil, err
	}
	total := c.Before
	for _, f := range cands {
		if total <= limit {
			break
		}
		local := filepath.Join(s.folderPath(f.folder), "data", filepath.FromSlash(f.Name))
		fi, err := os.Lstat(local)
		if err != nil || !fi.Mode().IsRegular() {
			continue // not here: removing it frees nothing on this machine
		}
		tag, err := s.pool.Exec(ctx, "DELETE FROM files WHERE session_id = $1 AND subdir = 'data' AND name = $2 AND updated_at = $3", f.SessionID, f.Name, f.updated)
		if err != nil {
			if len(c.Removed) == 0 {
				return nil, err
			}
			c.After = total
			return c, err
		}
		if tag.RowsAffected() == 0 {
			continue // written again meanwhile: no longer the oldest
		}
		if err := s.mirrorWrote(ctx, f.SessionID, "data", f.Name, nil, -1); err != nil && !errors.Is(err, session.ErrNotFound) {
			c.After = total
			return c, err
		}
		dataDir := filepath.Join(s.folderPath(f.folder), "data")
		for dir := filepath.Dir(local); dir != dataDir && strings.HasPrefix(dir, dataDir); dir = filepath.Dir(dir) {
			if os.Remove(dir) != nil {
				break // not empty
			}
		}
		total -= fi.Size()
		c.Removed = append(c.Removed, f.Removed)
	}
	c.After = total
	return c, nil
}

// Search finds sessions by title and messages by content with PostgreSQL's
// full-text search: all words must match, the last one as a prefix. Title
// hits come first, then messages by rank among the searchWindow most
// recent matches, the newer first among equals; snippets mark the matched
// words with «».
//
// Messages are searched by the database function search_messages
// (migrations/0006_search_index.sql): under Row-Level Security a role's
// own query could not use the index, and the function reads the newest
// messages first, as the SQLite store's FTS5 does.
func (s *Store) Search(ctx context.Context, query string, limit int) ([]session.Hit, error) {
	limit, err := session.PageLimit(limit, 20, 200)
	if err != nil {
		return nil, err
	}
	return s.search(ctx, query, limit, session.SearchWindow)
}

// search is Search ranking the window most recent matching messages.
func (s *Store) search(ctx context.Context, query string, limit, window int) ([]session.Hit, error) {
	hits := []session.Hit{}
	words := searchWords(query)
	if len(words) == 0 {
		return hits, nil
	}
	tsq := tsQuery(words)
	rows, err := s.pool.Query(ctx, `SELECT s.id, s.title, ts_headline('ctxls', s.title, q, `+headline+`)
		FROM sessions s, to_tsquery('ctxls', $1) q
		WHERE s.title_tsv @@ q ORDER BY ts_rank(s.title_tsv, q) DESC, s.updated_at DESC LIMIT $2`, tsq, limit)
	if err != nil {
		return nil, err
	}
	titles, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (session.Hit, error) {
		var h session.Hit
		return h, r.Scan(&h.SessionID, &h.Title, &h.Snippet)
	})
	if err != nil {
		return nil, err
	}
	hits = append(hits, titles...)
	if len(hits) >= limit {
		return hits, nil
	}
	rows, err = s.pool.Query(ctx, `SELECT r.id, r.session_id, s.title, r.role, ts_headline('ctxls', r.content, q, `+headline+`)
		FROM to_tsquery('ctxls', $1) q, search_messages(q, $2, $3, $4) r JOIN sessions s ON s.id = r.session_id
		ORDER BY r.rank DESC, r.id DESC`, tsq, words, window, limit-len(hits))
	if err != nil {
		return nil, err
	}
	msgs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (session.Hit, error) {
		var h session.Hit
		return h, r.Scan(&h.MessageID, &h.SessionID, &h.Title, &h.Role, &h.Snippet)
	})
	if err != nil {
		return nil, err
	}
	return append(hits, msgs...), nil
}

// headline is how ts_headline marks a hit: the matched words in «», one
// fragment of 6 to 16 words.
const headline = `'StartSel=«, StopSel=», MaxWords=16, MinWords=6, ShortWord=0, MaxFragments=1, FragmentDelimiter=…'`

// searchWords is what a search looks for: the runs of letters and digits
// of the query, lower-cased. Nothing of the input is tsquery syntax.
func searchWords(q string) []string {
	return strings.FieldsFunc(strings.ToLower(q), func(r rune) bool { return !isWordRune(r) })
}

// tsQuery turns words into a tsquery for the ctxls configuration: each a
// quoted lexeme that must match, the last one a prefix.
func tsQuery(words []string) string {
	if len(words) == 0 {
		return ""
	}
	terms := make([]string, len(words))
	for i, w := range words {
		terms[i] = "'" + w + "'"
	}
	terms[len(terms)-1] += ":*"
	return strings.Join(terms, " & ")
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
