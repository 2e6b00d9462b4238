package session

import (
	"strings"
	"testing"
)

// TestControlC1: the names the stores and write_file take (a title, a
// model, a tool's name, an output path, a workspace folder) refuse C1
// control characters (U+0080 to U+009F) as they refuse C0 and DEL: CSI
// (U+009B) drives a terminal the title or file name is printed to, NEL
// (U+0085) breaks a line. Characters beyond them stay accepted.
func TestControlC1(t *testing.T) {
	for _, s := range []string{"a\u0080b", "a\u0085b", "\u009b31mred", "a\u009fb", "a\x1bb", "a\x7fb", "a\nb"} {
		if !HasControl(s) {
			t.Errorf("HasControl(%q) = false, want true", s)
		}
		if _, err := ValidTitle("title " + s); err == nil {
			t.Errorf("ValidTitle(%q) accepted it", s)
		}
		if _, _, err := ParseOutputPath("results/" + s + ".csv"); err == nil || !strings.Contains(err.Error(), "control character") {
			t.Errorf("ParseOutputPath(%q) = %v, want a control character refused", s, err)
		}
		if _, err := ValidModel("m" + s); err == nil {
			t.Errorf("ValidModel(%q) accepted it", s)
		}
		if err := ValidToolPermission("t"+s, ToolAllow); err == nil {
			t.Errorf("ValidToolPermission(%q) accepted it", s)
		}
	}
	for _, s := range []string{"plain", "caf\u00e9 \u00a0nbsp", "日本語", "emoji 🙂", "\u00a0"} {
		if HasControl(s) {
			t.Errorf("HasControl(%q) = true, want false", s)
		}
	}
}
