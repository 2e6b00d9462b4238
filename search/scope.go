package search

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	ws "github.com/ctxls/ctxls/workspace"
)

// Overlay gives the editor's open buffers: their current, possibly unsaved,
// text by absolute path. Each calls fn for every buffer until it returns
// false; Text returns one buffer's text. A nil Overlay means disk only.
type Overlay interface {
	Each(fn func(path, text string) bool)
	Text(path string) (string, bool)
}

// Options say where to search and how much to return; the zero value of a
// limit means its default.
type Options struct {
	// Roots are the workspace folders, absolute paths. Nothing outside
	// them is read or listed.
	Roots []string
	// Path, optional, narrows the search to a folder or file under a
	// root: absolute, or relative to the first root (or, with several
	// roots, starting with a root's name as results show it). Default:
	// all roots.
	Path string
	// Withhold reports files whose text the model may not see (secrets,
	// by the caller's rule), given their absolute path (and, for a
	// symbolic link, its target's too). Grep skips them and counts them;
	// Find and List show their names, never their text. Nil: none.
	Withhold func(path string) bool
	// WithholdText reports, for Grep, a file whose text the model may not
	// see by what it holds (a private key); asked only of a file with a
	// match. Nil: none.
	WithholdText func(data []byte) bool
	// MaxResults caps Grep's matching lines (default 100) and the paths
	// of Find and List (default 200).
	MaxResults int
	// MaxBytes caps the text of a result (default 64 KiB).
	MaxBytes int
	// MaxFileSize: larger files are not searched (default 10 MiB); the
	// result counts them.
	MaxFileSize int64
}

const (
	defaultGrepResults = 100
	defaultPathResults = 200
	defaultMaxBytes    = 64 << 10
	defaultMaxFileSize = 10 << 20
)

// A root is a workspace folder.
type root struct {
	abs  string // as given, cleaned
	real string // with symbolic links resolved
	// name prefixes its paths in results: "" with one root, else the
	// folder's base name, or its absolute path when two roots share it.
	name string
}

// display is how results show the path rel (slash-separated, relative to
// the root).
func (r *root) display(rel string) string {
	switch {
	case r.name == "":
		if rel == "" {
			return "."
		}
		return rel
	case rel == "":
		return r.name
	}
	return r.name + "/" + rel
}

// A start is where a walk begins: a folder or file under a root.
type start struct {
	root  int
	rel   string // slash-separated, "" for the root itself
	abs   string
	real  string
	isDir bool
	// missing: not on disk (an unsaved buffer's path).
	missing bool
}

// A scope is Options resolved: the roots, where to start, the limits.
type scope struct {
	roots        []root
	starts       []start
	explicit     bool // Path was given
	withhold     func(string) bool
	withholdText func([]byte) bool
	maxResults   int
	maxBytes     int
	maxFileSize  int64
}

// errSystem is wrapped by the error for a path under /proc, /sys or /dev
// (a workspace folder at / holds them): they are never searched.
var errSystem = errors.New("a system folder (/proc, /sys, /dev), never searched")

// errOutside is wrapped by the error for a path outside the workspace.
var errOutside = errors.New("outside the workspace")

// newScope checks opts and resolves its roots and Path. pathResults is the
// MaxResults default for the caller.
func newScope(opts Options, defResults int, ov Overlay) (*scope, error) {
	s := &scope{
		withhold:     opts.Withhold,
		withholdText: opts.WithholdText,
		maxResults:   opts.MaxResults,
		maxBytes:     opts.MaxBytes,
		maxFileSize:  opts.MaxFileSize,
	}
	if s.maxResults <= 0 {
		s.maxResults = defResults
	}
	if s.maxBytes <= 0 {
		s.maxBytes = defaultMaxBytes
	}
	if s.maxFileSize <= 0 {
		s.maxFileSize = defaultMaxFileSize
	}
	if len(opts.Roots) == 0 {
		return nil, errors.New("no workspace folders to search")
	}
	seen := map[string]bool{}
	for _, r := range opts.Roots {
		if !filepath.IsAbs(r) {
			return nil, fmt.Errorf("workspace folder %q is not an absolute path", r)
		}
		abs := filepath.Clean(r)
		if seen[abs] {
			continue
		}
		seen[abs] = true
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			return nil, fmt.Errorf("workspace folder %s: %w", abs, err)
		}
		s.roots = append(s.roots, root{abs: abs, real: real})
	}
	if len(s.roots) > 1 {
		count := map[string]int{}
		for _, r := range s.roots {
			count[filepath.Base(r.abs)]++
		}
		for i := range s.roots {
			r := &s.roots[i]
			r.name = filepath.Base(r.abs)
			if count[r.name] > 1 {
				r.name = filepath.ToSlash(r.abs)
			}
		}
	}
	if opts.Path == "" {
		for i, r := range s.roots {
			s.starts = append(s.starts, start{root: i, abs: r.abs, real: r.real, isDir: true})
		}
		return s, nil
	}
	s.explicit = true
	st, err := s.resolve(opts.Path, ov)
	if err != nil {
		return nil, err
	}
	s.starts = []start{st}
	return s, nil
}

