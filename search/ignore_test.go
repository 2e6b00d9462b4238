package search

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestPatterns: one pattern against paths relative to its file's folder,
// as `man gitignore` describes.
func TestPatterns(t *testing.T) {
	for _, c := range []struct {
		pattern string
		path    string
		dir     bool
		want    bool
	}{
		{"foo", "foo", false, true},
		{"foo", "a/b/foo", false, true},
		{"foo", "a/foo", true, true},
		{"foo", "foobar", false, false},
		{"foo/", "foo", true, true},
		{"foo/", "foo", false, false},
		{"foo/", "a/foo", true, true},
		{"/foo", "foo", false, true},
		{"/foo", "a/foo", false, false},
		{"a/foo", "a/foo", false, true},
		{"a/foo", "b/a/foo", false, false}, // a middle slash anchors
		{"*.log", "x.log", false, true},
		{"*.log", "d/x.log", false, true},
		{"*.log", "x.logs", false, false},
		{"a/*.c", "a/x.c", false, true},
		{"a/*.c", "a/b/x.c", false, false}, // * stops at a slash
		{"**/foo", "foo", false, true},
		{"**/foo", "a/b/foo", false, true},
		{"**/a/foo", "x/a/foo", false, true},
		{"**/a/foo", "a/foo", false, true},
		{"a/**", "a/x", false, true},
		{"a/**", "a/x/y", true, true},
		{"a/**", "a", true, false}, // inside a, not a
		{"a/**/b", "a/b", false, true},
		{"a/**/b", "a/x/y/b", false, true},
		{"a/**/b", "a/x/y/c", false, false},
		{"a**b", "axxb", false, true}, // ** within a name is *
		{"f?o", "foo", false, true},
		{"f?o", "fo", false, false},
		{"[abc].txt", "b.txt", false, true},
		{"[!abc].txt", "b.txt", false, false},
		{"[^abc].txt", "d.txt", false, true},
		{"[a-c]x", "bx", false, true},
		{"[a-c]x", "dx", false, false},
		{"[[:digit:]]x", "7x", false, true},
		{"[]]x", "]x", false, true},
		{`\#x`, "#x", false, true},
		{`\!x`, "!x", false, true},
		{`a\*b`, "a*b", false, true},
		{`a\*b`, "axb", false, false},
		{"x\\ ", "x ", false, true}, // an escaped trailing space stays
		{"x  ", "x", false, true},   // others go
		{"*", "anything", false, true},
		{"*.tar.gz", "a.tar.gz", false, true},
		{"doc/*/x", "doc/a/x", false, true},
		{"doc/*/x", "doc/x", false, false},
	} {
		p, ok := parsePattern(c.pattern)
		if !ok {
			t.Errorf("%q: not a pattern", c.pattern)
			continue
		}
		if got := p.match(c.path, baseName(c.path), c.dir); got != c.want {
			t.Errorf("%q on %q (dir %v): %v, want %v", c.pattern, c.path, c.dir, got, c.want)
		}
	}
	for _, line := range []string{"", "   ", "# comment", "/", "!"} {
		if _, ok := parsePattern(line); ok {
			t.Errorf("%q parsed as a pattern", line)
		}
	}
}

// TestChain: the last matching line of a file wins, a deeper file over a
// shallower one, .ignore over .gitignore; a negation re-includes.
func TestChain(t *testing.T) {
	node := func(parent *ignoreNode, dir string, lines ...string) *ignoreNode {
		var pats []pattern
		for _, l := range lines {
			if p, ok := parsePattern(l); ok {
				pats = append(pats, p)
			}
		}
		return &ignoreNode{parent: parent, dir: dir, pats: pats}
	}
	root := node(nil, "", "*.log", "!keep.log", "/top")
	sub := node(root, "sub", "!*.log", "x")
	above := &ignoreNode{above: "inner/", pats: node(nil, "", "/inner/gen", "*.o").pats}
	for _, c := range []struct {
		chain *ignoreNode
		path  string
		want  bool
	}{
		{root, "a.log", true},
		{root, "keep.log", false},
		{root, "d/keep.log", false},
		{root, "top", true},
		{root, "d/top", false},
		{sub, "sub/a.log", false}, // sub's negation wins
		{sub, "sub/x", true},
		{sub, "sub/d/x", true},
		{sub, "sub/keep.log", false},
		{above, "gen", true}, // /inner/gen, from the repository's top
		{above, "d/gen", false},
		{above, "d/a.o", true},
	} {
		if got := c.chain.ignored(c.path, baseName(c.path), false); got != c.want {
			t.Errorf("%s: %v, want %v", c.path, got, c.want)
		}
	}
}

// TestGlobalExcludes: core.excludesFile from ~/.gitconfig wins over
// $XDG_CONFIG_HOME/git/config's, and the default is
// $XDG_CONFIG_HOME/git/ignore.
func TestGlobalExcludes(t *testing.T) {
	xdg := isolate(t)
	home := filepath.Dir(xdg)
	dir := t.TempDir()
	write(t, dir, map[string]string{"a.swp": "needle\n", "b.bak": "needle\n", "c.tmp": "needle\n", "d.go": "needle\n"})
	files := func() string {
		r, err := Find(context.Background(), Options{Roots: []string{dir}}, "*")
		if err != nil {
			t.Fatal(err)
		}
		var paths []string
		for _, f := range r.Files {
			paths = append(paths, f.Path)
		}
		slices.Sort(paths)
		return strings.Join(paths, " ") + " "
	}
	if got := files(); got != "a.swp b.bak c.tmp d.go " {
		t.Errorf("no excludes file: %s", got)
	}
	write(t, xdg, map[string]string{"git/ignore": "*.swp\n"})
	if got := files(); got != "b.bak c.tmp d.go " {
		t.Errorf("default excludes file: %s", got)
	}
	write(t, xdg, map[string]string{"git/config": "[core]\n\texcludesFile = ~/xdg-excludes\n", "../xdg-excludes": "*.bak\n"})
	if got := files(); got != "a.swp c.tmp d.go " {
		t.Errorf("XDG config's excludes file: %s", got)
	}
	write(t, home, map[string]string{
		".gitconfig": "[user]\n\tname = x\n[core]\n\tautocrlf = false\n\texcludesfile = \"" + filepath.Join(home, "my ignore") + "\" ; a comment\n",
		"my ignore":  "*.tmp\n",
	})
	if got := files(); got != "a.swp b.bak d.go " {
		t.Errorf("~/.gitconfig's excludes file: %s", got)
	}
}

// TestWorktreeExclude: a .git file (a linked worktree or a submodule)
// points to the repository whose info/exclude applies.
func TestWorktreeExclude(t *testing.T) {
	isolate(t)
	main := t.TempDir()
	write(t, main, map[string]string{
		".git/info/exclude":           "shared.txt\n",
		".git/worktrees/wt/commondir": "../..\n",
	})
	wt := t.TempDir()
	write(t, wt, map[string]string{
		".git":       "gitdir: " + filepath.Join(main, ".git", "worktrees", "wt") + "\n",
		"shared.txt": "needle\n",
		"kept.txt":   "needle\n",
	})
	r := grep(t, Options{Roots: []string{wt}}, GrepQuery{Pattern: "needle"}, nil)
	same(t, "worktree", r.String(), "kept.txt:1: needle\n")
}
