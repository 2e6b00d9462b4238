// Package workspace is the user's workspace as the model may see it: which
// files it may read (inside the workspace folders or the session folder,
// with one name, not holding secrets unless the user added them) and how a
// file is read (bounded, regular files only). The turn's assembly (package
// chat) and every tool of the model's (package tool) ask it, so the rules
// exist once.
package workspace

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/ctxls/ctxls/session"
)

// ErrNotRegular is returned for a path that is not a regular file (a
// folder, a FIFO, a device): reading one could hang or never end.
var ErrNotRegular = errors.New("not a regular file")

// ReadLimited reads at most limit bytes of a regular file. Anything else
// is refused before it is opened: opening a FIFO waits for a writer, and a
// device may never end. A system file (/proc/self/environ is "regular") is
// refused by its path, and once open by its file system.
func ReadLimited(path string, limit int64) (string, error) {
	if fi, err := os.Stat(path); err != nil {
		return "", err
	} else if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is %w", path, ErrNotRegular)
	} else if SystemPath(path) {
		return "", fmt.Errorf("%s is %w", path, ErrSystemFile)
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return "", err
	} else if !fi.Mode().IsRegular() { // replaced between the two looks
		return "", fmt.Errorf("%s is %w", path, ErrNotRegular)
	}
	if onSystemFS(f) { // through a link, or mounted elsewhere
		return "", fmt.Errorf("%s is %w", path, ErrSystemFile)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit))
	return string(data), err
}

// Guard decides which files the model may read in one turn.
type Guard struct {
	// Roots are the workspace folders.
	Roots []string
	// Folder is the session folder now ("" when none); called only for a
	// path outside every workspace folder.
	Folder func() string
	// UserFiles are the files the user added by name: readable wherever
	// they are.
	UserFiles map[string]bool
}

// Refusal says why the model may not read path, or "" when it may. Never
// a system file (under /proc, /sys or /dev, links resolved); else any file
// the user added to the context by name, and inside a workspace folder or
// the session folder (after resolving symbolic links) a file without
// several hard links (another name for it may be anywhere on the same
// filesystem).
func (g *Guard) Refusal(path string) string {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		real = path
	}
	if SystemPath(path) || SystemPath(real) {
		return "is " + ErrSystemFile.Error()
	}
	if g.UserFiles[path] {
		return ""
	}
	within := func(dir string) bool {
		if dir == "" {
			return false
		}
		rd, err := filepath.EvalSymlinks(dir)
		if err != nil {
			rd = dir
		}
		return session.Within(path, dir) && session.Within(real, rd)
	}
	folder := func() string {
		if g.Folder == nil {
			return ""
		}
		return g.Folder()
	}
	if !slices.ContainsFunc(g.Roots, within) && !within(folder()) {
		return "is outside the workspace and the session folder; ask the user to add it"
	}
	if n := HardLinks(real); n > 1 {
		return fmt.Sprintf("has %d hard links, so it may be a file from outside the workspace; ask the user to add it by name", n)
	}
	return ""
}

// Withheld reports whether a file's text must not reach the model: it
// looks like it holds secrets and the user did not add it by name.
func (g *Guard) Withheld(path, content string) bool {
	return !g.UserFiles[path] && LooksSecret(path, content)
}
