package search

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ctxls/ctxls/internal/human"
)

func grep(t *testing.T, opts Options, q GrepQuery, ov Overlay) *GrepResult {
	t.Helper()
	r, err := Grep(context.Background(), opts, q, ov)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func same(t *testing.T, what, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("%s:\n--- got\n%s\n--- want\n%s", what, got, want)
	}
}

// TestGrepWorkspace: every rule at once. What must not appear: .git's
// files, what .gitignore (nested, negated, anchored, folder-only, **,
// trailing spaces), .ignore, info/exclude and the global excludes file
// exclude, the loop links' second visits, the links to outside, the pipe,
// the binary and the 50 MB file, .env (withheld), the buffer outside the
// workspace and the new buffer in an ignored folder; the buffer that
// removed its match shows none.
func TestGrepWorkspace(t *testing.T) {
	w := newWorkspace(t)
	r := grep(t, w.opts(), GrepQuery{Pattern: "needle"}, w.overlay)
	long := "…" + strings.Repeat("a", 99) + " needle " + strings.Repeat("b", 193) + "…"
	same(t, "text", r.String(), `crlf.txt:2: needle crlf

docs/guide.md:1: needle guide

ignore-keeps.log:1: needle: .ignore wins over .gitignore

keep.log:1: needle kept by negation

latin1.txt:1: caf`+"\uFFFD"+` needle

link.go:4: 	needle()

long.txt:1: `+long+`

main.go:4: 	needle()

new.go:1: needle in a new file  (unsaved)

other/api.gen.md:1: needle not under docs

other/only-top.txt:1: needle: /only-top.txt is anchored to the top

sub/deep/a/b/c.md:1: needle deep

sub/important.txt:1: needle important

unsaved-adds.go:3: // needle added  (unsaved)

unsaved-keeps.go:1: needle saved
unsaved-keeps.go:2: needle new  (unsaved)
unsaved-keeps.go:3: needle saved
unsaved-keeps.go:4: needle saved  (unsaved)

ws-only/.hidden/needle.txt:1: needle in a hidden folder

(skipped: 1 binary file, 1 file over 10 MB, 2 unreadable files or folders, 1 withheld file (not shown to the model), 2 symbolic links to outside the workspace)
`)
	same(t, "summary", r.Summary(), "19 matches in 16 files")
	want := Skipped{Binary: 1, TooLarge: 1, Unreadable: 2, Withheld: 1, Outside: 2, maxSize: defaultMaxFileSize}
	if r.Skipped != want {
		t.Errorf("skipped %+v, want %+v", r.Skipped, want)
	}
	if len([]rune(long)) != maxLine+2 {
		t.Errorf("the long line's window is %d runes", len([]rune(long)))
	}
	// The structured result says the same.
	if len(r.Files) != 16 || r.Files[14].Path != "unsaved-keeps.go" || !r.Files[14].Lines[1].Unsaved || r.Files[14].Lines[0].Unsaved {
		t.Errorf("files: %+v", r.Files)
	}
}

// TestGrepDiskOnly: without the overlay, the disk's text. With a glob,
// only skipped files it matches are counted (and links to folders
// outside, which might hold some).
func TestGrepDiskOnly(t *testing.T) {
	w := newWorkspace(t)
	r := grep(t, w.opts(), GrepQuery{Pattern: "needle", Glob: "unsaved-*"}, nil)
	same(t, "text", r.String(), `unsaved-keeps.go:1: needle saved
unsaved-keeps.go:2: needle saved

unsaved-removes.go:1: needle removed in the buffer

(skipped: 1 symbolic link to outside the workspace)
`)
}

