package termsafe

import (
	"testing"
	"unicode/utf8"
)

func TestLineAndText(t *testing.T) {
	for _, c := range []struct{ in, line, text string }{
		{"plain · text", "plain · text", "plain · text"},
		{"\x1b[2J\x1b[H", "^[[2J^[[H", "^[[2J^[[H"},
		{"a\r\nb\tc\a", "a^M^Jb^Ic^G", "a^M\nb\tc^G"},
		{"\x1b]52;c;ZXZpbA==\x07", "^[]52;c;ZXZpbA==^G", "^[]52;c;ZXZpbA==^G"},
		{"csi\u009b2J", `csi\u009b2J`, `csi\u009b2J`},
		{"bad\x9bbyte", `bad\x9bbyte`, `bad\x9bbyte`},
		{"del\x7f", "del^?", "del^?"},
		{"rtl\u202eevil", `rtl\u202eevil`, `rtl\u202eevil`},
	} {
		if got := Line(c.in); got != c.line {
			t.Errorf("Line(%q) = %q, want %q", c.in, got, c.line)
		}
		if got := Text(c.in); got != c.text {
			t.Errorf("Text(%q) = %q, want %q", c.in, got, c.text)
		}
		if Safe(c.in) != (c.in == c.line) {
			t.Errorf("Safe(%q) = %v", c.in, Safe(c.in))
		}
	}
}

// FuzzLine: whatever the input, Line's output is valid UTF-8 with no
// control character, and Text's has none but newline and tab.
func FuzzLine(f *testing.F) {
	f.Add("\x1b[2K\x1b[1A\r\n\u009b\xff")
	f.Fuzz(func(t *testing.T, s string) {
		for _, multiline := range []bool{false, true} {
			out := escape(s, multiline)
			if !utf8.ValidString(out) {
				t.Fatalf("%q: not UTF-8: %q", s, out)
			}
			for _, r := range out {
				if unsafe(r, multiline) {
					t.Fatalf("%q: control %U in %q", s, r, out)
				}
			}
		}
		if Safe(s) != (Line(s) == s) {
			t.Fatalf("Safe(%q) disagrees with Line", s)
		}
	})
}
