package search

import (
	"container/heap"
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/ctxls/ctxls/internal/human"
)

// FoundFile is a file Find found.
type FoundFile struct {
	Path    string // as results show paths
	ModTime time.Time
	Size    int64
}

// FindResult is what Find found.
type FindResult struct {
	Files   []FoundFile // most recently modified first (then by path); at most MaxResults
	Total   int         // matching files, shown or not
	Shown   int         // files in the text
	Skipped Skipped
	text    string
}

// String is the text the model gets: one path a line.
func (r *FindResult) String() string { return r.text }

// Summary is one line for the user: "37 files".
func (r *FindResult) Summary() string {
	if r.Total == 0 {
		return "no files"
	}
	s := count(r.Total, "file", "files")
	if r.Shown < r.Total {
		s += " (" + human.Thousands(r.Shown) + " shown)"
	}
	return s
}

// Find lists the files of the scope whose paths match glob, most recently
// modified first. Withheld files are listed (their names only).
func Find(ctx context.Context, opts Options, glob string) (*FindResult, error) {
	if strings.TrimSpace(glob) == "" {
		return nil, errors.New("empty glob: give a pattern such as **/*.go")
	}
	g, err := newGlobber(glob)
	if err != nil {
		return nil, err
	}
	s, err := newScope(opts, defaultPathResults, nil)
	if err != nil {
		return nil, err
	}
	if len(s.starts) == 1 && s.starts[0].missing {
		return nil, errors.New("path " + opts.Path + " does not exist")
	}
	f := &finder{s: s, g: g}
	w := newWalker(s, f.visit)
	w.filter = f.match
	f.workers = make([]findWorker, w.workers)
	if err := w.run(ctx); err != nil {
		return nil, err
	}
	return f.result(w), nil
}

type finder struct {
	s       *scope
	g       *globber
	workers []findWorker
}

// A findWorker keeps the MaxResults best files it has seen.
type findWorker struct {
	top     foundHeap
	total   int
	skipped Skipped
}

func (f *finder) visit(id int, e *entry) {
	wk := &f.workers[id]
	if !f.match(e.root, e.rel, e.name) {
		return
	}
	fi, err := e.info()
	if err != nil {
		wk.skipped.Unreadable++
		return
	}
	wk.total++
	c := found{key: fileKey{e.root, e.rel}, mod: fi.ModTime(), size: fi.Size()}
	if len(wk.top) < f.s.maxResults {
		heap.Push(&wk.top, c)
	} else if c.before(wk.top[0]) {
		wk.top[0] = c
		heap.Fix(&wk.top, 0)
	}
}

// match applies the glob, but not to a file named by Options.Path.
func (f *finder) match(ri int, rel, name string) bool {
	if f.s.explicit && !f.s.starts[0].isDir {
		return true
	}
	if f.g.base {
		return f.g.match(name, rel, rel, "")
	}
	return f.g.match(name, rel, f.s.roots[ri].display(rel), f.s.fromStart(ri, rel))
}

func (f *finder) result(w *walker) *FindResult {
	r := &FindResult{}
	var all []found
	for i := range f.workers {
		wk := &f.workers[i]
		r.Total += wk.total
		r.Skipped.add(wk.skipped)
		all = append(all, wk.top...)
	}
	for _, st := range w.stats {
		r.Skipped.Unreadable += st.unreadable
		r.Skipped.Outside += st.outside
	}
	slices.SortFunc(all, func(a, b found) int {
		if a.before(b) {
			return -1
		}
		if b.before(a) {
			return 1
		}
		return 0
	})
	all = all[:min(len(all), f.s.maxResults)]
	var b strings.Builder
	budget := max(f.s.maxBytes-footerRoom, f.s.maxBytes/2)
	for _, c := range all {
		p := f.s.roots[c.key.root].display(c.key.rel)
		if b.Len()+len(p)+1 > budget {
			break
		}
		b.WriteString(p)
		b.WriteByte('\n')
		r.Files = append(r.Files, FoundFile{Path: p, ModTime: c.mod, Size: c.size})
	}
	r.Shown = len(r.Files)
	if r.Total == 0 {
		b.WriteString("No files found.\n")
	}
	if left := r.Total - r.Shown; left > 0 {
		b.WriteString("\n[" + count(left, "more file", "more files") + " not shown: narrow the search with a path or a more specific glob]\n")
	}
	if s := r.Skipped.String(); s != "" {
		b.WriteString("\n(" + s + ")\n")
	}
	r.text = b.String()
	return r
}

type found struct {
	key  fileKey
	mod  time.Time
	size int64
}

// before: more recently modified, then by path.
func (a found) before(b found) bool {
	if !a.mod.Equal(b.mod) {
		return a.mod.After(b.mod)
	}
	return a.key.compare(b.key) < 0
}

// foundHeap holds the best files with the worst on top.
type foundHeap []found

func (h foundHeap) Len() int           { return len(h) }
func (h foundHeap) Less(i, j int) bool { return h[j].before(h[i]) }
func (h foundHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *foundHeap) Push(x any)        { *h = append(*h, x.(found)) }
func (h *foundHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