func TestGrepGlobAndPath(t *testing.T) {
	w := newWorkspace(t)
	paths := func(r *GrepResult) string {
		var p []string
		for _, f := range r.Files {
			p = append(p, f.Path)
		}
		return strings.Join(p, " ")
	}
	for _, c := range []struct {
		path, glob, want string
	}{
		{"", "*.go", "link.go main.go new.go unsaved-adds.go unsaved-keeps.go"},
		{"", "**/*.md", "docs/guide.md other/api.gen.md sub/deep/a/b/c.md"},
		{"", "sub/**/*.md", "sub/deep/a/b/c.md"},
		{"", "*.{log,txt}", "crlf.txt ignore-keeps.log keep.log latin1.txt long.txt other/only-top.txt sub/important.txt ws-only/.hidden/needle.txt"},
		{"sub", "", "sub/deep/a/b/c.md sub/important.txt"},
		{"sub", "deep/**", "sub/deep/a/b/c.md"}, // relative to Path
		{w.root + "/sub/deep", "", "sub/deep/a/b/c.md"},
		{"sub/important.txt", "", "sub/important.txt"},
		{"sub/important.txt", "*.go", "sub/important.txt"}, // a file named is searched
		{"docs/api.gen.md", "", "docs/api.gen.md"},         // named, so searched though ignored
		{"build", "", "build/new.go build/out.txt"},        // the same for a folder
		{"loop/sub", "", "loop/sub/deep/a/b/c.md loop/sub/important.txt"},
		{"new.go", "", "new.go"}, // an unsaved buffer's path
	} {
		r := grep(t, Options{Roots: []string{w.root}, Path: c.path}, GrepQuery{Pattern: "needle", Glob: c.glob}, w.overlay)
		if got := paths(r); got != c.want {
			t.Errorf("path %q glob %q: %s, want %s", c.path, c.glob, got, c.want)
		}
	}
}

