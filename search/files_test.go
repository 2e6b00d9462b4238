package search

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestNamedFiles (AllNames, then RankNames): a completion list's order (name prefix, name, path,
// scattered in the name, scattered in the path; shorter first), ignored
// and withheld files left out, the limit and "more", an empty query newest
// first.
func TestNamedFiles(t *testing.T) {
	root := t.TempDir()
	files := []string{
		"auth/login.go", "auth/handler.go", "web/catalog/list.go", "blog.md", "docs/log/readme.md",
		"lib/big_loader.go", "ignored/log.txt", ".git/logs/HEAD", ".env", "node_modules/x/log.js",
	}
	for i, f := range files {
		p := filepath.Join(root, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		mt := time.Date(2024, 1, 1, i, 0, 0, 0, time.UTC)
		os.Chtimes(p, mt, mt)
	}
	os.WriteFile(filepath.Join(root, ".gitignore"), []byte("ignored/\nnode_modules/\n"), 0o644)
	os.Chtimes(filepath.Join(root, ".gitignore"), time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC))
	opts := Options{Roots: []string{root}, Withhold: func(p string) bool { return filepath.Base(p) == ".env" }}
	named := func(q string, limit int) ([]string, bool) {
		t.Helper()
		all, err := AllNames(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		fs, more := RankNames(all, q, limit)
		var out []string
		for _, f := range fs {
			out = append(out, f.Path)
		}
		return out, more
	}
	for _, c := range []struct {
		q    string
		want string
	}{
		// login.go's name starts with "log"; blog.md's name holds it;
		// docs/log/ and web/catalog/ hold it in the path (the shorter
		// first); big_loader.go has l, o, g in its name, apart.
		{"log", "auth/login.go blog.md docs/log/readme.md web/catalog/list.go lib/big_loader.go"},
		{"LOG", "auth/login.go blog.md docs/log/readme.md web/catalog/list.go lib/big_loader.go"},
		// handler.go has a, l, g in its name; the others only in the path.
		{"alg", "auth/handler.go auth/login.go web/catalog/list.go"},
		{"bldr", "lib/big_loader.go"},
		{"zzz", ""},
	} {
		got, more := named(c.q, 50)
		if strings.Join(got, " ") != c.want || more {
			t.Errorf("%q: got %q (more %v), want %q", c.q, got, more, c.want)
		}
	}
	// Every file but the ignored, withheld and .git's, newest first.
	all, more := named("", 50)
	if want := []string{"lib/big_loader.go", "docs/log/readme.md", "blog.md", "web/catalog/list.go", "auth/handler.go", "auth/login.go", ".gitignore"}; !slices.Equal(all, want) || more {
		t.Errorf("empty query: got %q (more %v), want %q", all, more, want)
	}
	two, more := named("", 2)
	if !slices.Equal(two, []string{"lib/big_loader.go", "docs/log/readme.md"}) || !more {
		t.Errorf("limit 2: got %q, more %v", two, more)
	}
}
