package buffer

import (
	"runtime"
	"strings"
	"testing"
)

// benchDoc returns a document of about size bytes of 71-byte lines and its
// middle line. The garbage of the previous iteration is collected here,
// with the timer stopped, so that it is not charged to the edits.
func benchDoc(b *testing.B, size int) (*Doc, uint32) {
	b.StopTimer()
	defer b.StartTimer()
	line := strings.Repeat("abcdefghij", 7) + "\n" // 71 bytes
	d := NewDoc(strings.Repeat(line, size/len(line)))
	runtime.GC()
	return d, uint32(d.LineCount() / 2)
}

// benchEdits types and deletes 1,000 characters in the middle of a document
// of size bytes, as an editor sends them.
func benchEdits(b *testing.B, size int) {
	for b.Loop() {
		d, mid := benchDoc(b, size)
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

// benchTyping types 1,000 characters from the middle of a document, one
// line break every 20, so that line counts change as well.
func benchTyping(b *testing.B, size int) {
	for b.Loop() {
		d, mid := benchDoc(b, size)
		p := Position{mid, 5}
		for i := range 1000 {
			ins := "y"
			if i%20 == 19 {
				ins = "\n"
			}
			if err := d.Apply(&Range{p, p}, ins, UTF16); err != nil {
				b.Fatal(err)
			}
			if ins == "\n" {
				p = Position{p.Line + 1, 0}
			} else {
				p.Character++
			}
		}
	}
}

func BenchmarkTyping100KB(b *testing.B) { benchTyping(b, 100<<10) }
func BenchmarkTyping10MB(b *testing.B)  { benchTyping(b, 10<<20) }

// benchCutPaste cuts 300 lines (about 21 KB, several chunks) from the
// middle of a document and pastes them back, 100 times: edits that cut
// chunks anew.
func benchCutPaste(b *testing.B, size int) {
	for b.Loop() {
		d, mid := benchDoc(b, size)
		b.StopTimer()
		cut := strings.Clone(d.String()[d.offset(b, Position{mid, 0}):d.offset(b, Position{mid + 300, 0})])
		d.cached = nil
		runtime.GC()
		b.StartTimer()
		for range 100 {
			if err := d.Apply(&Range{Position{mid, 0}, Position{mid + 300, 0}}, "", UTF16); err != nil {
				b.Fatal(err)
			}
			if err := d.Apply(&Range{Position{mid, 0}, Position{mid, 0}}, cut, UTF16); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkCutPaste100KB(b *testing.B) { benchCutPaste(b, 100<<10) }
func BenchmarkCutPaste10MB(b *testing.B)  { benchCutPaste(b, 10<<20) }

// offset is the byte offset of p in d's text.
func (d *Doc) offset(tb testing.TB, p Position) int {
	tb.Helper()
	c := d.offsetOf(p, UTF16)
	n := c.pos
	for _, b := range d.blocks[:c.bi] {
		for _, ch := range b.chunks {
			n += len(ch.text)
		}
	}
	for _, ch := range d.blocks[c.bi].chunks[:c.ci] {
		n += len(ch.text)
	}
	return n
}

// BenchmarkMemory200x100KB holds 200 documents of 100 KB, then types into
// each. Metrics: heap-MB after opening, and after the edits (the daemon's
// target: 200 open 100 KB files in <= 60 MB resident).
func BenchmarkMemory200x100KB(b *testing.B) {
	line := "func handler(w http.ResponseWriter, r *http.Request) { log.Printf(\"%d\", n) }\n"
	text := strings.Repeat(line, (100<<10)/len(line))
	heap := func() float64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return float64(m.HeapAlloc) / (1 << 20)
	}
	var opened, edited float64
	for b.Loop() {
		base := heap()
		docs := make([]*Doc, 200)
		for i := range docs {
			docs[i] = NewDoc(strings.Clone(text)) // as decoded from a didOpen
		}
		opened = heap() - base
		for _, d := range docs {
			for i := range 100 {
				p := Position{uint32(i * 13), 7}
				if err := d.Apply(&Range{p, p}, "x", UTF16); err != nil {
					b.Fatal(err)
				}
			}
		}
		edited = heap() - base
		runtime.KeepAlive(docs)
	}
	b.ReportMetric(opened, "heap-MB")
	b.ReportMetric(edited, "edited-heap-MB")
}
