package session

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// FileInfo describes a file copied into a session.
type FileInfo struct {
	Name string `json:"name"`
	Size int64  `json:"size"`
}

// ValidName checks a file name for sources/.
func ValidName(name string) error {
	switch {
	case name == "":
		return Invalidf("file name is empty")
	case len(name) > 255:
		return Invalidf("file name is %d bytes long; the limit is 255", len(name))
	case strings.ContainsRune(name, 0):
		return Invalidf("file name %q contains a NUL character", Truncate(name, 80))
	case strings.ContainsAny(name, `/\`):
		return Invalidf("file name %q must not contain \"/\" or \"\\\"", Truncate(name, 80))
	case name == "." || name == "..":
		return Invalidf("file name %q is not allowed", name)
	case strings.HasPrefix(name, "."):
		return Invalidf("file name %q must not start with a dot", Truncate(name, 80))
	}
	return nil
}

// CheckSubdir validates a subfolder name ("" is sources).
func CheckSubdir(sub string) (string, error) {
	if sub == "" {
		sub = "sources"
	}
	if !slices.Contains(Subdirs, sub) {
		return "", Invalidf("subdir %q is not one of %s", Truncate(sub, 40), strings.Join(Subdirs, ", "))
	}
	return sub, nil
}

// AddFileFromPath checks that path is a regular file within the size limit
// and adds it to st under its base name.
func AddFileFromPath(ctx context.Context, st Store, sessionID, path string) (*FileInfo, error) {
	if strings.ContainsRune(path, 0) {
		return nil, Invalidf("path contains a NUL character")
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("file %s: %w", path, ErrNotFound)
	case err != nil:
		return nil, fmt.Errorf("%w: cannot read %s: %v", ErrInvalid, path, err)
	case fi.IsDir():
		return nil, Invalidf("%s is a directory; add files one by one", path)
	case !fi.Mode().IsRegular():
		return nil, Invalidf("%s is not a regular file", path)
	case fi.Size() > MaxFileSize:
		return nil, fmt.Errorf("%w: %s is %s; the limit is %s", ErrTooLarge, path, Bytes(fi.Size()), SizeLimit())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: cannot read %s: %v", ErrInvalid, path, err)
	}
	defer f.Close()
	return st.AddFile(ctx, sessionID, filepath.Base(path), f)
}

// WalkFiles calls fn for every file in dir with its "/"-separated name
// below dir (prefix first), descending depth levels of folders. Hidden
// names are skipped; a symbolic link is a file unless it leads to a
// folder, and is never followed. Only a failure to read dir itself is
// returned: a subfolder that cannot be read is skipped.
func WalkFiles(dir, prefix string, depth int, fn func(name string, fi fs.FileInfo)) error {
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
				WalkFiles(path, prefix+e.Name()+"/", depth-1, fn)
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
// holding the files. Found by the crash test (lsp/e2e/crash_test.go).

// FolderPattern matches folderName's output (compiled on first use, not at
// start-up).
var FolderPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}--.+--[a-z2-7]{6}$`)
})

// SameSession reports whether two folder names can belong to one session:
// same creation time and id prefix, any title.
func SameSession(a, b string) bool {
	return a != b && FolderPattern().MatchString(a) && FolderPattern().MatchString(b) &&
		a[:21] == b[:21] && a[len(a)-8:] == b[len(b)-8:]
}

// FolderUnused reports whether a session folder holds nothing anybody put there:
// only empty subfolders, history.md and temporary files.
// RemoveStaleTmp removes the files in a data directory's tmp/ older than
// StaleUpload: what a process killed mid-write left (a live one's staged
// file is seconds old).
func RemoveStaleTmp(dir string, now time.Time) error {
	tmp, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for _, e := range tmp {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() && now.Sub(fi.ModTime()) > StaleUpload {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	return nil
}

func FolderUnused(path string) bool {
	entries, err := os.ReadDir(path)
	if err != nil {
		return false
	}
	for _, e := range entries {
		switch {
		case e.IsDir() && slices.Contains(Subdirs, e.Name()):
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

// SubdirIn returns subfolder sub of a session folder, refusing one that is
// not a real directory (for example replaced by a symlink). A missing
// subfolder is made; with inTx false (a reader, which holds no lock) the
// session folder itself is never made: when it is missing it has moved,
// and the fs.ErrNotExist returned says to look it up again.
func SubdirIn(folder, sub string, inTx bool) (string, error) {
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

// StaleUpload is how long an upload in tmp/ may go unwritten before it is
// taken for one a killed process left behind.
const StaleUpload = time.Hour
