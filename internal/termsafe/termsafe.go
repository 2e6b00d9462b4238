// Package termsafe makes text that came from outside ctxls (a server's or
// tool's name, a .mcp.json command, a path, a diff, the model's answer)
// safe to show: a control character cannot move the cursor, clear the
// screen, retitle the window or write the clipboard; it is shown visibly
// instead. C0 controls and DEL are shown in caret notation (ESC as ^[, CR
// as ^M, BEL as ^G, DEL as ^?), C1 controls and the bidirectional
// overrides as \uXXXX, and bytes that are not UTF-8 as \xNN.
//
// Line is for a field shown within a line (a name, a path, a command):
// newline and tab are escaped too. Text is for multi-line text (a diff,
// the model's answer): newline and tab are kept, nothing else.
package termsafe

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Line is s made safe to show within one line: every control character,
// newline and tab included, shown visibly.
func Line(s string) string { return escape(s, false) }

// Text is s made safe to show as lines of text: newline and tab kept,
// every other control character shown visibly.
func Text(s string) string { return escape(s, true) }

// Lines is each of ss made safe by Line.
func Lines(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = Line(s)
	}
	return out
}

// Safe reports whether s shows as it is within a line (Line(s) == s).
func Safe(s string) bool { return !needs(s, false) }

func escape(s string, multiline bool) string {
	if !needs(s, multiline) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x20:
			if multiline && (r == '\n' || r == '\t') {
				b.WriteRune(r)
			} else {
				b.WriteByte('^')
				b.WriteByte(byte(r) + '@')
			}
		case r == 0x7f:
			b.WriteString("^?")
		case unsafe(r, multiline):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// needs reports whether s has anything to escape.
func needs(s string, multiline bool) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c == 0x7f || c < 0x20 && !(multiline && (c == '\n' || c == '\t')) {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || unsafe(r, multiline) {
			return true
		}
		i += size
	}
	return false
}

// unsafe reports whether r is a control character to show escaped: C0, DEL,
// C1, the line and paragraph separators, and the bidirectional embeddings,
// overrides and isolates (which reorder what follows them on screen).
func unsafe(r rune, multiline bool) bool {
	switch {
	case r < 0x20:
		return !(multiline && (r == '\n' || r == '\t'))
	case r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x2028, r == 0x2029, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}
