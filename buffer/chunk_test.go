package buffer

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// newDocCut returns a document holding text cut into chunks of about every
// bytes (at safe points), per chunks to a block, so that small texts
// exercise chunk and block boundaries.
func newDocCut(text string, every, per int) *Doc {
	d := &Doc{size: len(text)}
	var chunks []chunk
	for len(text) > 0 {
		p := min(every, len(text))
		for p < len(text) && !safeCut(text, p) {
			p++
		}
		piece := []byte(text[:p])
		all, lone := breaks(piece, 0, p)
		chunks = append(chunks, chunk{text: piece, lines: all, lone: lone > 0})
		text = text[p:]
	}
	if len(chunks) == 0 {
		chunks = []chunk{{}}
	}
	d.blocks = group(chunks, per)
	d.reindex()
	return d
}

// breakEnds lists the offsets just after each line break of b, a "\r" at
// the very end counting as one.
func breakEnds(b []byte) []int {
	var ends []int
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '\n':
			ends = append(ends, i+1)
		case '\r':
			if i+1 < len(b) && b[i+1] == '\n' {
				i++
			}
			ends = append(ends, i+1)
		}
	}
	return ends
}

func TestNthBreakEnd(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	noLone := []string{"a", "xyz", "\n", "\r\n", "é", "😀", "\n\n\n", strings.Repeat("abcdefghij", 30)}
	withLone := append([]string{"\r", "\n\r", "\r\r\n"}, noLone...)
	for i := range 400 {
		set := noLone
		if i%2 == 1 {
			set = withLone
		}
		var sb strings.Builder
		for n := rng.IntN(4000); sb.Len() < n; {
			sb.WriteString(set[rng.IntN(len(set))])
		}
		b := []byte(sb.String())
		ends := breakEnds(b)
		all, lone := breaks(b, 0, len(b))
		if all != len(ends) {
			t.Fatalf("text %d: breaks counts %d, want %d", i, all, len(ends))
		}
		if i%2 == 0 && lone != 0 {
			t.Fatalf("text %d: %d lone breaks in a text without any", i, lone)
		}
		for n, want := range ends {
			if got := nthBreakEnd(b, n+1, all, true); got != want {
				t.Fatalf("text %d (%d bytes): break %d of %d ends at %d, want %d (scan)", i, len(b), n+1, all, got, want)
			}
			if lone == 0 {
				if got := nthBreakEnd(b, n+1, all, false); got != want {
					t.Fatalf("text %d (%d bytes): break %d of %d ends at %d, want %d (by \\n)", i, len(b), n+1, all, got, want)
				}
			}
		}
	}
}

// posOf converts a byte offset of text (at a character start, not inside
// "\r\n") into a position, counting from the offset back: the inverse of
// what Doc does.
func posOf(text string, o int, enc Encoding) Position {
	prefix := text[:o]
	line := strings.Count(prefix, "\n") + strings.Count(prefix, "\r") - strings.Count(prefix, "\r\n")
	start := max(strings.LastIndexByte(prefix, '\n'), strings.LastIndexByte(prefix, '\r')) + 1
	units := 0
	for _, r := range prefix[start:] {
		switch enc {
		case UTF8:
			units += utf8.RuneLen(r)
		case UTF16:
			units += utf16.RuneLen(r)
		default:
			units++
		}
	}
	return Position{Line: uint32(line), Character: uint32(units)}
}

// validOffset moves o into text and back to a character start outside a
// "\r\n" pair.
func validOffset(text string, o int) int {
	o = max(0, min(o, len(text)))
	for o > 0 && o < len(text) && (!utf8.RuneStart(text[o]) || text[o-1] == '\r' && text[o] == '\n') {
		o--
	}
	return o
}

