package search

import (
	"strings"
	"sync"
)

// A fileKey orders files: by root, then by path.
type fileKey struct {
	root int
	rel  string
}

func (a fileKey) compare(b fileKey) int {
	if a.root != b.root {
		return a.root - b.root
	}
	return strings.Compare(a.rel, b.rel)
}

// A fileResult is one file's matches as collected.
type fileResult struct {
	key     fileKey
	matches int
	lines   []Line // nil when the file is past the cutoff
}

// A collector gathers the files with matches from the walk's workers. It
// counts every match but keeps the lines of only as many files as can be
// shown: once the files kept before some path hold MaxResults matches,
// files after it are counted and dropped, so memory stays bounded however
// many lines match.
type collector struct {
	max int

	mu      sync.Mutex // guards the fields below
	stored  []*fileResult
	kept    int      // matching lines held in stored
	cutoff  *fileKey // files at or after it are only counted
	matches int
	files   int
}

// wants reports whether a file's lines may be shown.
func (c *collector) wants(k fileKey) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cutoff == nil || k.compare(*c.cutoff) < 0
}

func (c *collector) add(f *fileResult) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.matches += f.matches
	c.files++
	if f.lines == nil || (c.cutoff != nil && f.key.compare(*c.cutoff) >= 0) {
		return
	}
	c.stored = append(c.stored, f)
	c.kept += countMatches(f.lines)
	for len(c.stored) > 1 {
		last := 0
		for i, s := range c.stored {
			if s.key.compare(c.stored[last].key) > 0 {
				last = i
			}
		}
		l := c.stored[last]
		n := countMatches(l.lines)
		if c.kept-n < c.max {
			break
		}
		c.kept -= n
		c.cutoff = &l.key
		c.stored[last] = c.stored[len(c.stored)-1]
		c.stored = c.stored[:len(c.stored)-1]
	}
}
