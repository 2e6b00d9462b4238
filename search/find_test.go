package search

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func find(t *testing.T, opts Options, glob string) *FindResult {
	t.Helper()
	r, err := Find(context.Background(), opts, glob)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestFindOrder: newest first, then by path; the rules apply as for grep;
// withheld, binary and large files are listed (names only); a link has
// its target's time.
func TestFindOrder(t *testing.T) {
	w := newWorkspace(t)
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	filepath.WalkDir(w.root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			err = os.Chtimes(p, now, now)
		}
		return err
	})
	old := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, p := range []string{"main.go", "docs/guide.md", "sub/deep/a/b/c.md"} {
		mt := old.Add(time.Duration(i) * time.Hour)
		if err := os.Chtimes(filepath.Join(w.root, filepath.FromSlash(p)), mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	r := find(t, w.opts(), "*.{go,md,txt,bin,env}")
	same(t, "find", r.String(), `.env
big.txt
binary.bin
crlf.txt
latin1.txt
long.txt
other/api.gen.md
other/only-top.txt
sub/important.txt
unsaved-adds.go
unsaved-keeps.go
unsaved-removes.go
ws-only/.hidden/needle.txt
sub/deep/a/b/c.md
docs/guide.md
link.go
main.go

(skipped: 2 symbolic links to outside the workspace)
`)
	same(t, "summary", r.Summary(), "17 files")
	if f := r.Files[16]; !f.ModTime.Equal(old) || f.Size != 40 {
		t.Errorf("main.go: %+v", f)
	}
	if f := r.Files[1]; f.Size != 50<<20 || !f.ModTime.Equal(now) {
		t.Errorf("big.txt: %+v", f)
	}
}

func TestFindGlobs(t *testing.T) {
	w := newWorkspace(t)
	for _, c := range []struct{ path, glob, want string }{
		{"", "**/*.md", "docs/guide.md other/api.gen.md sub/deep/a/b/c.md"},
		{"", "*.md", "docs/guide.md other/api.gen.md sub/deep/a/b/c.md"},
		{"", "sub/**", "sub/.gitignore sub/deep/a/b/c.md sub/important.txt"},
		{"", "sub/*", "sub/.gitignore sub/important.txt"},
		{"", "./main.go", "main.go"},
		{"", "m?in.go", "main.go"},
		{"sub", "**/c.md", "sub/deep/a/b/c.md"},
		{"sub", "deep/**/*.md", "sub/deep/a/b/c.md"},
		{"sub/deep", "*", "sub/deep/a/b/c.md"},
		{"loop/docs", "*", "loop/docs/guide.md"}, // through the link to the root
		{"main.go", "*.txt", "main.go"},
		{"", "nothing*", ""},
	} {
		r := find(t, Options{Roots: []string{w.root}, Path: c.path}, c.glob)
		var got []string
		for _, f := range r.Files {
			got = append(got, f.Path)
		}
		slices.Sort(got) // by path, to leave out the times
		if g := strings.Join(got, " "); g != c.want {
			t.Errorf("path %q glob %q: %s, want %s", c.path, c.glob, g, c.want)
		}
	}
	if _, err := Find(context.Background(), w.opts(), ""); err == nil || !strings.Contains(err.Error(), "empty glob") {
		t.Errorf("empty glob: %v", err)
	}
	if _, err := Find(context.Background(), w.opts(), "{a,b"); err == nil || !strings.Contains(err.Error(), `invalid glob "{a,b"`) {
		t.Errorf("bad glob: %v", err)
	}
	if _, err := Find(context.Background(), Options{Roots: []string{w.root}, Path: "../elsewhere"}, "*"); err == nil || !strings.Contains(err.Error(), "outside the workspace") {
		t.Errorf("outside: %v", err)
	}
}

func TestFindCaps(t *testing.T) {
	dir := t.TempDir()
	isolate(t)
	files := map[string]string{}
	for i := range 300 {
		files[fmt.Sprintf("f%03d.txt", i)] = ""
	}
	write(t, dir, files)
	old := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 300 {
		mt := old.Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(filepath.Join(dir, fmt.Sprintf("f%03d.txt", i)), mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	r := find(t, Options{Roots: []string{dir}}, "*.txt")
	var want strings.Builder
	for i := 299; i >= 100; i-- {
		fmt.Fprintf(&want, "f%03d.txt\n", i)
	}
	want.WriteString("\n[100 more files not shown: narrow the search with a path or a more specific glob]\n")
	same(t, "capped", r.String(), want.String())
	same(t, "summary", r.Summary(), "300 files (200 shown)")
	r = find(t, Options{Roots: []string{dir}, MaxBytes: 500}, "*.txt")
	if len(r.String()) > 500 || r.Shown < 10 || !strings.HasSuffix(r.String(), fmt.Sprintf("[%d more files not shown: narrow the search with a path or a more specific glob]\n", 300-r.Shown)) {
		t.Errorf("capped by bytes, %d shown:\n%s", r.Shown, r)
	}
}
