package buffer

import (
	"bytes"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Encoding is the unit LSP character offsets count.
type Encoding int

const (
	// UTF16 counts UTF-16 code units, the LSP default.
	UTF16 Encoding = iota
	// UTF8 counts bytes.
	UTF8
	// UTF32 counts code points.
	UTF32
)

func (e Encoding) String() string {
	switch e {
	case UTF8:
		return "utf-8"
	case UTF32:
		return "utf-32"
	}
	return "utf-16"
}

// Position is an LSP position.
type Position struct {
	Line      uint32 `json:"line"`
	Character uint32 `json:"character"`
}

// Range is an LSP range.
type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

func (p Position) after(q Position) bool {
	return p.Line > q.Line || p.Line == q.Line && p.Character > q.Character
}

// Chunk sizes: text is cut into chunks of about targetChunk bytes (at most,
// unless no safe point comes before); a chunk grows up to maxChunk before
// it is cut again.
const (
	targetChunk = 4 << 10
	maxChunk    = 8 << 10
)

// Block sizes, in chunks: chunks are grouped into blocks of about
// targetBlock; a block grows up to maxBlock before it is regrouped.
const (
	targetBlock = 32
	maxBlock    = 64
)

type chunk struct {
	text  []byte
	lines int  // line breaks in text
	lone  bool // text may hold a lone "\r" break; false means it holds none
}

// A block is a run of chunks with their total of line breaks. Blocks keep
// the splicing of chunks local: adding or removing a chunk moves at most
// maxBlock chunks.
type block struct {
	chunks []chunk
	lines  int
}

// Doc is one document's text. It is not safe for concurrent use; Set
// serialises access.
//
// The text is the concatenation of the chunks of the blocks, in order. Every
// block holds 1 to maxBlock chunks; no chunk is empty but the only chunk of
// an empty document.
type Doc struct {
	blocks []block
	// index is a Fenwick tree over blocks[i].lines: index[i] (1-based)
	// holds the line breaks of blocks i-lowbit(i) .. i-1. It finds the block
	// of a line and follows an edit in O(log blocks).
	index  []int
	lines  int // line breaks in the whole text
	size   int
	cached *string
}

// NewDoc returns a document holding text.
func NewDoc(text string) *Doc {
	d := &Doc{}
	d.reset(text)
	return d
}

func (d *Doc) reset(text string) {
	d.blocks = group(splitChunks(text), targetBlock)
	d.size = len(text)
	d.cached = nil
	d.index = nil
	d.reindex()
}

// group puts chunks into blocks of per chunks or a few less, each block
// with its own array.
func group(chunks []chunk, per int) []block {
	k := max(1, (len(chunks)+per-1)/per)
	out := make([]block, 0, k)
	for i := range k {
		part := chunks[i*len(chunks)/k : (i+1)*len(chunks)/k]
		b := block{chunks: slices.Clone(part)}
		for _, c := range part {
			b.lines += c.lines
		}
		out = append(out, b)
	}
	return out
}

// Len is the text's length in bytes.
func (d *Doc) Len() int { return d.size }

// LineCount is the number of lines (line breaks + 1).
func (d *Doc) LineCount() int { return d.lines + 1 }

// String returns the whole text.
func (d *Doc) String() string {
	if d.cached != nil {
		return *d.cached
	}
	var b strings.Builder
	b.Grow(d.size)
	for _, bl := range d.blocks {
		for _, c := range bl.chunks {
			b.Write(c.text)
		}
	}
	s := b.String()
	d.cached = &s
	return s
}

// reindex rebuilds the line index and the line total after the block list
// changed shape, in O(blocks).
func (d *Doc) reindex() {
	n := len(d.blocks)
	if cap(d.index) > n {
		d.index = d.index[:n+1]
		clear(d.index)
	} else {
		d.index = make([]int, n+1)
	}
	d.lines = 0
	for i := 1; i <= n; i++ {
		l := d.blocks[i-1].lines
		d.lines += l
		d.index[i] += l
		if j := i + i&-i; j <= n {
			d.index[j] += d.index[i]
		}
	}
}

// addLines records delta more line breaks in block bi.
func (d *Doc) addLines(bi, delta int) {
	d.blocks[bi].lines += delta
	d.lines += delta
	for i := bi + 1; i < len(d.index); i += i & -i {
		d.index[i] += delta
	}
}

// findBreak returns the block holding the n-th (1-based, n <= d.lines) line
// break of the text, and the rank of that break within the block.
func (d *Doc) findBreak(n int) (bi, rank int) {
	last := len(d.index) - 1
	for step := 1 << (bits.Len(uint(last)) - 1); step > 0; step >>= 1 {
		if next := bi + step; next <= last && d.index[next] < n {
			bi = next
			n -= d.index[next]
		}
	}
	return bi, n
}

// breaks counts the line breaks that end at positions x..y-1 of b, and how
// many of them are a lone "\r". A "\r" at the very end of b counts as a lone
// break (the chunk invariant guarantees no "\n" follows it in the next
// chunk); b[y], when present, is only looked at to pair a "\r" at y-1.
func breaks(b []byte, x, y int) (all, lone int) {
	seg := b[x:y]
	all = bytes.Count(seg, lf)
	if bytes.IndexByte(seg, '\r') >= 0 {
		lone = bytes.Count(seg, cr) - bytes.Count(b[x:min(y+1, len(b))], crlf)
		all += lone
	}
	return all, lone
}

// countBreaks counts the line breaks of a whole chunk.
func countBreaks(b []byte) int {
	n, _ := breaks(b, 0, len(b))
	return n
}

var (
	lf   = []byte("\n")
	cr   = []byte("\r")
	crlf = []byte("\r\n")
)

// countSpan is how many bytes nthBreakEnd counts at once before it looks
// for single line breaks.
const countSpan = 512

// nthBreakEnd returns the offset just after the n-th (1-based) of the total
// line breaks of b, or -1. lone tells whether b may hold a lone "\r" break.
func nthBreakEnd(b []byte, n, total int, lone bool) int {
	switch {
	case lone:
	case n <= total/2:
		// Every break ends with "\n". Skip whole blocks by counting, then
		// look for single breaks.
		off := 0
		for len(b)-off > countSpan {
			k := bytes.Count(b[off:off+countSpan], lf)
			if k >= n {
				break
			}
			n -= k
			off += countSpan
		}
		for ; n > 0; n-- {
			i := bytes.IndexByte(b[off:], '\n')
			if i < 0 {
				return -1
			}
			off += i + 1
		}
		return off
	default:
		// The same from the end: find the m-th "\n" from the end.
		m := total - n + 1
		end := len(b)
		for end > countSpan {
			k := bytes.Count(b[end-countSpan:end], lf)
			if k >= m {
				break
			}
			m -= k
			end -= countSpan
		}
		for ; m > 0; m-- {
			end = bytes.LastIndexByte(b[:end], '\n')
			if end < 0 {
				return -1
			}
		}
		return end + 1
	}
	// Lone "\r" breaks: skip blocks the same way, then scan bytes.
	off := 0
	for len(b)-off > countSpan {
		k, _ := breaks(b, off, off+countSpan)
		if k >= n {
			break
		}
		n -= k
		off += countSpan
	}
	for i := off; i < len(b); i++ {
		if b[i] == '\n' || b[i] == '\r' && (i+1 == len(b) || b[i+1] != '\n') {
			n--
			if n == 0 {
				return i + 1
			}
		}
	}
	return -1
}

// splitChunks cuts text into chunks at safe points: never inside a UTF-8
// sequence, never right after a "\r". Each chunk gets its own array, sized
// to the allocator's size class.
func splitChunks[T string | []byte](text T) []chunk {
	if len(text) == 0 {
		return []chunk{{}}
	}
	out := make([]chunk, 0, len(text)/targetChunk+1)
	for len(text) > 0 {
		p := len(text)
		if p > maxChunk {
			p = cutPoint(text)
		}
		piece := append([]byte(nil), text[:p]...)
		all, lone := breaks(piece, 0, p)
		out = append(out, chunk{text: piece, lines: all, lone: lone > 0})
		text = text[p:]
	}
	return out
}

// cutPoint picks where the first chunk of text (longer than targetChunk)
// ends: the last safe point at or before targetChunk, or failing that the
// first one after it.
func cutPoint[T string | []byte](text T) int {
	for p := targetChunk; p > 0; p-- {
		if safeCut(text, p) {
			return p
		}
	}
	p := targetChunk + 1
	for p < len(text) && !safeCut(text, p) {
		p++
	}
	return p
}

// safeCut reports whether text may be cut before text[p] (0 < p < len).
func safeCut[T string | []byte](text T, p int) bool {
	if text[p-1] == '\r' {
		return false
	}
	return !isContinuation(text[p])
}

func isContinuation(b byte) bool { return b&0xC0 == 0x80 }

// cursor is a place in the document: block, chunk in the block, and byte
// offset in the chunk.
type cursor struct{ bi, ci, pos int }

func (d *Doc) chunkAt(c cursor) *chunk { return &d.blocks[c.bi].chunks[c.ci] }

// before reports whether c's chunk comes before e's.
func (c cursor) before(e cursor) bool {
	return c.bi < e.bi || c.bi == e.bi && c.ci < e.ci
}

// next returns the start of the chunk after c's, if any.
func (d *Doc) next(c cursor) (cursor, bool) {
	switch {
	case c.ci+1 < len(d.blocks[c.bi].chunks):
		return cursor{c.bi, c.ci + 1, 0}, true
	case c.bi+1 < len(d.blocks):
		return cursor{c.bi + 1, 0, 0}, true
	}
	return c, false
}

// prevEnd returns the end of the chunk before c's (there must be one).
func (d *Doc) prevEnd(c cursor) cursor {
	if c.ci > 0 {
		c.ci--
	} else {
		c.bi--
		c.ci = len(d.blocks[c.bi].chunks) - 1
	}
	c.pos = len(d.chunkAt(c).text)
	return c
}

func (d *Doc) isLast(bi, ci int) bool {
	return bi == len(d.blocks)-1 && ci == len(d.blocks[bi].chunks)-1
}

// lineStart returns the cursor where line starts, or the end of the
// document for a line beyond the last.
func (d *Doc) lineStart(line int) cursor {
	if line == 0 {
		return cursor{}
	}
	if line > d.lines {
		return d.end()
	}
	// The line-th break of the text ends the previous line.
	bi, rank := d.findBreak(line)
	chunks := d.blocks[bi].chunks
	ci := 0
	for ci < len(chunks)-1 && rank > chunks[ci].lines {
		rank -= chunks[ci].lines
		ci++
	}
	c := &chunks[ci]
	end := nthBreakEnd(c.text, rank, c.lines, c.lone)
	if end < 0 {
		return d.end() // unreachable while the counts are right
	}
	return cursor{bi, ci, end}
}

// walk advances cur, which is units code units into its line, until it is
// want units into the line, clamping as the package doc describes. It
// returns the new cursor and its units.
func (d *Doc) walk(cur cursor, units, want int, enc Encoding) (cursor, int) {
	b := d.chunkAt(cur).text
	for units < want {
		if cur.pos >= len(b) {
			next, ok := d.next(cur)
			if !ok {
				break // end of document
			}
			cur = next
			b = d.chunkAt(cur).text
			continue
		}
		c := b[cur.pos]
		if c < utf8.RuneSelf {
			if c == '\n' || c == '\r' {
				break // end of line
			}
			units++
			cur.pos++
			continue
		}
		r, size := utf8.DecodeRune(b[cur.pos:])
		u := 1
		switch enc {
		case UTF8:
			u = size
		case UTF16:
			if r >= 0x10000 {
				u = 2
			}
		}
		if units+u > want {
			break // inside a character: snap to its start
		}
		units += u
		cur.pos += size
	}
	return cur, units
}

// offsetOf converts a position into a cursor.
func (d *Doc) offsetOf(p Position, enc Encoding) cursor {
	cur, _ := d.walk(d.lineStart(int(p.Line)), 0, int(p.Character), enc)
	return cur
}

func (d *Doc) end() cursor {
	bi := len(d.blocks) - 1
	ci := len(d.blocks[bi].chunks) - 1
	return cursor{bi, ci, len(d.blocks[bi].chunks[ci].text)}
}

// ErrBadRange reports a range whose start is after its end.
var ErrBadRange = errors.New("range start is after its end")

// Apply replaces the text in r (the whole text when r is nil) with text.
func (d *Doc) Apply(r *Range, text string, enc Encoding) error {
	if r == nil {
		d.reset(text)
		return nil
	}
	if r.Start.after(r.End) {
		return fmt.Errorf("%w: %d:%d > %d:%d", ErrBadRange, r.Start.Line, r.Start.Character, r.End.Line, r.End.Character)
	}
	a, units := d.walk(d.lineStart(int(r.Start.Line)), 0, int(r.Start.Character), enc)
	var b cursor
	if r.End.Line == r.Start.Line {
		// The usual edit: go on from the start rather than find the line
		// again.
		b, _ = d.walk(a, units, int(r.End.Character), enc)
	} else {
		b = d.offsetOf(r.End, enc)
	}
	if b.before(a) {
		b = a // the same place, reached through a chunk boundary
	}
	// A chunk boundary is the end of one chunk and the start of the next:
	// pick the reading that keeps the range in one chunk when one does.
	if a.before(b) && a.pos == len(d.chunkAt(a).text) {
		a, _ = d.next(a)
	}
	if a.before(b) && b.pos == 0 {
		b = d.prevEnd(b)
	}
	if a == b && text == "" {
		return nil
	}
	d.cached = nil
	if a.bi == b.bi && a.ci == b.ci && d.editChunk(a.bi, a.ci, a.pos, b.pos, text) {
		return nil
	}
	d.rebuild(a, b, text)
	return nil
}

// editChunk replaces bytes s..e of a chunk with text in place, if the chunk
// stays non-empty, small enough and keeps the "\r" invariant. It counts the
// line breaks of the edited span only, so its cost does not depend on the
// size of the chunk beyond moving its tail.
func (d *Doc) editChunk(bi, ci, s, e int, text string) bool {
	c := &d.blocks[bi].chunks[ci]
	old := c.text
	n := len(old) - (e - s) + len(text)
	if n == 0 || n > maxChunk || !d.isLast(bi, ci) && endsWithCR(old[:s], text, old[e:]) {
		return false
	}
	if s == 0 && (bi > 0 || ci > 0) && startsWithContinuation(text, old[e:]) {
		return false // the chunk would start inside a UTF-8 sequence
	}
	// Only breaks at s-1 (whose next byte changes) and in the replaced span
	// can change.
	w := max(s-1, 0)
	before, _ := breaks(old, w, e)
	var nt []byte
	if cap(old) >= n {
		nt = old[:max(len(old), n)]
		copy(nt[s+len(text):], old[e:])
		copy(nt[s:], text)
		nt = nt[:n]
	} else {
		// Leave room to type, rounded up to the allocator's size class.
		nt = slices.Grow([]byte(nil), n+n/8)[:n]
		copy(nt, old[:s])
		copy(nt[s:], text)
		copy(nt[s+len(text):], old[e:])
	}
	after, lone := breaks(nt, w, s+len(text))
	c.text = nt
	c.lone = c.lone || lone > 0
	if after != before {
		c.lines += after - before
		d.addLines(bi, after-before)
	}
	d.size += n - len(old)
	return true
}

// rebuild replaces the text from a to b with text by cutting the affected
// chunks anew. Chunks are spliced within their block; blocks are regrouped,
// and the block list spliced and reindexed, only when a block would grow
// beyond maxBlock chunks or the range spans blocks.
func (d *Doc) rebuild(a, b cursor, text string) {
	// The chunks of blocks fb..lb, in which the range runs from chunk first
	// to chunk last.
	fb, lb := a.bi, b.bi
	flat := d.blocks[fb].chunks
	if lb > fb {
		flat = nil
		for _, bl := range d.blocks[fb : lb+1] {
			flat = append(flat, bl.chunks...)
		}
	}
	first, last := a.ci, len(flat)-len(d.blocks[lb].chunks)+b.ci
	head := flat[first].text[:a.pos]
	tail := flat[last].text[b.pos:]
	content := make([]byte, 0, len(head)+len(text)+len(tail))
	content = append(content, head...)
	content = append(content, text...)
	content = append(content, tail...)
	for len(content) > 0 && isContinuation(content[0]) && (first > 0 || fb > 0) {
		// Keep a chunk but the first from starting inside a UTF-8 sequence
		// (stray bytes of a file that is not valid UTF-8, which an edit
		// could otherwise join across chunks): take in the previous one.
		if first == 0 {
			fb--
			prev := d.blocks[fb].chunks
			flat = append(slices.Clip(prev), flat...)
			first += len(prev)
			last += len(prev)
		}
		first--
		content = append(slices.Clip(flat[first].text), content...)
	}
	for len(content) > 0 && content[len(content)-1] == '\r' {
		// Keep "\r" off the end of a chunk but the last: take in the next.
		if last+1 == len(flat) {
			if lb+1 == len(d.blocks) {
				break
			}
			lb++
			flat = append(slices.Clip(flat), d.blocks[lb].chunks...)
		}
		last++
		content = append(content, flat[last].text...)
	}
	removed, removedLines := 0, 0
	for _, c := range flat[first : last+1] {
		removed += len(c.text)
		removedLines += c.lines
	}
	d.size += len(content) - removed
	var repl []chunk
	whole := fb == 0 && lb == len(d.blocks)-1 && first == 0 && last == len(flat)-1
	if len(content) > 0 || whole {
		repl = splitChunks(content)
	}
	delta := -removedLines
	for _, c := range repl {
		delta += c.lines
	}
	flat = slices.Replace(flat, first, last+1, repl...)
	if fb == lb && len(flat) > 0 && len(flat) <= maxBlock {
		d.blocks[fb].chunks = flat
		d.addLines(fb, delta)
		return
	}
	var regrouped []block
	if len(flat) > 0 {
		regrouped = group(flat, targetBlock)
	}
	if len(regrouped) == lb-fb+1 {
		for i, bl := range regrouped {
			old := d.blocks[fb+i].lines
			d.blocks[fb+i] = block{chunks: bl.chunks, lines: old}
			d.addLines(fb+i, bl.lines-old)
		}
		return
	}
	d.blocks = slices.Replace(d.blocks, fb, lb+1, regrouped...)
	d.index = nil
	d.reindex()
}

func startsWithContinuation(text string, tail []byte) bool {
	switch {
	case len(text) > 0:
		return isContinuation(text[0])
	case len(tail) > 0:
		return isContinuation(tail[0])
	}
	return false
}

func endsWithCR(head []byte, text string, tail []byte) bool {
	switch {
	case len(tail) > 0:
		return tail[len(tail)-1] == '\r'
	case len(text) > 0:
		return text[len(text)-1] == '\r'
	case len(head) > 0:
		return head[len(head)-1] == '\r'
	}
	return false
}

// PositionOf is the LSP position of byte offset off in text (at a rune's
// start), in enc's units.
func PositionOf(text string, off int, enc Encoding) Position {
	off = min(max(off, 0), len(text))
	line := strings.Count(text[:off], "\n")
	start := strings.LastIndexByte(text[:off], '\n') + 1
	col := 0
	switch enc {
	case UTF8:
		col = off - start
	case UTF32:
		col = utf8.RuneCountInString(text[start:off])
	default:
		for _, r := range text[start:off] {
			col += utf16.RuneLen(r)
		}
	}
	return Position{Line: uint32(line), Character: uint32(col)}
}
