package search

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

func list(t *testing.T, opts Options) *ListResult {
	t.Helper()
	r, err := List(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestListRoot: folders first, then by name; sizes, link targets (the
// root's "." for the loop), withheld files named and marked; a link
// outside says so and nothing of what it points to.
func TestListRoot(t *testing.T) {
	w := newWorkspace(t)
	r := list(t, w.opts())
	same(t, "root", r.String(), `docs/
loop -> ./
other/
sub/
ws-only/
.env  (14 B, withheld)
.gitignore  (93 B)
.ignore  (55 B)
big.txt  (50 MB)
binary.bin  (9 B)
crlf.txt  (26 B)
dangling -> (broken link)
fifo  (special file)
ignore-keeps.log  (37 B)
keep.log  (24 B)
latin1.txt  (12 B)
link.go -> main.go  (40 B)
long.txt  (1009 B)
main.go  (40 B)
outside -> (outside the workspace)
outside.txt -> (outside the workspace)
unsaved-adds.go  (10 B)
unsaved-keeps.go  (26 B)
unsaved-removes.go  (29 B)

(8 entries left out by .gitignore or .ignore rules)
`)
	same(t, "summary", r.Summary(), "24 entries")
	if r.Ignored != 8 || r.Entries[1].Kind != KindSymlink || r.Entries[1].TargetKind != KindDir || r.Entries[1].Target != "." {
		t.Errorf("%+v", r.Entries[:2])
	}
}

func TestListPaths(t *testing.T) {
	w := newWorkspace(t)
	for _, c := range []struct{ path, want string }{
		{"sub", "deep/\n.gitignore  (21 B)\nimportant.txt  (17 B)\n\n(4 entries left out by .gitignore or .ignore rules)\n"},
		{"sub/deep", "a/\nup -> sub/\n"},
		{"build", "out.txt  (16 B)\n"}, // named, so listed though ignored
		{"main.go", "main.go  (40 B)\n"},
		{"link.go", "link.go -> main.go  (40 B)\n"},
		{"loop/sub", "deep/\n.gitignore  (21 B)\nimportant.txt  (17 B)\n\n(4 entries left out by .gitignore or .ignore rules)\n"},
		{"ws-only/.hidden", "needle.txt  (26 B)\n"},
	} {
		r := list(t, Options{Roots: []string{w.root}, Path: c.path})
		same(t, c.path, r.String(), c.want)
	}
	for _, c := range []struct{ path, want string }{
		{"../elsewhere", "outside the workspace"},
		{"outside", "outside the workspace"},
		{"nothing", "does not exist"},
		{".git", "inside a .git folder"},
	} {
		if _, err := List(context.Background(), Options{Roots: []string{w.root}, Path: c.path}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.path, err, c.want)
		}
	}
}

func TestListRootsAndCaps(t *testing.T) {
	isolate(t)
	base := t.TempDir()
	a, b := filepath.Join(base, "api"), filepath.Join(base, "web")
	files := map[string]string{}
	for i := range 250 {
		files[fmt.Sprintf("f%03d", i)] = ""
	}
	write(t, a, files)
	write(t, b, map[string]string{"x/y": ""})
	r := list(t, Options{Roots: []string{a, b}})
	same(t, "roots", r.String(), "api/\nweb/\n")
	r = list(t, Options{Roots: []string{a, b}, Path: "web"})
	same(t, "a root by name", r.String(), "x/\n")
	r = list(t, Options{Roots: []string{a, b}, Path: "api"})
	var want strings.Builder
	for i := range 200 {
		fmt.Fprintf(&want, "f%03d  (0 B)\n", i)
	}
	want.WriteString("\n[50 more entries not shown: use find_files or grep with a glob to narrow]\n")
	same(t, "capped", r.String(), want.String())
	same(t, "summary", r.Summary(), "250 entries (200 shown)")
	r = list(t, Options{Roots: []string{b}, Path: "x/y"})
	same(t, "empty file", r.String(), "y  (0 B)\n")
	write(t, b, map[string]string{"empty/.gitignore": "*\n"})
	r = list(t, Options{Roots: []string{b}, Path: "empty"})
	same(t, "all ignored", r.String(), "(empty)\n\n(1 entry left out by .gitignore or .ignore rules)\n")
}