func TestGrepContext(t *testing.T) {
	dir := t.TempDir()
	isolate(t)
	var lines []string
	for i := 1; i <= 12; i++ {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	lines[2], lines[4], lines[10] = "match 3", "match 5", "match 11"
	write(t, dir, map[string]string{"a.txt": strings.Join(lines, "\n") + "\n", "b.txt": "match 1\nline 2\n"})
	r := grep(t, Options{Roots: []string{dir}}, GrepQuery{Pattern: `^match`, ContextLines: 1}, nil)
	same(t, "context 1", r.String(), `a.txt-2- line 2
a.txt:3: match 3
a.txt-4- line 4
a.txt:5: match 5
a.txt-6- line 6
--
a.txt-10- line 10
a.txt:11: match 11
a.txt-12- line 12

b.txt:1: match 1
b.txt-2- line 2
`)
	r = grep(t, Options{Roots: []string{dir}, Path: "a.txt"}, GrepQuery{Pattern: `^match`, ContextLines: 3}, nil)
	same(t, "context 3", r.String(), `a.txt-1- line 1
a.txt-2- line 2
a.txt:3: match 3
a.txt-4- line 4
a.txt:5: match 5
a.txt-6- line 6
a.txt-7- line 7
a.txt-8- line 8
a.txt-9- line 9
a.txt-10- line 10
a.txt:11: match 11
a.txt-12- line 12
`)
	// Capped at two matches: the second match's context after it stays,
	// the third's before it goes.
	r = grep(t, Options{Roots: []string{dir}, Path: "a.txt", MaxResults: 2}, GrepQuery{Pattern: `^match`, ContextLines: 1}, nil)
	same(t, "context capped", r.String(), `a.txt-2- line 2
a.txt:3: match 3
a.txt-4- line 4
a.txt:5: match 5
a.txt-6- line 6

[1 more match in 1 file not shown: narrow the search with a path or a glob, or a more specific pattern]
`)
}

func TestGrepPatterns(t *testing.T) {
	dir := t.TempDir()
	isolate(t)
	write(t, dir, map[string]string{
		"h.go": "func fooHandler(w) {}\nfunc fooHandler (w)\nvar x = fooHandler(1)\nfunc BarHandler(r) {\n",
		// The Kelvin sign folds to k: found by a case-insensitive k.
		"k.txt":    "\u212Aelvin\nkelvin\nKELVIN\nnothing\n",
		"c.txt":    "Hello World\nhello world\nHELLO WORLD\nhelloworld\n",
		"long.txt": strings.Repeat("a", 1000) + "123x" + strings.Repeat("b", 1000) + "\n",
	})
	for _, c := range []struct {
		q    GrepQuery
		want string
	}{
		{GrepQuery{Pattern: `func \w+Handler\(`}, "h.go:1: func fooHandler(w) {}\nh.go:4: func BarHandler(r) {\n"},
		{GrepQuery{Pattern: `kelvin`, IgnoreCase: true}, "k.txt:1: \u212Aelvin\nk.txt:2: kelvin\nk.txt:3: KELVIN\n"},
		{GrepQuery{Pattern: `kelvin`}, "k.txt:2: kelvin\n"},
		{GrepQuery{Pattern: `hello world`, IgnoreCase: true}, "c.txt:1: Hello World\nc.txt:2: hello world\nc.txt:3: HELLO WORLD\n"},
		{GrepQuery{Pattern: `(?i)hello\s+WORLD$`}, "c.txt:1: Hello World\nc.txt:2: hello world\nc.txt:3: HELLO WORLD\n"},
		{GrepQuery{Pattern: `^hello`}, "c.txt:2: hello world\nc.txt:4: helloworld\n"},
		{GrepQuery{Pattern: `o w|ow`}, "c.txt:2: hello world\nc.txt:4: helloworld\n"},
		{GrepQuery{Pattern: `nothing$`}, "k.txt:4: nothing\n"},
		// A long line is cut around the match, found line by line here.
		{GrepQuery{Pattern: `\d{3}[xy]`}, "long.txt:1: …" + strings.Repeat("a", 100) + "123x" + strings.Repeat("b", 196) + "…\n"},
	} {
		r := grep(t, Options{Roots: []string{dir}}, c.q, nil)
		same(t, fmt.Sprintf("%+v", c.q), r.String(), c.want)
	}
}

func TestGrepErrors(t *testing.T) {
	w := newWorkspace(t)
	for _, c := range []struct {
		opts    Options
		q       GrepQuery
		want    string
		outside bool
	}{
		{w.opts(), GrepQuery{Pattern: "func ("}, "invalid regular expression \"func (\": missing closing ): `func (`", false},
		{w.opts(), GrepQuery{Pattern: "a[b"}, "invalid regular expression \"a[b\": missing closing ]: `[b`", false},
		{w.opts(), GrepQuery{Pattern: ""}, "empty pattern", false},
		{w.opts(), GrepQuery{Pattern: `a\nb`}, "contains a line break", false},
		{w.opts(), GrepQuery{Pattern: "x", Glob: "[a-"}, `invalid glob "[a-"`, false},
		{Options{}, GrepQuery{Pattern: "x"}, "no workspace folders", false},
		{Options{Roots: []string{"relative"}}, GrepQuery{Pattern: "x"}, "not an absolute path", false},
		{Options{Roots: []string{w.root}, Path: "../elsewhere"}, GrepQuery{Pattern: "x"}, "path ../elsewhere is outside the workspace (the workspace folder is " + w.root + ")", true},
		{Options{Roots: []string{w.root}, Path: w.outside}, GrepQuery{Pattern: "x"}, "outside the workspace", true},
		{Options{Roots: []string{w.root}, Path: "/etc/passwd"}, GrepQuery{Pattern: "x"}, "outside the workspace", true},
		{Options{Roots: []string{w.root}, Path: "outside"}, GrepQuery{Pattern: "x"}, "path outside is outside the workspace: it leads through a symbolic link", true},
		{Options{Roots: []string{w.root}, Path: "outside/secret.txt"}, GrepQuery{Pattern: "x"}, "symbolic link", true},
		{Options{Roots: []string{w.root}, Path: "outside.txt"}, GrepQuery{Pattern: "x"}, "symbolic link", true},
		{Options{Roots: []string{w.root}, Path: "no/such"}, GrepQuery{Pattern: "x"}, "path no/such does not exist", false},
		{Options{Roots: []string{w.root}, Path: ".git"}, GrepQuery{Pattern: "x"}, "inside a .git folder", false},
		{Options{Roots: []string{w.root}, Path: ".git/config"}, GrepQuery{Pattern: "x"}, "inside a .git folder", false},
	} {
		_, err := Grep(context.Background(), c.opts, c.q, w.overlay)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v %+v: %v, want %q", c.opts.Path, c.q, err, c.want)
			continue
		}
		if errors.Is(err, errOutside) != c.outside {
			t.Errorf("%s: errors.Is(errOutside) = %v", err, !c.outside)
		}
	}
}

