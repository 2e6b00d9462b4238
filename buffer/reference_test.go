package buffer

import (
	"unicode/utf16"
	"unicode/utf8"
)

// refApply is a deliberately naive model of an LSP edit: split into lines,
// walk code points, splice strings.
func refApply(text string, r *Range, newText string, enc Encoding) string {
	if r == nil {
		return newText
	}
	a := refOffset(text, r.Start, enc)
	b := refOffset(text, r.End, enc)
	return text[:a] + newText + text[b:]
}

// refOffset converts a position into a byte offset of text.
func refOffset(text string, p Position, enc Encoding) int {
	// Line starts.
	starts := []int{0}
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '\n':
			starts = append(starts, i+1)
		case '\r':
			if i+1 < len(text) && text[i+1] == '\n' {
				i++
			}
			starts = append(starts, i+1)
		}
	}
	if int(p.Line) >= len(starts) {
		return len(text)
	}
	off := starts[p.Line]
	units := 0
	for off < len(text) && text[off] != '\n' && text[off] != '\r' {
		r, size := utf8.DecodeRuneInString(text[off:])
		var u int
		switch enc {
		case UTF8:
			u = size
		case UTF32:
			u = 1
		default:
			u = 1
			if r != utf8.RuneError || size > 1 {
				u = len(utf16.Encode([]rune{r}))
			}
		}
		if units+u > int(p.Character) {
			break
		}
		units += u
		off += size
	}
	return off
}