// resolve finds the root p is under and checks that it stays inside the
// workspace, symbolic links included.
func (s *scope) resolve(p string, ov Overlay) (start, error) {
	var abs string
	if filepath.IsAbs(p) {
		abs = filepath.Clean(p)
	} else {
		abs = filepath.Join(s.roots[0].abs, p)
		if _, err := os.Lstat(abs); err != nil && len(s.roots) > 1 {
			// Paths as results show them: "<root name>/rest".
			slash := filepath.ToSlash(filepath.Clean(p))
			for _, r := range s.roots {
				if slash == r.name || strings.HasPrefix(slash, r.name+"/") {
					abs = filepath.Join(r.abs, filepath.FromSlash(strings.TrimPrefix(slash, r.name)))
					break
				}
			}
		}
	}
	ri, rel, ok := s.rootOf(abs)
	if !ok {
		return start{}, fmt.Errorf("path %s is %w (%s)", p, errOutside, s.rootList())
	}
	abs = filepath.Join(s.roots[ri].abs, filepath.FromSlash(rel))
	for _, c := range strings.Split(rel, "/") {
		if c == ".git" {
			return start{}, fmt.Errorf("path %s is inside a .git folder, which is not searched", p)
		}
	}
	st := start{root: ri, rel: rel, abs: abs}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && ov != nil {
			if _, ok := ov.Text(abs); ok {
				st.missing = true
				return st, nil
			}
		}
		if errors.Is(err, fs.ErrNotExist) {
			return start{}, fmt.Errorf("path %s does not exist", p)
		}
		return start{}, fmt.Errorf("path %s: %w", p, err)
	}
	if s.realRoot(real) < 0 {
		return start{}, fmt.Errorf("path %s is %w: it leads through a symbolic link to a place outside every workspace folder", p, errOutside)
	}
	if ws.SystemPath(abs) || ws.SystemPath(real) {
		return start{}, fmt.Errorf("path %s is %w", p, errSystem)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return start{}, fmt.Errorf("path %s: %w", p, err)
	}
	st.real, st.isDir = real, fi.IsDir()
	return st, nil
}

// rootOf finds the root an absolute, clean path lies under (as given or
// with the root's links resolved), and the path relative to it.
func (s *scope) rootOf(abs string) (int, string, bool) {
	for i, r := range s.roots {
		for _, base := range []string{r.abs, r.real} {
			if rel, ok := under(abs, base); ok {
				return i, rel, true
			}
		}
	}
	return 0, "", false
}

// realRoot is the index of the root whose real path holds real, or -1.
func (s *scope) realRoot(real string) int {
	for i, r := range s.roots {
		if _, ok := under(real, r.real); ok {
			return i
		}
	}
	return -1
}

func (s *scope) rootList() string {
	names := make([]string, len(s.roots))
	for i, r := range s.roots {
		names[i] = r.abs
	}
	if len(names) == 1 {
		return "the workspace folder is " + names[0]
	}
	return "the workspace folders are " + strings.Join(names, ", ")
}

// under reports whether p is dir or inside it, and p relative to dir with
// slashes ("" for dir itself).
func under(p, dir string) (string, bool) {
	if p == dir {
		return "", true
	}
	if dir == string(filepath.Separator) {
		return filepath.ToSlash(p[1:]), true
	}
	if len(p) > len(dir) && p[len(dir)] == filepath.Separator && p[:len(dir)] == dir {
		return filepath.ToSlash(p[len(dir)+1:]), true
	}
	return "", false
}

// withheld applies the caller's rule to a file (and to a link's target).
func (s *scope) withheld(abs, real string) bool {
	if s.withhold == nil {
		return false
	}
	return s.withhold(abs) || (real != "" && real != abs && s.withhold(real))
}
