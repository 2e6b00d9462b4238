package lsptest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"
)

// The built binary is shared by every test process of a `go test ./...`
// run (and by later runs): it lives in os.TempDir()/ctxls-test-bin-UID
// under a key that hashes
// every source file it is built from, so a changed source gives a new key
// and a new build, and an unchanged tree links nothing. Entries unused for
// binCacheMaxAge are removed (every BuildBinary call marks its entry used).
const (
	binCacheName   = "ctxls-test-bin"
	binCacheMaxAge = time.Hour
)

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// BuildBinary returns the path of cmd/ctxls built from the current sources,
// building it only when no test process built these sources before.
func BuildBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() { buildPath, buildErr = cachedBuild(moduleRoot()) })
	if buildErr != nil {
		t.Fatalf("building ctxls: %v", buildErr)
	}
	now := time.Now()
	_ = os.Chtimes(filepath.Dir(buildPath), now, now) // in use: not stale
	return buildPath
}

// moduleRoot finds the repository root from this source file.
func moduleRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// cachedBuild returns the cached binary for the sources under root, building
// it under the cache's lock when it is missing.
func cachedBuild(root string) (string, error) {
	key, err := sourceKey(root)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("%s-%d", binCacheName, os.Getuid()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	unlock, err := lockDir(dir)
	if err != nil {
		return "", err
	}
	defer unlock()
	removeStale(dir)
	for range 3 {
		bin := filepath.Join(dir, key, "ctxls")
		if _, err := os.Stat(bin); err == nil {
			now := time.Now()
			_ = os.Chtimes(filepath.Join(dir, key), now, now) // in use: not stale
			return bin, nil
		}
		tmp, err := os.MkdirTemp(dir, "build-")
		if err != nil {
			return "", err
		}
		defer os.RemoveAll(tmp)
		cmd := exec.Command("go", "build", "-o", filepath.Join(tmp, "ctxls"), "./cmd/ctxls")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("%v\n%s", err, out)
		}
		// A source that changed while it was built may be in the binary
		// or not: keep that build out of the cache and build again.
		again, err := sourceKey(root)
		if err != nil {
			return "", err
		}
		if again != key {
			key = again
			continue
		}
		if err := os.Rename(tmp, filepath.Join(dir, key)); err != nil {
			if _, serr := os.Stat(bin); serr != nil {
				return "", err
			}
			// Another process (without a lock: see lockDir) was first.
		}
		return bin, nil
	}
	return "", fmt.Errorf("the sources kept changing while ctxls was built")
}

// removeStale removes cache entries unused for binCacheMaxAge, and the
// per-process build folders of older versions of BuildBinary
// (os.TempDir()/ctxls-bin-*) once they are an hour old. The cache's lock
// is held.
func removeStale(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if info, err := e.Info(); err == nil && e.IsDir() && time.Since(info.ModTime()) > binCacheMaxAge {
			_ = os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
	old, _ := filepath.Glob(filepath.Join(os.TempDir(), "ctxls-bin-*"))
	for _, d := range old {
		if info, err := os.Stat(d); err == nil && info.IsDir() && time.Since(info.ModTime()) > time.Hour {
			_ = os.RemoveAll(d)
		}
	}
}

// sourceKey hashes what `go build ./cmd/ctxls` reads: the toolchain and
// its settings, go.mod and go.sum, every file of the module's own packages
// it imports (Go sources and embedded files), and the version of every
// other module's package.
func sourceKey(root string) (string, error) {
	h := sha256.New()
	env := exec.Command("go", "env", "GOVERSION", "GOROOT", "GOOS", "GOARCH", "GOAMD64", "GOARM64", "CGO_ENABLED", "GOFLAGS", "GOEXPERIMENT", "CC")
	env.Dir = root
	out, err := env.Output()
	if err != nil {
		return "", fmt.Errorf("go env: %v", err)
	}
	h.Write(out)
	for _, name := range []string{"go.mod", "go.sum"} {
		if err := hashFile(h, filepath.Join(root, name)); err != nil {
			return "", err
		}
	}
	list := exec.Command("go", "list", "-deps", "-json=ImportPath,Dir,Standard,Module,GoFiles,CgoFiles,CFiles,CXXFiles,HFiles,SFiles,SysoFiles,EmbedFiles", "./cmd/ctxls")
	list.Dir = root
	var stderr bytes.Buffer
	list.Stderr = &stderr
	out, err = list.Output()
	if err != nil {
		return "", fmt.Errorf("go list: %v\n%s", err, stderr.String())
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath, Dir string
			Standard        bool
			Module          *struct {
				Path, Version string
				Main          bool
				Replace       *struct{ Path, Version string }
			}
			GoFiles, CgoFiles, CFiles, CXXFiles, HFiles, SFiles, SysoFiles, EmbedFiles []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return "", fmt.Errorf("go list: %v", err)
		}
		if p.Standard {
			continue // GOVERSION and GOROOT cover it
		}
		fmt.Fprintf(h, "package %s\n", p.ImportPath)
		if m := p.Module; m != nil && !m.Main && (m.Replace == nil || m.Replace.Version != "") {
			// A module from the module cache: its version says it all.
			fmt.Fprintf(h, "module %s %s", m.Path, m.Version)
			if m.Replace != nil {
				fmt.Fprintf(h, " => %s %s", m.Replace.Path, m.Replace.Version)
			}
			h.Write([]byte("\n"))
			continue
		}
		for _, files := range [][]string{p.GoFiles, p.CgoFiles, p.CFiles, p.CXXFiles, p.HFiles, p.SFiles, p.SysoFiles, p.EmbedFiles} {
			for _, f := range files {
				fmt.Fprintf(h, "file %s\n", f)
				if err := hashFile(h, filepath.Join(p.Dir, f)); err != nil {
					return "", err
				}
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:24], nil
}

func hashFile(w io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	n, err := io.Copy(w, f)
	fmt.Fprintf(w, "\n%d bytes\n", n)
	return err
}
