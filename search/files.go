package search

import (
	"context"
	"path"
	"slices"
	"strings"
	"sync"
	"time"
)

// Named is a file of the workspace as AllNames lists it.
type Named struct {
	Path    string // as results show paths (relative to its root)
	ModTime time.Time
}

// AllNames lists every file of the scope but the withheld ones
// (Options.Withhold: what is offered is what may go with a question), in
// no particular order, with its time: what RankNames ranks, which a
// caller may keep while the user types (NameCache).
func AllNames(ctx context.Context, opts Options) ([]Named, error) {
	s, err := newScope(opts, 1, nil)
	if err != nil {
		return nil, err
	}
	var workers [][]Named
	visit := func(id int, e *entry) {
		if s.withhold != nil && s.withhold(e.abs) {
			return
		}
		n := Named{Path: s.roots[e.root].display(e.rel)}
		if fi, err := e.info(); err == nil {
			n.ModTime = fi.ModTime()
		}
		workers[id] = append(workers[id], n)
	}
	w := newWalker(s, visit)
	workers = make([][]Named, w.workers)
	if err := w.run(ctx); err != nil {
		return nil, err
	}
	return slices.Concat(workers...), nil
}

// RankNames chooses among files as a completion list does (what an
// editor offers after "@"): those whose paths hold query's characters in
// order, ignoring case, best first — contiguous in the file's name (at its
// start best), then contiguous in the path, then scattered in the name,
// then scattered in the path; shorter paths first within each. An empty
// query matches every file, most recently modified first. At most limit
// files; more reports whether others matched.
func RankNames(files []Named, query string, limit int) (best []Named, more bool) {
	q := strings.ToLower(query)
	var top []named
	for i, f := range files {
		lp := strings.ToLower(f.Path)
		rank, ok := nameRank(q, lp, path.Base(lp))
		if !ok {
			continue
		}
		n := named{rank: rank, path: f.Path, i: i}
		if q == "" {
			n.mod = f.ModTime
		}
		// The best limit+1 (one more tells "more").
		j, _ := slices.BinarySearchFunc(top, n, compareNamed)
		if j > limit {
			continue
		}
		top = slices.Insert(top, j, n)
		if len(top) > limit+1 {
			top = top[:limit+1]
		}
	}
	if len(top) > limit {
		top, more = top[:limit], true
	}
	for _, n := range top {
		best = append(best, files[n.i])
	}
	return best, more
}

type named struct {
	rank int
	mod  time.Time
	path string
	i    int // in the files ranked
}

// compareNamed orders by rank, then most recently modified, then shorter
// path, then by path.
func compareNamed(a, b named) int {
	if a.rank != b.rank {
		return a.rank - b.rank
	}
	if !a.mod.Equal(b.mod) {
		if a.mod.After(b.mod) {
			return -1
		}
		return 1
	}
	if la, lb := len(a.path), len(b.path); la != lb {
		return la - lb
	}
	return strings.Compare(a.path, b.path)
}

// nameRank ranks how query (lower case) matches a file's path and name
// (lower case): 0 the name starts with it, 1 the name holds it, 2 the path
// holds it, 3 its characters are in the name in order, 4 in the path; not
// ok when they are not in the path in order.
func nameRank(q, rel, name string) (int, bool) {
	switch {
	case q == "":
		return 0, true
	case strings.HasPrefix(name, q):
		return 0, true
	case strings.Contains(name, q):
		return 1, true
	case strings.Contains(rel, q):
		return 2, true
	case subsequence(q, name):
		return 3, true
	case subsequence(q, rel):
		return 4, true
	}
	return 0, false
}

// subsequence reports whether q's bytes are in s in order.
func subsequence(q, s string) bool {
	for i := 0; i < len(q); i++ {
		j := strings.IndexByte(s, q[i])
		if j < 0 {
			return false
		}
		s = s[j+1:]
	}
	return true
}

// namesFresh is how long a NameCache's listing serves again: a
// completion asks as the user types.
const namesFresh = 3 * time.Second

// NameCache keeps the last listing of AllNames for a few seconds.
type NameCache struct {
	mu    sync.Mutex
	roots []string
	at    time.Time
	files []Named
}

// Get is AllNames(ctx, opts), or the listing made less than namesFresh ago
// for the same roots (opts.Withhold is taken to be the same).
func (c *NameCache) Get(ctx context.Context, opts Options) ([]Named, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if slices.Equal(c.roots, opts.Roots) && time.Since(c.at) < namesFresh {
		return c.files, nil
	}
	files, err := AllNames(ctx, opts)
	if err != nil {
		return nil, err
	}
	c.roots, c.at, c.files = slices.Clone(opts.Roots), time.Now(), files
	return files, nil
}
