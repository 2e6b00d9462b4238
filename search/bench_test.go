package search

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The benchmarks search the Go toolchain's source tree (about 11,000
// files, 160 MB), as do the acceptance targets, which compare them with
// ripgrep on the same tree in the same run (BenchmarkVsRipgrep).

const (
	benchLiteral = `func main`
	benchRegexp  = `func \w+Handler\(`
	benchGlob    = `**/*.go`
)

func gorootSrc(tb testing.TB) string {
	tb.Helper()
	dir := filepath.Join(runtime.GOROOT(), "src")
	if runtime.GOROOT() == "" {
		out, err := exec.Command("go", "env", "GOROOT").Output()
		if err != nil {
			tb.Skip("no GOROOT")
		}
		dir = filepath.Join(strings.TrimSpace(string(out)), "src")
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		tb.Skipf("no Go source tree at %s", dir)
	}
	return dir
}

func BenchmarkGrepGoroot(b *testing.B) {
	src := gorootSrc(b)
	for _, c := range []struct{ name, pattern string }{{"literal", benchLiteral}, {"regexp", benchRegexp}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				r, err := Grep(context.Background(), Options{Roots: []string{src}}, GrepQuery{Pattern: c.pattern}, nil)
				if err != nil || r.Matches == 0 {
					b.Fatal(err, r.Summary())
				}
			}
		})
	}
}

func BenchmarkFindGoroot(b *testing.B) {
	src := gorootSrc(b)
	for b.Loop() {
		r, err := Find(context.Background(), Options{Roots: []string{src}}, benchGlob)
		if err != nil || r.Total == 0 {
			b.Fatal(err)
		}
	}
}

// rgArgs run ripgrep with the ignore behaviour of this package: no config
// file, hidden files searched, ignore files honoured outside a git
// repository too, as many threads as our workers.
func rgArgs(args ...string) []string {
	return append([]string{"--no-config", "-j", strconv.Itoa(runtime.GOMAXPROCS(0)), "--hidden", "--no-require-git", "--no-messages"}, args...)
}

// BenchmarkVsRipgrep times each search and ripgrep's on the same tree,
// alternately, and reports both medians and their ratio (ours/ripgrep).
// ripgrep's time includes its process start (about 2 ms) and writing
// every match with its line number to a pipe; ours includes formatting
// the capped text.
func BenchmarkVsRipgrep(b *testing.B) {
	src := gorootSrc(b)
	rg, err := exec.LookPath("rg")
	if err != nil {
		b.Skip("ripgrep (rg) is not installed")
	}
	cases := []struct {
		name string
		ours func() error
		rg   []string
	}{
		{"literal", func() error { return grepOnce(src, benchLiteral, nil) }, rgArgs("-n", "-e", benchLiteral, src)},
		{"regexp", func() error { return grepOnce(src, benchRegexp, nil) }, rgArgs("-n", "-e", benchRegexp, src)},
		{"files", func() error {
			_, err := Find(context.Background(), Options{Roots: []string{src}}, benchGlob)
			return err
		}, rgArgs("--files", "-g", "*.go", src)},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var ours, theirs, oursCPU, theirsCPU []float64
			for b.Loop() {
				t, cpu := time.Now(), cpuTime()
				if err := c.ours(); err != nil {
					b.Fatal(err)
				}
				ours = append(ours, ms(time.Since(t)))
				oursCPU = append(oursCPU, ms(cpuTime()-cpu))
				t = time.Now()
				cmd := exec.Command(rg, c.rg...)
				cmd.Stdout = io.Discard
				if err := cmd.Run(); err != nil {
					b.Fatalf("rg %v: %v", c.rg, err)
				}
				theirs = append(theirs, ms(time.Since(t)))
				theirsCPU = append(theirsCPU, ms(cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime()))
			}
			o, r := median(ours), median(theirs)
			b.ReportMetric(o, "ours-ms")
			b.ReportMetric(r, "rg-ms")
			b.ReportMetric(o/r, "ratio")
			// CPU time, less moved by other load on the machine.
			oc, rc := median(oursCPU), median(theirsCPU)
			b.ReportMetric(oc, "ours-cpu-ms")
			b.ReportMetric(rc, "rg-cpu-ms")
			b.ReportMetric(oc/rc, "cpu-ratio")
		})
	}
}