// TestGrepCaps: 10,000 matches are counted and 100 shown, with how many
// were left out; MaxBytes cuts the text the same way.
func TestGrepCaps(t *testing.T) {
	dir := t.TempDir()
	isolate(t)
	var b strings.Builder
	for i := 1; i <= 10000; i++ {
		fmt.Fprintf(&b, "needle %d\n", i)
	}
	write(t, dir, map[string]string{"a.txt": "needle a\n", "b.txt": b.String(), "c.txt": "needle c\n"})
	r := grep(t, Options{Roots: []string{dir}}, GrepQuery{Pattern: "needle"}, nil)
	var want strings.Builder
	want.WriteString("a.txt:1: needle a\n\n")
	for i := 1; i <= 99; i++ {
		fmt.Fprintf(&want, "b.txt:%d: needle %d\n", i, i)
	}
	want.WriteString("\n[9,902 more matches in 2 files not shown: narrow the search with a path or a glob, or a more specific pattern]\n")
	same(t, "capped", r.String(), want.String())
	same(t, "summary", r.Summary(), "10,002 matches in 3 files (100 shown)")
	if r.Matches != 10002 || r.Shown != 100 || r.FilesMatched != 3 || len(r.Files) != 2 || r.Files[1].Matches != 10000 || len(r.Files[1].Lines) != 99 {
		t.Errorf("%d matches, %d shown, %d files, %+v", r.Matches, r.Shown, r.FilesMatched, len(r.Files))
	}

	r = grep(t, Options{Roots: []string{dir}, MaxBytes: 1000, MaxResults: 10000}, GrepQuery{Pattern: "needle"}, nil)
	if n := len(r.String()); n > 1000 {
		t.Errorf("%d bytes over MaxBytes", n)
	}
	if !strings.HasSuffix(r.String(), fmt.Sprintf("\n[%s more matches in 2 files not shown: narrow the search with a path or a glob, or a more specific pattern]\n", human.Thousands(10002-r.Shown))) || r.Shown < 20 {
		t.Errorf("capped by bytes (%d shown):\n%s", r.Shown, r)
	}
}

