package chat

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/prompts"
)

// tree writes files (relative path → text) under a new folder.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, text := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func paths(ins []prompts.Instruction, root string) []string {
	var out []string
	for _, in := range ins {
		if root != "" {
			out = append(out, strings.TrimPrefix(in.Path, root+"/"))
		} else {
			out = append(out, in.Path)
		}
	}
	return out
}

func TestFindInstructions(t *testing.T) {
	root := tree(t, map[string]string{
		"AGENTS.md":                         "root rules\n",
		"CLAUDE.md":                         "not read: the root has AGENTS.md\n",
		"a/AGENTS.md":                       "a rules\n",
		"a/b/AGENTS.md":                     "b rules\n",
		"a/b/c/main.go":                     "package c\n",
		"x/AGENTS.md":                       "x rules\n",
		"x/x.go":                            "package x\n",
		"y/AGENTS.md":                       "y rules, for no file of the turn\n",
		".git/AGENTS.md":                    "never\n",
		".git/hooks/AGENTS.md":              "never\n",
		".git/hooks/pre-commit":             "#!/bin/sh\n",
		"a/b/c/AGENTS.md.bak":               "no\n",
		"nested-root/AGENTS.md":             "never: outside the files' folders\n",
		"a/b/c/node_modules/z/AGENTS.md":    "not on the way up\n",
		"a/b/c/node_modules/z/index.js":     "",
		"z/.github/copilot-instructions.md": "not at a root\n",
	})
	files := []string{filepath.Join(root, "a/b/c/main.go"), filepath.Join(root, "x/x.go"), filepath.Join(root, ".git/hooks/pre-commit"), "/elsewhere/f.go"}
	got := findInstructions([]string{root}, files, nil, slog.New(slog.DiscardHandler))
	want := []string{"AGENTS.md", "a/AGENTS.md", "x/AGENTS.md", "a/b/AGENTS.md"}
	if p := paths(got, root); !slices.Equal(p, want) {
		t.Fatalf("found %v, want %v (root first, then by depth)", p, want)
	}
	if got[0].Content != "root rules\n" || got[0].Unsaved || got[0].Size != len("root rules\n") || got[0].Cut != "" {
		t.Errorf("root: %+v", got[0])
	}

	// The editor's unsaved text over the disk's; the same input again
	// gives the same instructions (the prefix's stability rests on it).
	b := buffers{filepath.Join(root, "a/AGENTS.md"): "a rules, edited\n"}
	again := findInstructions([]string{root}, files, b, slog.New(slog.DiscardHandler))
	if again[1].Content != "a rules, edited\n" || !again[1].Unsaved {
		t.Errorf("open buffer not used: %+v", again[1])
	}
	// Open with the disk's text: not unsaved (an editor that opens every
	// file it shows would mark them all).
	b[filepath.Join(root, "AGENTS.md")] = "root rules\n"
	again = findInstructions([]string{root}, files, b, slog.New(slog.DiscardHandler))
	if again[0].Content != "root rules\n" || again[0].Unsaved || !again[1].Unsaved {
		t.Errorf("an open file as on disk counted unsaved, or an edited one not: %+v / %+v", again[0], again[1])
	}
	if s1, s2 := prompts.InstructionsSection(again), prompts.InstructionsSection(findInstructions([]string{root}, files, b, slog.New(slog.DiscardHandler))); s1 != s2 || strings.Contains(s1, "unsaved") {
		t.Errorf("the section changes between two reads, or says unsaved (a save would change the prefix):\n%s", s1)
	}
}

func TestFindInstructionsFallbacks(t *testing.T) {
	claude := tree(t, map[string]string{"CLAUDE.md": "claude\n", ".github/copilot-instructions.md": "copilot\n"})
	copilot := tree(t, map[string]string{".github/copilot-instructions.md": "copilot\n"})
	none := tree(t, map[string]string{"README.md": "x\n"})
	got := findInstructions([]string{claude, copilot, none}, nil, nil, slog.New(slog.DiscardHandler))
	want := []string{filepath.Join(claude, "CLAUDE.md"), filepath.Join(copilot, ".github/copilot-instructions.md")}
	if p := paths(got, ""); !slices.Equal(p, want) {
		t.Errorf("found %v, want %v", p, want)
	}
	// A root's AGENTS.md only in the editor counts as the root's.
	b := buffers{filepath.Join(claude, "AGENTS.md"): "agents, not yet saved\n"}
	if got := findInstructions([]string{claude}, nil, b, slog.New(slog.DiscardHandler)); len(got) != 1 || got[0].Content != "agents, not yet saved\n" {
		t.Errorf("an unsaved root AGENTS.md: %+v", got)
	}
}

