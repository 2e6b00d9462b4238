package search

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ctxls/ctxls/internal/human"
)

// Kind is what an entry is.
type Kind int

const (
	KindFile Kind = iota
	KindDir
	KindSymlink
	KindOther // pipes, sockets, devices
)

func (k Kind) String() string {
	switch k {
	case KindFile:
		return "file"
	case KindDir:
		return "dir"
	case KindSymlink:
		return "symlink"
	}
	return "other"
}

// Entry is one entry of a folder.
type Entry struct {
	Name string
	Kind Kind
	Size int64 // a file's size, or the size of a link's target file
	// Links: Target is the target's path as results show paths, or ""
	// when it is outside the workspace or missing (Broken);
	// TargetKind says what it is.
	Target     string
	TargetKind Kind
	Outside    bool
	Broken     bool
	Withheld   bool // Options.Withhold holds its text back
}

// ListResult is a folder's entries.
type ListResult struct {
	Path    string  // the folder as results show paths
	Entries []Entry // folders first, then by name; at most MaxResults
	Total   int     // entries, shown or not
	Ignored int     // entries left out by ignore rules
	text    string
}

// String is the text the model gets: one entry a line, folders marked
// with a slash.
func (r *ListResult) String() string { return r.text }

// Summary is one line for the user: "14 entries".
func (r *ListResult) Summary() string {
	if r.Total == 0 {
		return "empty"
	}
	s := count(r.Total, "entry", "entries")
	if len(r.Entries) < r.Total {
		s += " (" + human.Thousands(len(r.Entries)) + " shown)"
	}
	return s
}

// List lists the entries of the folder opts.Path (by default the root; with
// several roots, the roots themselves), leaving out what the ignore rules
// exclude and .git.
func List(ctx context.Context, opts Options) (*ListResult, error) {
	s, err := newScope(opts, defaultPathResults, nil)
	if err != nil {
		return nil, err
	}
	r := &ListResult{}
	switch {
	case len(s.starts) > 1:
		r.Path = "."
		for _, root := range s.roots {
			r.Entries = append(r.Entries, Entry{Name: root.name, Kind: KindDir})
		}
	case s.starts[0].missing:
		return nil, errors.New("path " + opts.Path + " does not exist")
	case !s.starts[0].isDir:
		st := s.starts[0]
		r.Path = s.roots[st.root].display(st.rel)
		e, err := s.entry(st.root, st.abs, st.rel)
		if err != nil {
			return nil, err
		}
		r.Entries = append(r.Entries, e)
	default:
		st := s.starts[0]
		r.Path = s.roots[st.root].display(st.rel)
		if err := s.listDir(ctx, st, r); err != nil {
			return nil, err
		}
	}
	r.Total = len(r.Entries)
	slices.SortFunc(r.Entries, func(a, b Entry) int {
		ad, bd := a.isDir(), b.isDir()
		if ad != bd {
			if ad {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	r.text = r.format(s)
	return r, nil
}

func (e *Entry) isDir() bool {
	return e.Kind == KindDir || (e.Kind == KindSymlink && e.TargetKind == KindDir && !e.Broken)
}

func (s *scope) listDir(ctx context.Context, st start, r *ListResult) error {
	ents, err := readDir(st.abs)
	if err != nil && len(ents) == 0 {
		return err
	}
	w := &walker{s: s, global: globalExcludes()}
	chain := w.chainTo(st.root, st.rel)
	has := func(name string) bool {
		for _, e := range ents {
			if e.Name() == name {
				return true
			}
		}
		return false
	}
	if has(".git") {
		chain = excludeNode(chain, filepath.Join(st.abs, ".git"), st.rel, "")
	}
	chain = folderNode(chain, st.abs, st.rel, "", has)
	for _, de := range ents {
		if err := ctx.Err(); err != nil {
			return err
		}
		name := de.Name()
		if name == ".git" {
			continue
		}
		rel := name
		if st.rel != "" {
			rel = st.rel + "/" + name
		}
		abs := filepath.Join(st.abs, name)
		e, err := s.entry(st.root, abs, rel)
		if err != nil {
			continue // gone since the listing
		}
		if chain.ignored(rel, name, e.isDir()) {
			r.Ignored++
			continue
		}
		r.Entries = append(r.Entries, e)
	}
	return nil
}

// entry describes the file at abs.
func (s *scope) entry(ri int, abs, rel string) (Entry, error) {
	fi, err := os.Lstat(abs)
	if err != nil {
		return Entry{}, err
	}
	e := Entry{Name: filepath.Base(abs), Kind: kindOf(fi.Mode())}
	switch e.Kind {
	case KindFile:
		e.Size = fi.Size()
		e.Withheld = s.withheld(abs, "")
	case KindSymlink:
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			e.Broken = true
			break
		}
		tri := s.realRoot(real)
		if tri < 0 {
			e.Outside = true
			break
		}
		ti, err := os.Stat(abs)
		if err != nil {
			e.Broken = true
			break
		}
		e.TargetKind = kindOf(ti.Mode())
		if e.TargetKind == KindFile {
			e.Size = ti.Size()
			e.Withheld = s.withheld(abs, real)
		}
		trel, _ := under(real, s.roots[tri].real)
		e.Target = s.roots[tri].display(trel)
	}
	return e, nil
}

func kindOf(m fs.FileMode) Kind {
	switch {
	case m.IsRegular():
		return KindFile
	case m.IsDir():
		return KindDir
	case m&fs.ModeSymlink != 0:
		return KindSymlink
	}
	return KindOther
}

// format writes "name/" for a folder, "name  (1.2 KB)" for a file,
// "name -> target" for a link.
func (r *ListResult) format(s *scope) string {
	var b strings.Builder
	budget := max(s.maxBytes-footerRoom, s.maxBytes/2)
	shown := 0
	for _, e := range r.Entries {
		if shown == s.maxResults {
			break
		}
		l := e.line()
		if b.Len()+len(l) > budget {
			break
		}
		b.WriteString(l)
		shown++
	}
	r.Entries = r.Entries[:shown]
	if r.Total == 0 {
		b.WriteString("(empty)\n")
	}
	if left := r.Total - shown; left > 0 {
		b.WriteString("\n[" + count(left, "more entry", "more entries") + " not shown: use find_files or grep with a glob to narrow]\n")
	}
	if r.Ignored > 0 {
		b.WriteString("\n(" + count(r.Ignored, "entry", "entries") + " left out by .gitignore or .ignore rules)\n")
	}
	return b.String()
}

func (e *Entry) line() string {
	var b strings.Builder
	b.WriteString(e.Name)
	switch e.Kind {
	case KindDir:
		b.WriteByte('/')
	case KindFile:
		b.WriteString("  (" + size(e.Size))
		if e.Withheld {
			b.WriteString(", withheld")
		}
		b.WriteByte(')')
	case KindSymlink:
		b.WriteString(" -> ")
		switch {
		case e.Broken:
			b.WriteString("(broken link)")
		case e.Outside:
			b.WriteString("(outside the workspace)")
		default:
			b.WriteString(e.Target)
			if e.TargetKind == KindDir {
				b.WriteByte('/')
			} else if e.TargetKind == KindFile {
				b.WriteString("  (" + size(e.Size))
				if e.Withheld {
					b.WriteString(", withheld")
				}
				b.WriteByte(')')
			}
		}
	default:
		b.WriteString("  (special file)")
	}
	b.WriteByte('\n')
	return b.String()
}
