package prompts

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTitlePromptGoldens(t *testing.T) {
	golden(t, "title_system.golden", TitleSystem())
	golden(t, "title_input.golden", TitleInput("How do I undo the canary deploy?\nIt broke checkout.", "Roll back with helm."))
	golden(t, "title_input_no_answer.golden", TitleInput("Fix the login redirect", ""))
	golden(t, "dropped_note.golden", DroppedNote(12))
}

// TestTitleInputIsCutOnRuneBoundaries: each part is cut to maxTitleInput
// bytes on a rune boundary, the cut marked.
func TestTitleInputIsCutOnRuneBoundaries(t *testing.T) {
	long := strings.Repeat("é", maxTitleInput) // 2 bytes each
	in := TitleInput("a"+long, "answer")
	if !utf8.ValidString(in) || !strings.Contains(in, "é…\n\nThe assistant answered:\n\nanswer") || len(in) > 2*maxTitleInput+100 {
		t.Errorf("cut input (%d bytes) is wrong: %q…", len(in), in[:80])
	}
	if got := TitleInput("short", ""); got != "The user wrote:\n\nshort" {
		t.Errorf("without an answer: %q", got)
	}
}
