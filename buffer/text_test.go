package buffer

import (
	"math/rand/v2"
	"strings"
	"testing"
)

var pieces = []string{"", "a", "xyz", " ", "\t", "\n", "\r", "\r\n", "é", "中文", "😀", "👩‍💻", "\r\n\r\n", "\n\r", "ß😀\r"}

func randomText(rng *rand.Rand, n int) string {
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(pieces[rng.IntN(len(pieces))])
	}
	return b.String()
}

// randomPos produces positions that may land beyond line ends, past the last
// line, or inside characters.
func randomPos(rng *rand.Rand, lines int) Position {
	return Position{Line: uint32(rng.IntN(lines + 2)), Character: uint32(rng.IntN(12))}
}

func TestRandomEditsMatchReference(t *testing.T) {
	for _, enc := range []Encoding{UTF16, UTF8, UTF32} {
		for seed := uint64(1); seed <= 4; seed++ {
			rng := rand.New(rand.NewPCG(seed, uint64(enc)))
			// Large enough to span many chunks in some seeds.
			text := randomText(rng, []int{0, 50, 3000, 40000}[seed-1])
			d := NewDoc(text)
			if seed%2 == 0 {
				d = newDocCut(text, 7, 3) // chunk and block boundaries everywhere
			}
			for i := 0; i < 1500; i++ {
				lines := d.LineCount()
				r := &Range{Start: randomPos(rng, lines), End: randomPos(rng, lines)}
				if r.Start.after(r.End) {
					r.Start, r.End = r.End, r.Start
				}
				ins := pieces[rng.IntN(len(pieces))]
				if rng.IntN(50) == 0 {
					ins = randomText(rng, 20000) // occasionally a big paste
				}
				want := refApply(text, r, ins, enc)
				if err := d.Apply(r, ins, enc); err != nil {
					t.Fatalf("enc %v seed %d edit %d: %v", enc, seed, i, err)
				}
				text = want
				if got := d.String(); got != want {
					t.Fatalf("enc %v seed %d edit %d %+v %q: text differs\n got %q\nwant %q", enc, seed, i, r, ins, trim(got), trim(want))
				}
				if d.Len() != len(want) || d.LineCount() != refLines(want) {
					t.Fatalf("enc %v seed %d edit %d: len %d lines %d, want %d %d", enc, seed, i, d.Len(), d.LineCount(), len(want), refLines(want))
				}
				checkInvariants(t, d)
			}
		}
	}
}

