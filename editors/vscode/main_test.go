package vscode_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// The extension is compiled and packaged once per test binary, as a user
// packages it (README: npx vsce package; its vscode:prepublish script is
// tsc -p ., which compiles src, test and e2e into out/). The protocol tests
// run from out/test, the e2e suite installs the .vsix; they run in parallel
// once it is made, and nothing writes out/ after that.
var packaged struct {
	once sync.Once
	dir  string // holds ctxls.vsix
	took time.Duration
	err  error
}

// prepackaged is the package .ci/run's build step makes before the tests
// (npx vsce package --out ctxls.vsix, here): used when it is newer than
// every file it and out/ are made from, so the test step does not make it
// again (tsc and vsce: about 18 CPU-seconds).
const prepackaged = "ctxls.vsix"

// packageSources are what the package and out/ are made from.
var packageSources = []string{"src", "media", "test", "e2e", "package.json", "package-lock.json", "tsconfig.json", ".vscodeignore", "README.md", "LICENSE"}

// fresh reports whether the file at path is newer than every package source.
func fresh(path string) bool {
	fi, err := os.Stat(path)
	if err != nil {
		return false
	}
	made := fi.ModTime()
	newer := false
	for _, src := range packageSources {
		filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
			if err != nil || newer {
				return filepath.SkipAll
			}
			if info, err := d.Info(); err == nil && !info.ModTime().Before(made) {
				newer = true
			}
			return nil
		})
	}
	return !newer
}

// packageExtension returns the path of the packaged extension.
func packageExtension(t *testing.T) string {
	t.Helper()
	if fresh(prepackaged) && fresh(filepath.Join("out", "e2e", "suite.js")) {
		abs, err := filepath.Abs(prepackaged)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("the extension as packaged before the tests: %s", abs)
		return abs
	}
	packaged.once.Do(func() {
		start := time.Now()
		if packaged.dir, packaged.err = os.MkdirTemp("", "ctxls-vsix-"); packaged.err != nil {
			return
		}
		pack := exec.Command("npx", "vsce", "package", "--out", filepath.Join(packaged.dir, "ctxls.vsix"))
		if out, err := pack.CombinedOutput(); err != nil {
			packaged.err = fmt.Errorf("vsce package: %v\n%s", err, out)
		}
		packaged.took = time.Since(start)
	})
	if packaged.err != nil {
		t.Fatal(packaged.err)
	}
	return filepath.Join(packaged.dir, "ctxls.vsix")
}

func TestMain(m *testing.M) {
	code := m.Run()
	if packaged.dir != "" {
		os.RemoveAll(packaged.dir)
	}
	os.Exit(code)
}
