package search

import (
	"fmt"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// A globber matches file paths against a glob (doublestar's syntax: *, ?,
// [...], {a,b}, and ** for any number of folders). A glob without a slash
// ("*.go", or "**/*.go") matches a file's name at any depth; one with a
// slash matches its path relative to its workspace folder, as results
// show it, or relative to Options.Path.
type globber struct {
	pat  string
	base bool
	// suffix: the glob is "*" and then this literal text.
	suffix string
	fast   bool
}

func newGlobber(glob string) (*globber, error) {
	p := strings.TrimPrefix(strings.TrimPrefix(glob, "./"), "/")
	if p == "" {
		return nil, fmt.Errorf("empty glob %q", glob)
	}
	if !doublestar.ValidatePattern(p) {
		return nil, fmt.Errorf("invalid glob %q: check its brackets [...] and braces {...}, and escape a lone backslash", glob)
	}
	g := &globber{pat: p}
	if rest, ok := strings.CutPrefix(p, "**/"); ok && !strings.Contains(rest, "/") && !strings.Contains(rest, "**") {
		p = rest
	}
	if !strings.Contains(p, "/") {
		g.pat, g.base = p, true
		if rest, ok := strings.CutPrefix(p, "*"); ok && !strings.ContainsAny(rest, `*?[]{}\`) {
			g.suffix, g.fast = rest, true
		}
	}
	return g, nil
}

// match: rel is the path relative to the root, display as results show
// it, fromStart relative to Options.Path ("" when Path is not a folder
// under the root).
func (g *globber) match(name, rel, display, fromStart string) bool {
	switch {
	case g.fast:
		return strings.HasSuffix(name, g.suffix)
	case g.base:
		return doublestar.MatchUnvalidated(g.pat, name)
	}
	return doublestar.MatchUnvalidated(g.pat, rel) ||
		(display != rel && doublestar.MatchUnvalidated(g.pat, display)) ||
		(fromStart != "" && doublestar.MatchUnvalidated(g.pat, fromStart))
}