// TestLargeDocEditsAcrossChunks applies random edits to a 3 MB document,
// most of them starting near a chunk boundary: small inserts and deletes,
// deletes across several chunks, big cuts and pastes that split and merge
// chunks. Positions come from byte offsets, converted by posOf; the result
// must be the byte splice.
func TestLargeDocEditsAcrossChunks(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	words := []string{"func", " x := 1", "é", "中文", "😀", "\t", "abcdefghij", "👩‍💻"}
	var sb strings.Builder
	for sb.Len() < 3<<20 {
		for n := rng.IntN(10); n > 0; n-- {
			sb.WriteString(words[rng.IntN(len(words))])
		}
		if rng.IntN(4) == 0 {
			sb.WriteString("\r\n")
		} else {
			sb.WriteString("\n")
		}
	}
	text := sb.String()
	d := NewDoc(text)
	checkInvariants(t, d)
	small := []string{"", "x", "\n", "\r\n", "é", "😀", "ab\r\ncd\n", "\t\t", "\r"}
	edits := 1000
	if testing.Short() || raceOn {
		edits = 100
	}
	minLen, maxLen, chunks, changes := len(text), len(text), len(allChunks(d)), 0
	for i := range edits {
		enc := Encoding(i % 3)
		o1 := rng.IntN(len(text) + 1)
		if rng.IntN(4) > 0 {
			// Near the start of a chunk.
			all := allChunks(d)
			k := rng.IntN(len(all))
			o1 = rng.IntN(81) - 40
			for _, c := range all[:k] {
				o1 += len(c.text)
			}
		}
		o1 = validOffset(text, o1)
		o2 := o1
		switch n := rng.IntN(20); {
		case n < 12:
			o2 += rng.IntN(100)
		case n < 18:
			o2 += rng.IntN(3 * targetChunk)
		case n < 19 && len(text) > 2<<20:
			o2 += rng.IntN(200 << 10)
		}
		o2 = max(o1, validOffset(text, o2))
		ins := small[rng.IntN(len(small)-1)]
		switch {
		case rng.IntN(40) == 0:
			ins = "\r" // a lone "\r", now and then
		case rng.IntN(6) == 0 && len(text) < 3<<20:
			// Paste a piece of the text.
			p := validOffset(text, rng.IntN(len(text)+1))
			ins = text[p:validOffset(text, p+rng.IntN(60<<10))]
		}
		r := &Range{posOf(text, o1, enc), posOf(text, o2, enc)}
		want := text[:o1] + ins + text[o2:]
		if err := d.Apply(r, ins, enc); err != nil {
			t.Fatalf("edit %d: %v", i, err)
		}
		if got := d.String(); got != want {
			at := 0
			for at < min(len(got), len(want)) && got[at] == want[at] {
				at++
			}
			t.Fatalf("edit %d (%v, %+v = bytes %d..%d, %d bytes inserted): texts differ from byte %d: got %q, want %q",
				i, enc, *r, o1, o2, len(ins), at, trim(got[at:]), trim(want[at:]))
		}
		if d.Len() != len(want) {
			t.Fatalf("edit %d: len %d, want %d", i, d.Len(), len(want))
		}
		if i%10 == 0 || i == edits-1 {
			// (checkInvariants checks the count against the chunks at every edit.)
			lines := strings.Count(want, "\n") + strings.Count(want, "\r") - strings.Count(want, "\r\n") + 1
			if d.LineCount() != lines {
				t.Fatalf("edit %d: %d lines, want %d", i, d.LineCount(), lines)
			}
		}
		checkInvariants(t, d)
		text = want
		minLen, maxLen = min(minLen, len(text)), max(maxLen, len(text))
		if n := len(allChunks(d)); n != chunks {
			chunks = n
			changes++
		}
	}
	if minLen < 1<<20 || changes < edits/20 {
		t.Errorf("the document stayed between %d and %d bytes and its chunk count changed %d times: the test lost its point", minLen, maxLen, changes)
	}
	t.Logf("%d edits: %d to %d bytes; the chunk count changed %d times; %d chunks in %d blocks at the end", edits, minLen, maxLen, changes, chunks, len(d.blocks))
}

