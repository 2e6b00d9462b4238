package buffer

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
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

// ParseEncoding parses an LSP PositionEncodingKind.
func ParseEncoding(s string) (Encoding, error) {
	switch s {
	case "utf-8":
		return UTF8, nil
	case "utf-16":
		return UTF16, nil
	case "utf-32":
		return UTF32, nil
	}
	return UTF16, fmt.Errorf("unknown position encoding %q", s)
}

// Position is an LSP position.
type Position struct{ Line, Character uint32 }

// Range is an LSP range.
type Range struct{ Start, End Position }

func (p Position) after(q Position) bool {
	return p.Line > q.Line || p.Line == q.Line && p.Character > q.Character
}

// Chunk sizes: a rebuilt region is cut into chunks of about targetChunk
// bytes; a chunk grows up to maxChunk before it is split.
const (
	targetChunk = 8 << 10
	maxChunk    = 16 << 10
)

type chunk struct {
	text  []byte
	lines int // line breaks in text
}

// Doc is one document's text. It is not safe for concurrent use; Set
// serialises access.
type Doc struct {
	chunks []chunk
	size   int
	cached *string
}

// NewDoc returns a document holding text.
func NewDoc(text string) *Doc {
	d := &Doc{}
	d.chunks = splitChunks([]byte(text))
	d.size = len(text)
	return d
}

// Len is the text's length in bytes.
func (d *Doc) Len() int { return d.size }

// LineCount is the number of lines (line breaks + 1).
func (d *Doc) LineCount() int {
	n := 1
	for _, c := range d.chunks {
		n += c.lines
	}
	return n
}

// String returns the whole text.
func (d *Doc) String() string {
	if d.cached != nil {
		return *d.cached
	}
	var b strings.Builder
	b.Grow(d.size)
	for _, c := range d.chunks {
		b.Write(c.text)
	}
	s := b.String()
	d.cached = &s
	return s
}

// countBreaks counts line breaks in b, taking a final "\r" as a break (the
// chunk invariant guarantees no "\n" follows it in the next chunk).
func countBreaks(b []byte) int {
	n := bytes.Count(b, lf)
	if bytes.IndexByte(b, '\r') >= 0 {
		n += bytes.Count(b, cr) - bytes.Count(b, crlf)
	}
	return n
}

var (
	lf   = []byte("\n")
	cr   = []byte("\r")
	crlf = []byte("\r\n")
)

