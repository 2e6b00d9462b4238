package prompts

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

// BenchmarkSystem50x100KB builds the system prompt with 50 relevant files of
// 100 KB each under a 64k-token budget, as on every turn after the first.
// No token counts are cached (see Tokenizer), so this is the work of
// BenchmarkSystemCold, with a context set in the input.
func BenchmarkSystem50x100KB(b *testing.B) {
	var files []File
	for i := range 50 {
		files = append(files, File{Path: fmt.Sprintf("/w/file%02d.go", i), Content: goLikeFile(i)})
	}
	in := Input{Relevant: files, FileBudget: 64000, Counter: TokenizerFor("gpt-4o"), Context: map[string][]string{"ports": {"8080"}}}
	System(in) // load the encoding outside the loop
	for b.Loop() {
		System(in)
	}
}

// BenchmarkSystemCold is the first turn once the ranks are loaded (that
// one-off cost is BenchmarkLoadRanks): every line is tokenized.
func BenchmarkSystemCold(b *testing.B) {
	var files []File
	for i := range 50 {
		files = append(files, File{Path: fmt.Sprintf("/w/file%02d.go", i), Content: goLikeFile(i)})
	}
	tk := TokenizerFor("gpt-4o")
	tk.Count("warm up the encoding")
	for b.Loop() {
		System(Input{Relevant: files, FileBudget: 64000, Counter: tk})
	}
}

// goLikeFile is ~100 KB of distinct lines.
func goLikeFile(i int) string {
	var b strings.Builder
	for j := 0; b.Len() < 100<<10; j++ {
		fmt.Fprintf(&b, "func handler%d_%d(w http.ResponseWriter, r *http.Request) { log.Printf(%q, %d) }\n", i, j, "request", j)
	}
	return b.String()
}

// BenchmarkCount measures counting throughput on real Go source (from
// GOROOT) and on generated mixed-script text, with the ranks loaded.
func BenchmarkCount(b *testing.B) {
	corpora := map[string]string{"go": goSource(b, 256<<10), "mixed": stressText(rand.New(rand.NewPCG(7, 8)), 256<<10)}
	for _, enc := range encodings {
		tk := &Tokenizer{encoding: enc}
		tk.Count("load")
		for _, name := range []string{"go", "mixed"} {
			text := corpora[name]
			b.Run(enc+"/"+name, func(b *testing.B) {
				b.SetBytes(int64(len(text)))
				for b.Loop() {
					tk.Count(text)
				}
			})
		}
	}
}

// goSource is the first n bytes of net/http's Go files.
func goSource(b testing.TB, n int) string {
	paths, err := filepath.Glob(filepath.Join(runtime.GOROOT(), "src", "net", "http", "*.go"))
	if err != nil || len(paths) == 0 {
		b.Fatalf("no Go source in GOROOT: %v", err)
	}
	var s strings.Builder
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		s.Write(data)
		if s.Len() >= n {
			break
		}
	}
	return s.String()[:min(n, s.Len())]
}

// BenchmarkLoadRanks is the one-off cost of the first turn: parsing an
// encoding's embedded ranks into our table, against the map[string]int
// tiktoken-go builds. MB-heap is the heap it keeps.
func BenchmarkLoadRanks(b *testing.B) {
	for _, enc := range encodings {
		file := enc + ".tiktoken"
		b.Run(enc+"/table", func(b *testing.B) {
			loadClasses()
			heap := retainedHeap(func() any { t, _ := loadRanks(file); return t })
			for b.Loop() {
				if _, err := loadRanks(file); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(heap, "MB-heap")
		})
		b.Run(enc+"/map", func(b *testing.B) {
			loader := tiktoken_loader.NewOfflineLoader()
			heap := retainedHeap(func() any { m, _ := loader.LoadTiktokenBpe(file); return m })
			for b.Loop() {
				if _, err := loader.LoadTiktokenBpe(file); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(heap, "MB-heap")
		})
	}
}

// retainedHeap returns the MB of heap that what load returns keeps alive.
func retainedHeap(load func() any) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	v := load()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(v)
	return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / 1e6
}