// TestAwkwardCuts edits texts where no chunk can end at the usual place:
// long runs of "\r", of stray UTF-8 continuation bytes, of 2-, 3- and 4-byte
// characters.
func TestAwkwardCuts(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	for _, text := range []string{
		strings.Repeat("\r", 3*maxChunk) + "x\n",
		"ab\n" + strings.Repeat("\r", 2*maxChunk) + "\n" + strings.Repeat("y", 2*maxChunk),
		strings.Repeat("\x80", 3*maxChunk),
		strings.Repeat("é", maxChunk) + "\n",
		strings.Repeat("中", maxChunk),
		strings.Repeat("😀\r\n", maxChunk),
	} {
		d := NewDoc(text)
		checkInvariants(t, d)
		steps := 200
		if raceOn {
			steps = 60
		}
		for i := range steps {
			enc := Encoding(i % 3)
			lines := d.LineCount()
			r := &Range{Start: Position{uint32(rng.IntN(lines + 1)), uint32(rng.IntN(3 * maxChunk))}}
			r.End = r.Start
			if rng.IntN(2) == 0 {
				r.End.Character += uint32(rng.IntN(maxChunk))
			}
			ins := pieces[rng.IntN(len(pieces))]
			want := refApply(text, r, ins, enc)
			if err := d.Apply(r, ins, enc); err != nil {
				t.Fatal(err)
			}
			if got := d.String(); got != want {
				t.Fatalf("edit %d %+v %q: text differs\n got %q\nwant %q", i, *r, ins, trim(got), trim(want))
			}
			checkInvariants(t, d)
			text = want
		}
	}
}

// TestChunkAlignedEdits deletes and replaces every range that starts and
// ends on chunk boundaries of a document cut into small chunks and blocks,
// so that whole chunks and whole blocks go.
func TestChunkAlignedEdits(t *testing.T) {
	text := "ab\ncd\r\nef\rgh\nij😀k\nlm\r\nno\npq\n\nrs"
	base := newDocCut(text, 3, 2)
	var bounds []int
	n := 0
	for _, c := range allChunks(base) {
		bounds = append(bounds, n)
		n += len(c.text)
	}
	bounds = append(bounds, n)
	for _, ins := range []string{"", "X", "\r", "\n", "1\r\n2"} {
		for i, o1 := range bounds {
			for _, o2 := range bounds[i:] {
				d := newDocCut(text, 3, 2)
				r := &Range{posOf(text, o1, UTF16), posOf(text, o2, UTF16)}
				if err := d.Apply(r, ins, UTF16); err != nil {
					t.Fatal(err)
				}
				if got, want := d.String(), text[:o1]+ins+text[o2:]; got != want {
					t.Fatalf("bytes %d..%d to %q: got %q, want %q", o1, o2, ins, got, want)
				}
				checkInvariants(t, d)
			}
		}
	}
}

// TestBlocksStayBounded pastes into one place until its block must be
// regrouped.
func TestBlocksStayBounded(t *testing.T) {
	line := strings.Repeat("abcdefghij", 7) + "\n"
	text := strings.Repeat(line, 1500)
	d := NewDoc(text)
	paste := strings.Repeat(line, 600) // about 10 chunks
	blocks := len(d.blocks)
	for range 12 {
		p := Position{Line: 700, Character: 3}
		if err := d.Apply(&Range{p, p}, paste, UTF16); err != nil {
			t.Fatal(err)
		}
		o := 700*len(line) + 3
		text = text[:o] + paste + text[o:]
		if d.String() != text {
			t.Fatal("text differs")
		}
		checkInvariants(t, d)
	}
	if len(d.blocks) <= blocks {
		t.Errorf("still %d blocks after pasting %d KB", len(d.blocks), 12*len(paste)>>10)
	}
}