// BenchmarkGrepGorootMemory: the process's peak resident memory during a
// search, above what it held before (Linux: VmHWM after resetting it
// through /proc/self/clear_refs, against VmRSS after a GC); "broad"
// matches about a million lines.
func BenchmarkGrepGorootMemory(b *testing.B) {
	src := gorootSrc(b)
	for _, c := range []struct{ name, pattern string }{{"literal", benchLiteral}, {"broad", "e"}} {
		b.Run(c.name, func(b *testing.B) {
			var peaks []float64
			for b.Loop() {
				runtime.GC()
				debug.FreeOSMemory()
				idle := procStatusKB(b, "VmRSS")
				if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
					b.Skipf("cannot reset the peak resident memory: %v", err)
				}
				if err := grepOnce(src, c.pattern, nil); err != nil {
					b.Fatal(err)
				}
				peaks = append(peaks, float64(procStatusKB(b, "VmHWM")-idle)/1024)
			}
			b.ReportMetric(median(peaks), "peak-above-idle-MB")
		})
	}
}

// procStatusKB reads a field of /proc/self/status, in KB.
func procStatusKB(b *testing.B, field string) int {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Skip("no /proc/self/status")
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			if err != nil {
				b.Fatal(err)
			}
			return n
		}
	}
	b.Skipf("no %s in /proc/self/status", field)
	return 0
}

func grepOnce(src, pattern string, ov Overlay) error {
	_, err := Grep(context.Background(), Options{Roots: []string{src}}, GrepQuery{Pattern: pattern}, ov)
	return err
}

// BenchmarkGrepGorootBuffers200 times the literal search with 200 open
// buffers of 100 KB and without, alternately: the 200 Go files nearest to
// 100 KB in size, each open with its text cut or extended (by repeating
// its lines) to 100 KB at a line boundary, so every buffer differs from
// its file on disk and a buffer with a match has its lines checked against
// the disk's for the unsaved mark.
func BenchmarkGrepGorootBuffers200(b *testing.B) {
	src := gorootSrc(b)
	ov := bufferOverlay(b, src, 200, 100<<10)
	var with, without []float64
	for b.Loop() {
		t := time.Now()
		if err := grepOnce(src, benchLiteral, ov); err != nil {
			b.Fatal(err)
		}
		with = append(with, ms(time.Since(t)))
		t = time.Now()
		if err := grepOnce(src, benchLiteral, nil); err != nil {
			b.Fatal(err)
		}
		without = append(without, ms(time.Since(t)))
	}
	w, wo := median(with), median(without)
	b.ReportMetric(w, "with-ms")
	b.ReportMetric(wo, "without-ms")
	b.ReportMetric(w/wo, "ratio")
}

func bufferOverlay(tb testing.TB, src string, n, size int) mapOverlay {
	type file struct {
		path string
		size int64
	}
	var files []file
	filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && strings.HasSuffix(p, ".go") && !strings.Contains(p, "/testdata/") {
			if fi, err := d.Info(); err == nil {
				files = append(files, file{p, fi.Size()})
			}
		}
		return nil
	})
	dist := func(f file) int64 { return max(f.size-int64(size), int64(size)-f.size) }
	slices.SortFunc(files, func(a, b file) int {
		if c := dist(a) - dist(b); c != 0 {
			return int(c)
		}
		return strings.Compare(a.path, b.path)
	})
	ov := mapOverlay{}
	for _, f := range files[:min(n, len(files))] {
		data, err := os.ReadFile(f.path)
		if err != nil {
			tb.Fatal(err)
		}
		var text []byte
		for len(text) < size {
			text = append(text, data...)
		}
		text = text[:size]
		if i := bytes.LastIndexByte(text, '\n'); i >= 0 {
			text = text[:i+1]
		}
		ov[f.path] = string(text)
	}
	return ov
}

// mapOverlay is an Overlay from a map of path to text.
type mapOverlay map[string]string

func (m mapOverlay) Each(fn func(path, text string) bool) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !fn(k, m[k]) {
			return
		}
	}
}

func (m mapOverlay) Text(path string) (string, bool) {
	t, ok := m[path]
	return t, ok
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// cpuTime is the process's user and system time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func median(s []float64) float64 {
	if len(s) == 0 {
		return 0
	}
	s = slices.Clone(s)
	slices.Sort(s)
	return s[len(s)/2]
}
