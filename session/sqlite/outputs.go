package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ctxls/ctxls/session"
)

// WriteOutput writes content into the session's results/, scripts/ or
// data/ at path (see ParseOutputPath), making the folders below as needed.
// An existing file is replaced (a symbolic link there is replaced as a
// link, never written through); a folder, or a symbolic link or anything
// but a real folder on the way, is refused. Over MaxFileSize it fails with
// ErrTooLarge. The content is staged in the data directory's tmp/ and moved
// into place inside the write lock (see inFolder): a reader sees the whole
// old file or the whole new one, and a rename cannot move the folder
// meanwhile.
func (s *Store) WriteOutput(ctx context.Context, sessionID, path string, content []byte) (*session.Written, error) {
	sub, name, err := session.ParseOutputPath(path)
	if err != nil {
		return nil, err
	}
	if n := int64(len(content)); n > session.MaxFileSize {
		return nil, fmt.Errorf("%w: %s/%s would be %s; the limit is %s", session.ErrTooLarge, sub, name, session.Bytes(n), session.SizeLimit())
	}
	if _, err := s.folderOf(ctx, sessionID); err != nil {
		return nil, err // fail before writing
	}
	tmp, err := os.CreateTemp(filepath.Join(s.dir, "tmp"), ".output-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name()) // once moved, a no-op
	_, err = tmp.Write(content)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	w := &session.Written{Subdir: sub, Name: name, Size: int64(len(content))}
	err = s.inFolder(ctx, sessionID, func(tx *sql.Tx, folder string) error {
		target, replaced, err := session.OutputTarget(folder, sub, name, true)
		if err != nil {
			return err
		}
		w.Replaced = replaced
		if err := os.Rename(tmp.Name(), target); err != nil {
			return err
		}
		return s.touch(ctx, tx, sessionID)
	})
	if err != nil {
		return nil, err
	}
	return w, nil
}

// OutputTarget checks path as WriteOutput does, makes the folders below
// results/, scripts/ or data/ as needed, and returns the absolute path the
// file goes to, for a writer other than the store (an ACP client's
// fs/write_text_file, so the editor sees the write). The caller writes.
func (s *Store) OutputTarget(ctx context.Context, sessionID, path string, size int64) (string, *session.Written, error) {
	sub, name, err := session.ParseOutputPath(path)
	if err != nil {
		return "", nil, err
	}
	if size > session.MaxFileSize {
		return "", nil, fmt.Errorf("%w: %s/%s would be %s; the limit is %s", session.ErrTooLarge, sub, name, session.Bytes(size), session.SizeLimit())
	}
	w := &session.Written{Subdir: sub, Name: name, Size: size}
	var target string
	err = s.inFolder(ctx, sessionID, func(tx *sql.Tx, folder string) error {
		var err error
		target, w.Replaced, err = session.OutputTarget(folder, sub, name, false)
		if err != nil {
			return err
		}
		return s.touch(ctx, tx, sessionID)
	})
	if err != nil {
		return "", nil, err
	}
	return target, w, nil
}

// OutputWritten has nothing to do: the file at OutputTarget's path is the
// stored file.
func (s *Store) OutputWritten(context.Context, string, string, []byte) error { return nil }
