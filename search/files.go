package search

import (
	"context"
	"slices"
	"strings"
	"time"
)

// Named is a file NamedFiles found.
type Named struct {
	Path    string // as results show paths (relative to its root)
	ModTime time.Time
}

// NamedFiles lists the files of the scope whose paths match query as a
// completion list does (what an editor offers after "@"): the query's
// characters in order, ignoring case, anywhere in the path, best first —
// contiguous in the file's name (at its start best), then contiguous in
// the path, then scattered in the name, then scattered in the path;
// shorter paths first within each. An empty query matches every file, most
// recently modified first. At most limit files (more reports whether
// others matched). Withheld files (Options.Withhold) are left out: what is
// offered is what may go with a question.
func NamedFiles(ctx context.Context, opts Options, query string, limit int) (files []Named, more bool, err error) {
	s, err := newScope(opts, limit, nil)
	if err != nil {
		return nil, false, err
	}
	q := strings.ToLower(query)
	var workers [][]named
	visit := func(id int, e *entry) {
		rank, ok := nameRank(q, strings.ToLower(e.rel), strings.ToLower(e.name))
		if !ok || (s.withhold != nil && s.withhold(e.abs)) {
			return
		}
		n := named{rank: rank, key: fileKey{e.root, e.rel}}
		if q == "" {
			if fi, err := e.info(); err == nil {
				n.mod = fi.ModTime()
			}
		}
		// Each worker keeps its best limit+1 (one more tells "more").
		top := &workers[id]
		i, _ := slices.BinarySearchFunc(*top, n, compareNamed)
		if i > limit {
			return
		}
		*top = slices.Insert(*top, i, n)
		if len(*top) > limit+1 {
			*top = (*top)[:limit+1]
		}
	}
	w := newWalker(s, visit)
	workers = make([][]named, w.workers)
	if err := w.run(ctx); err != nil {
		return nil, false, err
	}
	var all []named
	for _, top := range workers {
		all = append(all, top...)
	}
	slices.SortFunc(all, compareNamed)
	if len(all) > limit {
		all, more = all[:limit], true
	}
	for _, n := range all {
		files = append(files, Named{Path: s.roots[n.key.root].display(n.key.rel), ModTime: n.mod})
	}
	return files, more, nil
}

type named struct {
	rank int
	mod  time.Time
	key  fileKey
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
	if la, lb := len(a.key.rel), len(b.key.rel); la != lb {
		return la - lb
	}
	return a.key.compare(b.key)
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
