package buffer

import (
	"strings"
	"testing"
)

// benchEdits types and deletes 1,000 characters in the middle of a document
// of size bytes, as an editor sends them.
func benchEdits(b *testing.B, size int) {
	line := strings.Repeat("abcdefghij", 7) + "\n" // 71 bytes
	text := strings.Repeat(line, size/len(line))
	for b.Loop() {
		b.StopTimer()
		d := NewDoc(text)
		mid := uint32(d.LineCount() / 2)
		b.StartTimer()
		for i := range 1000 {
			p := Position{mid, uint32(10 + i%40)}
			if i%5 == 4 {
				_ = d.Apply(&Range{p, Position{p.Line, p.Character + 1}}, "", UTF16)
			} else {
				_ = d.Apply(&Range{p, p}, "x", UTF16)
			}
		}
	}
}

func BenchmarkEdits100KB(b *testing.B) { benchEdits(b, 100<<10) }
func BenchmarkEdits200KB(b *testing.B) { benchEdits(b, 200<<10) }
func BenchmarkEdits10MB(b *testing.B)  { benchEdits(b, 10<<20) }