func refLines(s string) int {
	return strings.Count(strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n"), "\n") + 1
}

func trim(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// allChunks lists the chunks of d in order.
func allChunks(d *Doc) []chunk {
	var out []chunk
	for _, b := range d.blocks {
		out = append(out, b.chunks...)
	}
	return out
}

func checkInvariants(t *testing.T, d *Doc) {
	t.Helper()
	if len(d.blocks) == 0 {
		t.Fatal("no blocks")
	}
	if len(d.index) != len(d.blocks)+1 {
		t.Fatalf("index has %d entries for %d blocks", len(d.index), len(d.blocks))
	}
	for i, b := range d.blocks {
		if len(b.chunks) == 0 || len(b.chunks) > maxBlock {
			t.Fatalf("block %d of %d holds %d chunks", i, len(d.blocks), len(b.chunks))
		}
		lines := 0
		for _, c := range b.chunks {
			lines += c.lines
		}
		if b.lines != lines {
			t.Fatalf("block %d: cached line count %d, chunks hold %d", i, b.lines, lines)
		}
		// index[j] covers blocks j-lowbit(j) .. j-1.
		j := i + 1
		sum := 0
		for _, b := range d.blocks[j-j&-j : j] {
			sum += b.lines
		}
		if d.index[j] != sum {
			t.Fatalf("index[%d] = %d, want %d", j, d.index[j], sum)
		}
	}
	chunks := allChunks(d)
	lines, size := 0, 0
	for i, c := range chunks {
		if len(c.text) == 0 && len(chunks) > 1 {
			t.Fatalf("chunk %d of %d is empty", i, len(chunks))
		}
		if _, lone := breaks(c.text, 0, len(c.text)); lone > 0 && !c.lone {
			t.Fatalf("chunk %d holds %d lone \\r breaks but is not marked", i, lone)
		}
		lines += c.lines
		size += len(c.text)
		if i < len(chunks)-1 && len(c.text) > 0 && c.text[len(c.text)-1] == '\r' {
			t.Fatalf("chunk %d of %d ends with \\r", i, len(chunks))
		}
		if i > 0 && len(c.text) > 0 && isContinuation(c.text[0]) {
			t.Fatalf("chunk %d starts inside a UTF-8 sequence", i)
		}
		if c.lines != countBreaks(c.text) {
			t.Fatalf("chunk %d: cached line count %d, real %d", i, c.lines, countBreaks(c.text))
		}
	}
	if d.lines != lines || d.size != size {
		t.Fatalf("totals: %d lines, %d bytes; chunks hold %d, %d", d.lines, d.size, lines, size)
	}
}

func TestTrickyEdits(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		r          *Range
		ins        string
		enc        Encoding
		want       string
	}{
		{"insert between CR and LF", "a\r\nb", &Range{Position{0, 1}, Position{0, 1}}, "\n", UTF16, "a\n\r\nb"},
		{"delete the line break of CRLF", "a\r\nb", &Range{Position{0, 1}, Position{1, 0}}, "", UTF16, "ab"},
		{"past line end clamps", "ab\ncd", &Range{Position{0, 99}, Position{0, 99}}, "X", UTF16, "abX\ncd"},
		{"past last line clamps", "ab\ncd", &Range{Position{9, 0}, Position{9, 3}}, "!", UTF16, "ab\ncd!"},
		{"middle of surrogate pair snaps", "😀x", &Range{Position{0, 1}, Position{0, 1}}, "A", UTF16, "A😀x"},
		{"after emoji in utf-16", "😀x", &Range{Position{0, 2}, Position{0, 3}}, "y", UTF16, "😀y"},
		{"emoji in utf-8", "😀x", &Range{Position{0, 4}, Position{0, 5}}, "y", UTF8, "😀y"},
		{"inside utf-8 sequence snaps", "éx", &Range{Position{0, 1}, Position{0, 1}}, "A", UTF8, "Aéx"},
		{"utf-32", "😀é", &Range{Position{0, 1}, Position{0, 2}}, "e", UTF32, "😀e"},
		{"lone CR is a line break", "a\rb", &Range{Position{1, 0}, Position{1, 1}}, "B", UTF16, "a\rB"},
		{"empty document", "", &Range{Position{0, 0}, Position{0, 0}}, "hi", UTF16, "hi"},
		{"whole replacement", "old", nil, "new\r\n", UTF16, "new\r\n"},
		{"tab counts one", "\tx", &Range{Position{0, 1}, Position{0, 2}}, "y", UTF16, "\ty"},
		{"end of document", "ab\r\n", &Range{Position{1, 0}, Position{1, 0}}, "c", UTF16, "ab\r\nc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := NewDoc(tc.text)
			if err := d.Apply(tc.r, tc.ins, tc.enc); err != nil {
				t.Fatal(err)
			}
			if got := d.String(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if ref := refApply(tc.text, tc.r, tc.ins, tc.enc); ref != tc.want {
				t.Errorf("reference gives %q, want %q", ref, tc.want)
			}
		})
	}
	d := NewDoc("abc")
	if err := d.Apply(&Range{Position{0, 2}, Position{0, 1}}, "x", UTF16); err == nil || d.String() != "abc" {
		t.Errorf("reversed range: err %v text %q", err, d.String())
	}
}

// TestCRLFAcrossChunks grows a document around chunk boundaries with CR and
// LF inserted on either side.
func TestCRLFAcrossChunks(t *testing.T) {
	text := strings.Repeat("x", maxChunk+5)
	d := NewDoc(text)
	for i := 0; i < 200; i++ {
		pos := Position{0, uint32(targetChunk - 3 + i%7)}
		ins := []string{"\r", "\n", "\r\n", "é"}[i%4]
		text = refApply(text, &Range{pos, pos}, ins, UTF16)
		if err := d.Apply(&Range{pos, pos}, ins, UTF16); err != nil {
			t.Fatal(err)
		}
		if d.String() != text {
			t.Fatalf("step %d differs", i)
		}
		checkInvariants(t, d)
	}
}

// TestStrayContinuationBytes edits a document that is not valid UTF-8 so
// that stray continuation bytes come to the start of a chunk, right after a
// chunk ending in a lead byte: the two must not be read as one character.
func TestStrayContinuationBytes(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    Range
		ins  string
	}{
		{"delete the first character of a chunk", Range{Position{0, 1}, Position{0, 2}}, ""},
		{"replace it with nothing across chunks", Range{Position{0, 0}, Position{0, 2}}, ""},
		{"replace it with stray bytes", Range{Position{0, 1}, Position{0, 2}}, "\xb8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := "\xe4x\xb8\xadyz"
			d := newDocCut(text, 1, 1) // chunks "\xe4", "x\xb8\xad", "y", "z"
			checkInvariants(t, d)
			want := refApply(text, &tc.r, tc.ins, UTF16)
			if err := d.Apply(&tc.r, tc.ins, UTF16); err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, d)
			if got := d.String(); got != want {
				t.Fatalf("got %q want %q", got, want)
			}
			// An edit past the joined bytes lands where the reference says.
			r := &Range{Position{0, 3}, Position{0, 3}}
			want = refApply(want, r, "!", UTF16)
			if err := d.Apply(r, "!", UTF16); err != nil {
				t.Fatal(err)
			}
			if got := d.String(); got != want {
				t.Fatalf("after a second edit: got %q want %q", got, want)
			}
		})
	}
}
