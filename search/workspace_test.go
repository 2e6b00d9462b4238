package search

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// isolate points git's global configuration at an empty home, so that the
// machine's own excludes file cannot change what the tests see; it
// returns the XDG config folder.
func isolate(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	xdg := filepath.Join(home, ".config")
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", xdg)
	return xdg
}

// write creates the files of a map of slash path to text under dir.
func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, text := range files {
		abs := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(abs, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// workspace builds a folder with every case the rules name. Each file
// that may be searched holds "needle"; what the rules exclude says so.
type workspace struct {
	root    string
	outside string // a folder beside the root, outside the workspace
	overlay mapOverlay
}

func newWorkspace(t *testing.T) *workspace {
	t.Helper()
	xdg := isolate(t)
	write(t, xdg, map[string]string{"git/ignore": "*.swp\n"})
	base := t.TempDir()
	w := &workspace{root: filepath.Join(base, "ws"), outside: filepath.Join(base, "elsewhere")}
	write(t, w.outside, map[string]string{"secret.txt": "needle outside\n"})
	write(t, w.root, map[string]string{
		".gitignore": "# comment\n*.log\n!keep.log\nbuild/\n/only-top.txt\nnode_modules\ndocs/**/*.gen.md\ntrailing.txt   \n",
		".ignore":    "ignored-by-ignore.txt\n!ignore-keeps.log\n!sub/notes.txt\n",
		// A repository's own files: never searched.
		".git/config":                "[core]\n\tneedle = git\n",
		".git/HEAD":                  "ref: refs/heads/main\n",
		".git/info/exclude":          "excluded-by-info.txt\n",
		"main.go":                    "package main\n\nfunc main() {\n\tneedle()\n}\n",
		"keep.log":                   "needle kept by negation\n",
		"debug.log":                  "needle in an ignored log\n",
		"only-top.txt":               "needle anchored to the top\n",
		"trailing.txt":               "needle ignored despite trailing spaces in the pattern\n",
		"build/out.txt":              "needle in build\n",
		"node_modules/x/index.js":    "needle in node_modules\n",
		"ignored-by-ignore.txt":      "needle ignored by .ignore\n",
		"excluded-by-info.txt":       "needle excluded by info/exclude\n",
		"editor.swp":                 "needle excluded globally\n",
		"docs/guide.md":              "needle guide\n",
		"docs/api.gen.md":            "needle generated at depth 0\n",
		"docs/v1/deep/api.gen.md":    "needle generated deeper\n",
		"other/api.gen.md":           "needle not under docs\n",
		"other/only-top.txt":         "needle: /only-top.txt is anchored to the top\n",
		"sub/.gitignore":             "*.txt\n!important.txt\n",
		"sub/important.txt":          "needle important\n",
		"sub/notes.txt":              "needle notes: sub's .gitignore wins over the root's .ignore\n",
		"ignore-keeps.log":           "needle: .ignore wins over .gitignore\n",
		"sub/plain.txt":              "needle in a nested-ignored txt\n",
		"sub/only-top.txt":           "needle, but .txt is ignored here anyway\n",
		"sub/build/x.go":             "needle in a nested build folder\n",
		"sub/deep/a/b/c.md":          "needle deep\n",
		"crlf.txt":                   "first\r\nneedle crlf\r\nlast\r\n",
		"latin1.txt":                 "caf\xe9 needle\n",
		"binary.bin":                 "needle\x00\x01\x02",
		".env":                       "SECRET=needle\n",
		"long.txt":                   strings.Repeat("a", 500) + " needle " + strings.Repeat("b", 500) + "\n",
		"unsaved-adds.go":            "package x\n",
		"unsaved-removes.go":         "needle removed in the buffer\n",
		"unsaved-keeps.go":           "needle saved\nneedle saved\n",
		"ws-only/.hidden/needle.txt": "needle in a hidden folder\n",
	})
	// 50 MB, sparse: too large to search.
	f, err := os.Create(filepath.Join(w.root, "big.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("needle in a big file\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(50 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	symlink(t, ".", filepath.Join(w.root, "loop"))
	symlink(t, "..", filepath.Join(w.root, "sub", "deep", "up"))
	symlink(t, w.outside, filepath.Join(w.root, "outside"))
	symlink(t, filepath.Join(w.outside, "secret.txt"), filepath.Join(w.root, "outside.txt"))
	symlink(t, "main.go", filepath.Join(w.root, "link.go"))
	symlink(t, "nowhere", filepath.Join(w.root, "dangling"))
	if err := syscall.Mkfifo(filepath.Join(w.root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	w.overlay = mapOverlay{
		filepath.Join(w.root, "unsaved-adds.go"):    "package x\n\n// needle added\n",
		filepath.Join(w.root, "unsaved-removes.go"): "nothing here now\n",
		filepath.Join(w.root, "unsaved-keeps.go"):   "needle saved\nneedle new\nneedle saved\nneedle saved\n",
		filepath.Join(w.root, "new.go"):             "needle in a new file\n",
		filepath.Join(w.root, "build", "new.go"):    "needle in a new file in an ignored folder\n",
		filepath.Join(w.outside, "open.go"):         "needle in a buffer outside\n",
	}
	// Fixed times for Find's order: newest first.
	old := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, p := range []string{"main.go", "docs/guide.md", "sub/deep/a/b/c.md"} {
		mt := old.Add(time.Duration(i) * time.Hour)
		if err := os.Chtimes(filepath.Join(w.root, filepath.FromSlash(p)), mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

func (w *workspace) opts() Options {
	return Options{
		Roots:    []string{w.root},
		Withhold: func(p string) bool { return filepath.Base(p) == ".env" || filepath.Base(p) == "secret.txt" },
	}
}