// TestGrepCancel: a cancelled context stops the walk, before it starts
// and midway.
func TestGrepCancel(t *testing.T) {
	dir := t.TempDir()
	isolate(t)
	files := map[string]string{}
	for i := range 10 {
		for j := range 30 {
			files[fmt.Sprintf("d%d/f%d.txt", i, j)] = "needle\n"
		}
	}
	write(t, dir, files)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Grep(ctx, Options{Roots: []string{dir}}, GrepQuery{Pattern: "needle"}, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled before: %v", err)
	}
	if _, err := Find(ctx, Options{Roots: []string{dir}}, "*"); !errors.Is(err, context.Canceled) {
		t.Fatalf("find, cancelled before: %v", err)
	}
	if _, err := List(ctx, Options{Roots: []string{dir}}); !errors.Is(err, context.Canceled) {
		t.Fatalf("list, cancelled before: %v", err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	var seen atomic.Int64
	opts := Options{Roots: []string{dir}, Withhold: func(string) bool {
		if seen.Add(1) == 30 {
			cancel()
		}
		return false
	}}
	if _, err := Grep(ctx, opts, GrepQuery{Pattern: "needle"}, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled midway: %v", err)
	}
	// Each worker finishes at most the file in hand.
	if n := seen.Load(); n > 30+10 {
		t.Errorf("%d of %d files looked at after cancelling at 30", n, len(files))
	}
}

// TestGrepRoots: with several roots, paths start with the root's name (its
// absolute path when two share one), and Path takes them so.
func TestGrepRoots(t *testing.T) {
	isolate(t)
	base := t.TempDir()
	a, b := filepath.Join(base, "api"), filepath.Join(base, "web")
	c := filepath.Join(base, "other", "api")
	write(t, a, map[string]string{"x.go": "needle a\n"})
	write(t, b, map[string]string{"x.go": "needle b\n"})
	r := grep(t, Options{Roots: []string{a, b}}, GrepQuery{Pattern: "needle"}, nil)
	same(t, "two roots", r.String(), "api/x.go:1: needle a\n\nweb/x.go:1: needle b\n")
	r = grep(t, Options{Roots: []string{a, b}, Path: "web"}, GrepQuery{Pattern: "needle"}, nil)
	same(t, "path by root name", r.String(), "web/x.go:1: needle b\n")
	r = grep(t, Options{Roots: []string{a, b}, Path: "web/x.go"}, GrepQuery{Pattern: "needle"}, nil)
	same(t, "file by root name", r.String(), "web/x.go:1: needle b\n")
	r = grep(t, Options{Roots: []string{a, b}, Path: "x.go"}, GrepQuery{Pattern: "needle"}, nil)
	same(t, "relative to the first root", r.String(), "api/x.go:1: needle a\n")
	write(t, c, map[string]string{"x.go": "needle c\n"})
	r = grep(t, Options{Roots: []string{a, c}}, GrepQuery{Pattern: "needle"}, nil)
	same(t, "same names", r.String(), filepath.ToSlash(a)+"/x.go:1: needle a\n\n"+filepath.ToSlash(c)+"/x.go:1: needle c\n")
}

// TestGrepRootInRepo: a root inside a repository gets the rules of the
// folders above it, from the repository's top.
func TestGrepRootInRepo(t *testing.T) {
	isolate(t)
	repo := t.TempDir()
	write(t, repo, map[string]string{
		".git/HEAD":         "ref: refs/heads/main\n",
		".git/info/exclude": "/pkg/excluded.txt\n",
		".gitignore":        "*.tmp\n/pkg/gen/\n",
		"pkg/.gitignore":    "local.txt\n",
		"pkg/a.go":          "needle\n",
		"pkg/b.tmp":         "needle\n",
		"pkg/local.txt":     "needle\n",
		"pkg/excluded.txt":  "needle\n",
		"pkg/gen/g.go":      "needle\n",
		"pkg/sub/gen/g.go":  "needle\n",
	})
	r := grep(t, Options{Roots: []string{filepath.Join(repo, "pkg")}}, GrepQuery{Pattern: "needle"}, nil)
	same(t, "text", r.String(), "a.go:1: needle\n\nsub/gen/g.go:1: needle\n")
}

// TestGrepUnreadable: a folder the process may not read is counted and
// skipped (not as root, who reads everything).
func TestGrepUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root, which can read a mode-000 folder; the pipe and broken link cases in TestGrepWorkspace cover unreadable entries")
	}
	dir := t.TempDir()
	isolate(t)
	write(t, dir, map[string]string{"a.txt": "needle\n", "locked/b.txt": "needle\n", "c.txt": "needle\n"})
	if err := os.Chmod(filepath.Join(dir, "c.txt"), 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "locked"), 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(filepath.Join(dir, "locked"), 0o755)
	r := grep(t, Options{Roots: []string{dir}}, GrepQuery{Pattern: "needle"}, nil)
	same(t, "text", r.String(), "a.txt:1: needle\n\n(skipped: 2 unreadable files or folders)\n")
}
