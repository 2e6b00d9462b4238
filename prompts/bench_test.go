package prompts

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkSystem50x100KB builds the system prompt with 50 relevant files of
// 100 KB each under a 64k-token budget.
func BenchmarkSystem50x100KB(b *testing.B) {
	var files []File
	for i := range 50 {
		files = append(files, File{Path: fmt.Sprintf("/w/file%02d.go", i), Content: strings.Repeat(fmt.Sprintf("func f%d() { return %d }\n", i, i), 100<<10/24)})
	}
	in := Input{Relevant: files, FileBudget: 64000, Counter: TokenizerFor("gpt-4o"), Context: map[string][]string{"ports": {"8080"}}}
	System(in) // load the encoding outside the loop
	for b.Loop() {
		System(in)
	}
}
