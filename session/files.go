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
	"regexp"
	"slices"
	"strings"
	"time"
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

// checkSubdir validates a subfolder name ("" is sources).
func checkSubdir(sub string) (string, error) {
	if sub == "" {
		sub = "sources"
	}
	if !slices.Contains(subdirs, sub) {
		return "", invalid("subdir %q is not one of %s", truncate(sub, 40), strings.Join(subdirs, ", "))
	}
	return sub, nil
}

// subdirIn returns subfolder sub of a session folder, refusing one that is
// not a real directory (for example replaced by a symlink). A missing
// subfolder is made; with inTx false (a reader, which holds no lock) the
// session folder itself is never made: when it is missing it has moved,
// and the fs.ErrNotExist returned says to look it up again.
func subdirIn(folder, sub string, inTx bool) (string, error) {
	dir := filepath.Join(folder, sub)
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		mkdir := os.Mkdir
		if inTx {
			mkdir = os.MkdirAll // the folder the database names, made again
		}
		if err := mkdir(dir, 0o700); err != nil {
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
// The copy is made in the data directory's tmp/ and moved into the folder
// inside the write lock (see inFolder).
func (s *SQLite) AddFile(ctx context.Context, sessionID, name string, r io.Reader) (*FileInfo, error) {
	if err := validName(name); err != nil {
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
	n, err := io.Copy(tmp, io.LimitReader(r, MaxFileSize+1))
	if err == nil && n <= MaxFileSize {
		// On disk before the rename makes it the file: after a power cut
		// sources/ holds the whole old file or the whole new one.
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > MaxFileSize {
		err = fmt.Errorf("%w: %q is more than %s; the limit is %s", ErrTooLarge, name, Bytes(MaxFileSize), sizeLimit())
	}
	if err != nil {
		return nil, err
	}
	err = s.inFolder(ctx, sessionID, func(tx *sql.Tx, folder string) error {
		dir, err := subdirIn(folder, "sources", true)
		if err != nil {
			return err
		}
		if fi, err := os.Lstat(filepath.Join(dir, name)); err == nil && fi.IsDir() {
			return invalid("%q is a directory in sources/", name)
		}
		if err := os.Rename(tmp.Name(), filepath.Join(dir, name)); err != nil {
			return err
		}
		return s.touch(ctx, tx, sessionID)
	})
	if err != nil {
		return nil, err
	}
	return &FileInfo{Name: name, Size: n}, nil
}

// AddFileFromPath copies a regular file into sources/ under its base name.
func (s *SQLite) AddFileFromPath(ctx context.Context, sessionID, path string) (*FileInfo, error) {
	return addFileFromPath(ctx, s, sessionID, path)
}

// addFileFromPath checks that path is a regular file within the size limit
// and adds it to st under its base name.
func addFileFromPath(ctx context.Context, st Store, sessionID, path string) (*FileInfo, error) {
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
		return nil, fmt.Errorf("%w: %s is %s; the limit is %s", ErrTooLarge, path, Bytes(fi.Size()), sizeLimit())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: cannot read %s: %v", ErrInvalid, path, err)
	}
	defer f.Close()
	return st.AddFile(ctx, sessionID, filepath.Base(path), f)
}

// ListFiles lists the files of a session subfolder (default sources),
// sorted, hidden names left out. Only files are listed: a folder is not a
// file. In sources/ (the user's files, added one by one) only the files
// directly inside are listed; in results/, scripts/ and data/ the files in
// folders below are listed too, as "sub/name". Symbolic links to folders
// are neither listed nor followed.
func (s *SQLite) ListFiles(ctx context.Context, sessionID, sub string) ([]string, error) {
	sub, err := checkSubdir(sub)
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
	dir, err := subdirIn(folder, sub, inTx)
	if err != nil {
		return nil, err
	}
	depth := 0
	if sub != "sources" {
		depth = maxOutputDepth
	}
	names := []string{}
	if err := walkFiles(dir, "", depth, func(name string, _ fs.FileInfo) { names = append(names, name) }); err != nil {
		return nil, err
	}
	slices.Sort(names)
	return names, nil
}

// walkFiles calls fn for every file in dir with its "/"-separated name
// below dir (prefix first), descending depth levels of folders. Hidden
// names are skipped; a symbolic link is a file unless it leads to a
// folder, and is never followed. Only a failure to read dir itself is
// returned: a subfolder that cannot be read is skipped.
func walkFiles(dir, prefix string, depth int, fn func(name string, fi fs.FileInfo)) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		switch {
		case e.IsDir():
			if depth > 0 {
				walkFiles(path, prefix+e.Name()+"/", depth-1, fn)
			}
			continue
		case e.Type()&fs.ModeSymlink != 0:
			if fi, err := os.Stat(path); err == nil && fi.IsDir() {
				continue
			}
		case !e.Type().IsRegular():
			continue // a socket, a device, a pipe
		}
		fi, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		fn(prefix+e.Name(), fi)
	}
	return nil
}

// RemoveFile removes a file (or a symbolic link, never its target) from
// sources/.
func (s *SQLite) RemoveFile(ctx context.Context, sessionID, name string) error {
	if err := validName(name); err != nil {
		return err
	}
	return s.inFolder(ctx, sessionID, func(tx *sql.Tx, folder string) error {
		dir, err := subdirIn(folder, "sources", true)
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
		return s.touch(ctx, tx, sessionID)
	})
}

// A session folder is named "<created>--<slug of the title>--<id[:6]>"
// (folderName). A process killed while it changes one leaves one of two
// states behind, which the next writer repairs under the write lock (so no
// live process is ever between the two steps it repairs):
//
//   - half-renamed: Rename moves the folder, then commits the new name;
//     killed in between, the database names the old folder while the disk
//     holds the new one. The rename was never acknowledged, so the folder
//     is moved back to the name the database records (findFolder).
//   - half-created: Create makes the folder, then commits its row; killed in
//     between, a folder with nothing but empty subfolders (and history.md)
//     belongs to no session. It is removed when the store opens
//     (recoverFolders).
//
// Without the repair the session's writes failed (history.md had no folder
// to go to) or made a second, empty folder under the old name beside the one
// holding the files. Found by the crash test (lsp/crash_test.go).

// folderPattern matches folderName's output.
var folderPattern = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}--.+--[a-z2-7]{6}$`)

// staleUpload is how long an upload in tmp/ may go unwritten before it is
// taken for one a killed process left behind.
const staleUpload = time.Hour

// findFolder makes sure the session folder the database names (name) is on
// disk: a folder a killed rename left under another name is moved back. It
// must run in a write transaction (tx).
func (s *SQLite) findFolder(ctx context.Context, tx *sql.Tx, name string) error {
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
		if e.IsDir() && sameSession(e.Name(), name) {
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

// sameSession reports whether two folder names can belong to one session:
// same creation time and id prefix, any title.
func sameSession(a, b string) bool {
	return a != b && folderPattern.MatchString(a) && folderPattern.MatchString(b) &&
		a[:21] == b[:21] && a[len(a)-8:] == b[len(b)-8:]
}

// recoverFolders repairs what killed processes left in the data directory:
// half-renamed and half-created session folders (see above) and uploads in
// tmp/ not written for staleUpload. Open calls it.
func (s *SQLite) recoverFolders(ctx context.Context) error {
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
			if e.IsDir() && !named[e.Name()] && folderPattern.MatchString(e.Name()) && unused(path) {
				os.RemoveAll(path) // best effort: it is tried again next time
			}
		}
		return removeStaleTmp(filepath.Join(s.dir, "tmp"), s.now())
	})
}

// unused reports whether a session folder holds nothing anybody put there:
// only empty subfolders, history.md and temporary files.
// removeStaleTmp removes the files in a data directory's tmp/ older than
// staleUpload: what a process killed mid-write left (a live one's staged
// file is seconds old).
func removeStaleTmp(dir string, now time.Time) error {
	tmp, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for _, e := range tmp {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() && now.Sub(fi.ModTime()) > staleUpload {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	return nil
}

func unused(path string) bool {
	entries, err := os.ReadDir(path)
	if err != nil {
		return false
	}
	for _, e := range entries {
		switch {
		case e.IsDir() && slices.Contains(subdirs, e.Name()):
			if sub, err := os.ReadDir(filepath.Join(path, e.Name())); err != nil || len(sub) > 0 {
				return false
			}
		case e.Type().IsRegular() && (e.Name() == "history.md" || strings.HasPrefix(e.Name(), ".tmp-")):
		default:
			return false
		}
	}
	return true
}
