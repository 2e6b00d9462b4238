package prompts

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkSystem50x100KB builds the system prompt with 50 relevant files of
// 100 KB each under a 64k-token budget, as on every turn after the first
// (token counts of unchanged lines are cached; see BenchmarkSystemCold).
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

// BenchmarkSystemCold is the first turn: every line is tokenized.
func BenchmarkSystemCold(b *testing.B) {
	var files []File
	for i := range 50 {
		files = append(files, File{Path: fmt.Sprintf("/w/file%02d.go", i), Content: goLikeFile(i)})
	}
	tk := TokenizerFor("gpt-4o")
	tk.Count("warm up the encoding")
	for b.Loop() {
		tk.mu.Lock()
		tk.cache = nil
		tk.mu.Unlock()
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