// nthBreakEnd returns the offset just after the n-th (1-based) line break
// of b, or -1.
func nthBreakEnd(b []byte, n int) int {
	if bytes.IndexByte(b, '\r') < 0 {
		// Fast path: only "\n" breaks.
		off := 0
		for ; n > 0; n-- {
			i := bytes.IndexByte(b[off:], '\n')
			if i < 0 {
				return -1
			}
			off += i + 1
		}
		return off
	}
	for i := 0; i < len(b); i++ {
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
// sequence, never right after a "\r".
func splitChunks(text []byte) []chunk {
	if len(text) == 0 {
		return []chunk{{}}
	}
	var out []chunk
	for len(text) > 0 {
		p := len(text)
		if p > maxChunk {
			p = targetChunk
			for p < len(text) && (text[p-1] == '\r' || isContinuation(text[p])) {
				p++
			}
		}
		piece := make([]byte, p, p+p/4)
		copy(piece, text[:p])
		out = append(out, chunk{text: piece, lines: countBreaks(piece)})
		text = text[p:]
	}
	return out
}

func isContinuation(b byte) bool { return b&0xC0 == 0x80 }

// cursor is a place in the document: chunk index and byte offset in it.
type cursor struct{ ci, pos int }

// offsetOf converts a position into a cursor, clamping as the package doc
// describes.
func (d *Doc) offsetOf(p Position, enc Encoding) cursor {
	// Find the chunk where line p.Line starts.
	line := int(p.Line)
	cur := cursor{}
	if line > 0 {
		seen := 0
		found := false
		for ci, c := range d.chunks {
			if seen+c.lines < line {
				seen += c.lines
				continue
			}
			// The (line-seen)-th break of this chunk ends the previous line.
			if end := nthBreakEnd(c.text, line-seen); end >= 0 {
				cur = cursor{ci, end}
				found = true
			}
			break
		}
		if !found {
			return d.end()
		}
	}
	// Walk Character units along the line.
	want := int(p.Character)
	units := 0
	for units < want {
		cur = d.normalize(cur)
		b := d.chunks[cur.ci].text
		if cur.pos >= len(b) {
			return cur // end of document
		}
		c := b[cur.pos]
		if c == '\n' || c == '\r' {
			return cur // end of line
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
			return cur // inside a character: snap to its start
		}
		units += u
		cur.pos += size
	}
	return cur
}

// normalize moves a cursor sitting at the end of a chunk to the start of
// the next non-empty one, if any.
func (d *Doc) normalize(c cursor) cursor {
	for c.pos >= len(d.chunks[c.ci].text) && c.ci+1 < len(d.chunks) {
		c = cursor{c.ci + 1, 0}
	}
	return c
}

func (d *Doc) end() cursor {
	last := len(d.chunks) - 1
	return cursor{last, len(d.chunks[last].text)}
}

// ErrBadRange reports a range whose start is after its end.
var ErrBadRange = errors.New("range start is after its end")

// Apply replaces the text in r (the whole text when r is nil) with text.
func (d *Doc) Apply(r *Range, text string, enc Encoding) error {
	if r == nil {
		*d = Doc{chunks: splitChunks([]byte(text)), size: len(text)}
		return nil
	}
	if r.Start.after(r.End) {
		return fmt.Errorf("%w: %d:%d > %d:%d", ErrBadRange, r.Start.Line, r.Start.Character, r.End.Line, r.End.Character)
	}
	a := d.offsetOf(r.Start, enc)
	b := d.offsetOf(r.End, enc)
	if b.ci < a.ci {
		b = a // the same place, reached through a chunk boundary
	}
	if a.ci == b.ci && a.pos == b.pos && text == "" {
		return nil
	}
	d.cached = nil
	// Build the new content of chunks a.ci..b.ci.
	first, last := a.ci, b.ci
	head := d.chunks[first].text[:a.pos]
	tail := d.chunks[last].text[b.pos:]
	removed := 0
	for ci := first; ci <= last; ci++ {
		removed += len(d.chunks[ci].text)
	}
	removed -= len(head) + len(tail)
	// Fast path: the edit stays inside one chunk that stays small enough
	// and keeps the "\r" invariant.
	if first == last {
		n := len(head) + len(text) + len(tail)
		if n <= maxChunk && n > 0 && !(last+1 < len(d.chunks) && endsWithCR(head, text, tail)) {
			c := &d.chunks[first]
			newText := c.text
			if cap(newText) >= n {
				// In place: move the tail, then write the insertion.
				oldLen := len(newText)
				newText = newText[:max(oldLen, n)]
				copy(newText[len(head)+len(text):], newText[b.pos:oldLen])
				copy(newText[len(head):], text)
				newText = newText[:n]
			} else {
				buf := make([]byte, n, n+n/4)
				copy(buf, head)
				copy(buf[len(head):], text)
				copy(buf[len(head)+len(text):], tail)
				newText = buf
			}
			c.text = newText
			c.lines = countBreaks(newText)
			d.size += len(text) - removed
			return nil
		}
	}
	content := make([]byte, 0, len(head)+len(text)+len(tail))
	content = append(content, head...)
	content = append(content, text...)
	content = append(content, tail...)
	for len(content) > 0 && content[len(content)-1] == '\r' && last+1 < len(d.chunks) {
		last++
		content = append(content, d.chunks[last].text...)
	}
	var repl []chunk
	if len(content) > 0 || len(d.chunks) == last-first+1 {
		repl = splitChunks(content)
	}
	d.chunks = append(d.chunks[:first], append(repl, d.chunks[last+1:]...)...)
	d.size += len(text) - removed
	return nil
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
