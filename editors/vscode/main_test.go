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

// packageExtension returns the path of the packaged extension.
func packageExtension(t *testing.T) string {
	t.Helper()
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
