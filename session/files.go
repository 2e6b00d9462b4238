package session

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
	"strings"
)

// FileInfo describes a file copied into a session.
type FileInfo struct {
	Name string `json:"name"`
	Size int64  `json:"size"`
}

// validName checks a file name for sources/.
func validName(name string) error {
	switch {
	case name == "":
		return invalid("file name is empty")
	case len(name) > 255:
		return invalid("file name is %d bytes long; the limit is 255", len(name))
	case strings.ContainsRune(name, 0):
		return invalid("file name %q contains a NUL character", truncate(name, 80))
	case strings.ContainsAny(name, `/\`):
		return invalid("file name %q must not contain \"/\" or \"\\\"", truncate(name, 80))
	case name == "." || name == "..":
		return invalid("file name %q is not allowed", name)
	case strings.HasPrefix(name, "."):
		return invalid("file name %q must not start with a dot", truncate(name, 80))
	}
	return nil
}

// subdir returns a session subfolder, refusing one that is not a real
// directory inside the session folder (for example replaced by a symlink).
func (s *Store) subdir(ctx context.Context, sessionID, sub string) (string, error) {
	if sub == "" {
		sub = "sources"
	}
	if !slices.Contains(subdirs, sub) {
		return "", invalid("subdir %q is not one of %s", truncate(sub, 40), strings.Join(subdirs, ", "))
	}
	folder, err := s.folderOf(ctx, sessionID)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(folder, sub)
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", err
		}
		return dir, nil
	}
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%w: %s is not a directory (a symbolic link?); refusing to use it", ErrInvalid, dir)
	}
	return dir, nil
}

// AddFile copies r into the session's sources/ as name, replacing a file of
// the same name (a symbolic link there is replaced, never written through).
// Over MaxFileSize it fails with ErrTooLarge and leaves nothing behind.
func (s *Store) AddFile(ctx context.Context, sessionID, name string, r io.Reader) (*FileInfo, error) {
	if err := validName(name); err != nil {
		return nil, err
	}
	s.folders.RLock()
	defer s.folders.RUnlock()
	dir, err := s.subdir(ctx, sessionID, "sources")
	if err != nil {
		return nil, err
	}
	if fi, err := os.Lstat(filepath.Join(dir, name)); err == nil && fi.IsDir() {
		return nil, invalid("%q is a directory in sources/", name)
	}
	tmp, err := os.CreateTemp(dir, ".upload-*")
	if err != nil {
		return nil, err
	}
	n, err := io.Copy(tmp, io.LimitReader(r, MaxFileSize+1))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > MaxFileSize {
		err = fmt.Errorf("%w: %q is larger than the limit of 25 MB", ErrTooLarge, name)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(dir, name))
	}
	if err != nil {
		os.Remove(tmp.Name())
		return nil, err
	}
	if err := s.inTx(ctx, func(tx *sql.Tx) error { return s.touch(ctx, tx, sessionID) }); err != nil {
		return nil, err
	}
	return &FileInfo{Name: name, Size: n}, nil
}

// AddFileFromPath copies a regular file into sources/ under its base name.
func (s *Store) AddFileFromPath(ctx context.Context, sessionID, path string) (*FileInfo, error) {
	if strings.ContainsRune(path, 0) {
		return nil, invalid("path contains a NUL character")
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("file %s: %w", path, ErrNotFound)
	case err != nil:
		return nil, fmt.Errorf("%w: cannot read %s: %v", ErrInvalid, path, err)
	case fi.IsDir():
		return nil, invalid("%s is a directory; add files one by one", path)
	case !fi.Mode().IsRegular():
		return nil, invalid("%s is not a regular file", path)
	case fi.Size() > MaxFileSize:
		return nil, fmt.Errorf("%w: %s is %d MB; the limit is 25 MB", ErrTooLarge, path, fi.Size()>>20)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: cannot read %s: %v", ErrInvalid, path, err)
	}
	defer f.Close()
	return s.AddFile(ctx, sessionID, filepath.Base(path), f)
}

// ListFiles lists a session subfolder (default sources), sorted, hidden
// files left out.
func (s *Store) ListFiles(ctx context.Context, sessionID, sub string) ([]string, error) {
	dir, err := s.subdir(ctx, sessionID, sub)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := []string{}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	return names, nil // ReadDir sorts by name
}

// RemoveFile removes a file (or a symbolic link, never its target) from
// sources/.
func (s *Store) RemoveFile(ctx context.Context, sessionID, name string) error {
	if err := validName(name); err != nil {
		return err
	}
	s.folders.RLock()
	defer s.folders.RUnlock()
	dir, err := s.subdir(ctx, sessionID, "sources")
	if err != nil {
		return err
	}
	path := filepath.Join(dir, name)
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("file %q is not in the session's sources: %w", name, ErrNotFound)
	}
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return invalid("%q is a directory", name)
	}
	if err := os.Remove(path); err != nil {
		return err
	}
	return s.inTx(ctx, func(tx *sql.Tx) error { return s.touch(ctx, tx, sessionID) })
}
