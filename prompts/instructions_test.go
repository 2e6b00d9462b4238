package prompts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInstructionsGolden: the project instructions end the system prompt,
// after the session's files, each under its path, the cut noted; the
// unsaved flag changes nothing (a save must not change the cached prefix);
// without any the system prompt is as before.
func TestInstructionsGolden(t *testing.T) {
	in := Input{SessionFiles: []string{"a.csv"}}
	plain := System(in)
	in.Instructions = []Instruction{
		{Path: "/w/AGENTS.md", Content: "Run `go vet`.\n```go\nx := 1\n```\n", Size: 30},
		{Path: "/w/svc/AGENTS.md", Content: "Wrap errors.", Size: 20000, Cut: "cut: the first 12 bytes of its 20,000 shown; …"},
	}
	got := System(in)
	if !strings.HasPrefix(got, plain) || !strings.HasSuffix(got, InstructionsSection(in.Instructions)) {
		t.Fatalf("the instructions are not at the end of the system prompt:\n%s", got)
	}
	in.Instructions[0].Unsaved = true
	if System(in) != got {
		t.Error("an unsaved instructions file changes the system prompt")
	}
	section := InstructionsSection(in.Instructions)
	path := filepath.Join("testdata", "instructions.golden")
	if *update {
		os.WriteFile(path, []byte(section), 0o644)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil || string(want) != section {
		t.Errorf("differs from %s (go test ./prompts -run InstructionsGolden -update):\n%s", path, section)
	}
}
