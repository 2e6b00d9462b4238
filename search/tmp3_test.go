package search

import "testing"

func BenchmarkTmpWith(b *testing.B) {
	src := gorootSrc(b)
	ov := bufferOverlay(b, src, 200, 100<<10)
	b.ResetTimer()
	for b.Loop() {
		grepOnce(src, benchLiteral, ov)
	}
}
func BenchmarkTmpWithout(b *testing.B) {
	src := gorootSrc(b)
	for b.Loop() {
		grepOnce(src, benchLiteral, nil)
	}
}