func TestFindInstructionsRefuses(t *testing.T) {
	outside := tree(t, map[string]string{"secret.md": "OUTSIDE SECRET\n"})
	root := tree(t, map[string]string{
		"bin/AGENTS.md": "a\x00b\n",
		"lat/AGENTS.md": "caf\xe9\n",
		"bin/f.go":      "", "lat/f.go": "", "out/f.go": "", "esc/in/f.go": "",
	})
	if err := os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(root, "AGENTS.md")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, "CLAUDE.md"), []byte("claude: not the fallback of a root that has AGENTS.md\n"), 0o644)
	if err := os.Symlink(outside, filepath.Join(root, "out", "link")); err != nil {
		t.Fatal(err)
	}
	// A folder that is a link to outside: its AGENTS.md is outside.
	os.WriteFile(filepath.Join(outside, "AGENTS.md"), []byte("OUTSIDE AGENTS\n"), 0o644)
	if err := os.Symlink(outside, filepath.Join(root, "esc", "in2")); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	files := []string{filepath.Join(root, "bin/f.go"), filepath.Join(root, "lat/f.go"), filepath.Join(root, "esc/in2/x.go"), filepath.Join(root, "../"+filepath.Base(outside)+"/x.go")}
	got := findInstructions([]string{root}, files, nil, slog.New(slog.NewTextHandler(&log, nil)))
	if len(got) != 0 {
		t.Errorf("read %+v", got)
	}
	for _, want := range []string{"is outside the workspace", "skipped: binary", "skipped: not UTF-8"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("no log line %q:\n%s", want, log.String())
		}
	}
}

func TestFindInstructionsCaps(t *testing.T) {
	line := strings.Repeat("x", 99) + "\n" // 100 bytes
	big := strings.Repeat(line, 400)       // 40,000 bytes
	root := tree(t, map[string]string{"AGENTS.md": big, "a/AGENTS.md": big, "a/b/AGENTS.md": big, "a/b/c/AGENTS.md": line, "a/b/c/f.go": ""})
	got := findInstructions([]string{root}, []string{filepath.Join(root, "a/b/c/f.go")}, nil, slog.New(slog.DiscardHandler))
	if len(got) != 4 {
		t.Fatalf("%d files", len(got))
	}
	for _, in := range got[:2] {
		if n := len(in.Content); n != 32700 || in.Size != 40000 || !strings.Contains(in.Cut, "first 32,700 bytes of its 40,000 shown; instructions files are given up to 32,768 bytes each") {
			t.Errorf("%s: %d bytes, cut %q", in.Path, n, in.Cut)
		}
	}
	if n := len(got[2].Content); n != 100 || !strings.Contains(got[2].Cut, "first 100 bytes of its 40,000 shown; the instructions files together are given up to 65,536 bytes") {
		t.Errorf("third: %d bytes, cut %q", n, got[2].Cut)
	}
	if got[3].Content != "" || !strings.HasPrefix(got[3].Cut, "not shown") {
		t.Errorf("fourth, over the total: %+v", got[3])
	}
	total := 0
	for _, in := range got {
		total += len(in.Content)
		if strings.Contains(in.Content, "x\nx") && !strings.HasSuffix(in.Content, "\n") {
			t.Errorf("%s cut inside a line", in.Path)
		}
	}
	if total > MaxInstructionsBytes {
		t.Errorf("%d bytes in all", total)
	}
	// One long line is shown in part up to the file's cap.
	long := tree(t, map[string]string{"AGENTS.md": strings.Repeat("é", 20000)})
	if got := findInstructions([]string{long}, nil, nil, slog.New(slog.DiscardHandler)); len(got) != 1 || len(got[0].Content) != 32768 || got[0].Cut == "" {
		t.Errorf("one long line: %d bytes, cut %q", len(got[0].Content), got[0].Cut)
	}
	section := prompts.InstructionsSection(got)
	if !strings.Contains(section, "[cut: the first 32,700 bytes") || !strings.Contains(section, "[not shown:") {
		t.Errorf("the section does not say what was cut")
	}
}
