package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/ctxls/ctxls/session"
)

// AddFile copies r into the session's sources/ as name, replacing a file of
// the same name (a symbolic link there is replaced, never written through).
// Over MaxFileSize it fails with ErrTooLarge and leaves nothing behind.
// The copy is made in the data directory's tmp/ and moved into the folder
// inside the write lock (see inFolder).
func (s *Store) AddFile(ctx context.Context, sessionID, name string, r io.Reader) (*session.FileInfo, error) {
	if err := session.ValidName(name); err != nil {
		return nil, err
	}
	if _, err := s.folderOf(ctx, sessionID); err != nil {
		return nil, err // fail before copying
	}
	tmp, err := os.CreateTemp(filepath.Join(s.dir, "tmp"), ".upload-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name()) // once moved, a no-op
	n, err := io.Copy(tmp, io.LimitReader(r, session.MaxFileSize+1))
	if err == nil && n <= session.MaxFileSize {
		// On disk before the rename makes it the file: after a power cut
		// sources/ holds the whole old file or the whole new one.
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > session.MaxFileSize {
		err = fmt.Errorf("%w: %q is more than %s; the limit is %s", session.ErrTooLarge, name, session.Bytes(session.MaxFileSize), session.SizeLimit())
	}
	if err != nil {
		return nil, err
	}
	err = s.inFolder(ctx, sessionID, func(tx *sql.Tx, folder string) error {
		dir, err := session.SubdirIn(folder, "sources", true)
		if err != nil {
			return err
		}
		if fi, err := os.Lstat(filepath.Join(dir, name)); err == nil && fi.IsDir() {
			return session.Invalidf("%q is a directory in sources/", name)
		}
		if err := os.Rename(tmp.Name(), filepath.Join(dir, name)); err != nil {
			return err
		}
		return s.touch(ctx, tx, sessionID)
	})
	if err != nil {
		return nil, err
	}
	return &session.FileInfo{Name: name, Size: n}, nil
}

// AddFileFromPath copies a regular file into sources/ under its base name.
func (s *Store) AddFileFromPath(ctx context.Context, sessionID, path string) (*session.FileInfo, error) {
	return session.AddFileFromPath(ctx, s, sessionID, path)
}

// ListFiles lists the files of a session subfolder (default sources),
// sorted, hidden names left out. Only files are listed: a folder is not a
// file. In sources/ (the user's files, added one by one) only the files
// directly inside are listed; in results/, scripts/ and data/ the files in
// folders below are listed too, as "sub/name". Symbolic links to folders
// are neither listed nor followed.
func (s *Store) ListFiles(ctx context.Context, sessionID, sub string) ([]string, error) {
	sub, err := session.CheckSubdir(sub)
	if err != nil {
		return nil, err
	}
	folder, err := s.folderOf(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	names, err := listIn(folder, sub, false)
	if errors.Is(err, fs.ErrNotExist) {
		// The folder moved (a rename in flight): look again where it cannot.
		err = s.inFolder(ctx, sessionID, func(_ *sql.Tx, folder string) error {
			names, err = listIn(folder, sub, true)
			return err
		})
	}
	return names, err
}

func listIn(folder, sub string, inTx bool) ([]string, error) {
	dir, err := session.SubdirIn(folder, sub, inTx)
	if err != nil {
		return nil, err
	}
	depth := 0
	if sub != "sources" {
		depth = session.MaxOutputDepth
	}
	names := []string{}
	if err := session.WalkFiles(dir, "", depth, func(name string, _ fs.FileInfo) { names = append(names, name) }); err != nil {
		return nil, err
	}
	slices.Sort(names)
	return names, nil
}

// RemoveFile removes a file (or a symbolic link, never its target) from
// sources/.
func (s *Store) RemoveFile(ctx context.Context, sessionID, name string) error {
	if err := session.ValidName(name); err != nil {
		return err
	}
	return s.inFolder(ctx, sessionID, func(tx *sql.Tx, folder string) error {
		dir, err := session.SubdirIn(folder, "sources", true)
		if err != nil {
			return err
		}
		path := filepath.Join(dir, name)
		fi, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("file %q is not in the session's sources: %w", name, session.ErrNotFound)
		}
		if err != nil {
			return err
		}
		if fi.IsDir() {
			return session.Invalidf("%q is a directory", name)
		}
		if err := os.Remove(path); err != nil {
			return err
		}
		return s.touch(ctx, tx, sessionID)
	})
}

// findFolder makes sure the session folder the database names (name) is on
// disk: a folder a killed rename left under another name is moved back. It
// must run in a write transaction (tx).
func (s *Store) findFolder(ctx context.Context, tx *sql.Tx, name string) error {
	path := s.folderPath(name)
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		return nil // there (or unreadable: the caller's own access reports it)
	}
	entries, err := os.ReadDir(filepath.Join(s.dir, "sessions"))
	if err != nil {
		return err
	}
	var found []string
	for _, e := range entries {
		if e.IsDir() && session.SameSession(e.Name(), name) {
			var n int
			if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM sessions WHERE folder = ?", e.Name()).Scan(&n); err != nil {
				return err
			}
			if n == 0 {
				found = append(found, e.Name())
			}
		}
	}
	if len(found) != 1 {
		return nil // nothing to move back: the folder is made again on the next write
	}
	if err := os.Rename(s.folderPath(found[0]), path); err != nil {
		return fmt.Errorf("moving the half-renamed session folder %s back to %s: %w", found[0], name, err)
	}
	return nil
}

// recoverFolders repairs what killed processes left in the data directory:
// half-renamed and half-created session folders (see above) and uploads in
// tmp/ not written for staleUpload. Open calls it.
func (s *Store) recoverFolders(ctx context.Context) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, "SELECT folder FROM sessions")
		if err != nil {
			return err
		}
		named := map[string]bool{}
		for rows.Next() {
			var f string
			if err := rows.Scan(&f); err != nil {
				rows.Close()
				return err
			}
			named[f] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		entries, err := os.ReadDir(filepath.Join(s.dir, "sessions"))
		if err != nil {
			return err
		}
		onDisk := map[string]bool{}
		for _, e := range entries {
			onDisk[e.Name()] = true
		}
		moved := false
		for f := range named {
			if !onDisk[f] {
				if err := s.findFolder(ctx, tx, f); err != nil {
					return err
				}
				moved = true
			}
		}
		if moved {
			if entries, err = os.ReadDir(filepath.Join(s.dir, "sessions")); err != nil {
				return err
			}
		}
		for _, e := range entries {
			path := s.folderPath(e.Name())
			if e.IsDir() && !named[e.Name()] && session.FolderPattern().MatchString(e.Name()) && session.FolderUnused(path) {
				os.RemoveAll(path) // best effort: it is tried again next time
			}
		}
		return session.RemoveStaleTmp(filepath.Join(s.dir, "tmp"), s.now())
	})
}
