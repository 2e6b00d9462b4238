package editortest

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Editor is one installed version of an editor the client suites run in.
type Editor struct {
	// Name tells the version apart in a subtest's name: "path" for the one
	// on PATH (Debian's), else the cache folder's version ("0.10.4").
	Name string
	// Path is the program to run.
	Path string
}

// CacheDir is where editors/install-newer.sh puts the newer editors:
// $CTXLS_EDITORS, else ~/.cache/ctxls/editors.
func CacheDir() string {
	if d := os.Getenv("CTXLS_EDITORS"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".cache", "ctxls", "editors")
}

// Editors is every version of the editor program (nvim, emacs) the suites
// run in: the one on PATH first, then each that editors/install-newer.sh
// put in CacheDir (folders named program-version holding bin/program), in
// version order. Outside CI an editor found nowhere skips the test; in CI
// (where .ci/run installs them all) it fails it.
func Editors(t *testing.T, program string) []Editor {
	t.Helper()
	var out []Editor
	if p, err := exec.LookPath(program); err == nil {
		out = append(out, Editor{Name: "path", Path: p})
	}
	if dir := CacheDir(); dir != "" {
		matches, _ := filepath.Glob(filepath.Join(dir, program+"-*", "bin", program))
		slices.SortFunc(matches, func(a, b string) int { return compareVersions(versionOf(a, program), versionOf(b, program)) })
		for _, m := range matches {
			out = append(out, Editor{Name: versionOf(m, program), Path: m})
		}
	}
	if len(out) == 0 {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed; .ci/run installs it", program)
		}
		t.Skipf("%s is not installed", program)
	}
	return out
}

// versionOf is the version in a cached program's folder name.
func versionOf(path, program string) string {
	return strings.TrimPrefix(filepath.Base(filepath.Dir(filepath.Dir(path))), program+"-")
}

// compareVersions orders dotted versions by their numbers.
func compareVersions(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		if c := compareNumbers(as[i], bs[i]); c != 0 {
			return c
		}
	}
	return len(as) - len(bs)
}

func compareNumbers(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}
