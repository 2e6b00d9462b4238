package acp_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInstructionsOverACP: the session's cwd's AGENTS.md and the one in
// the folder of a file the prompt embeds (its embedded text is the
// editor's: an embedded AGENTS.md is used over the disk's) are at the end
// of the system message, root first; _meta.ctxls.projectInstructions false
// leaves them out.
func TestInstructionsOverACP(t *testing.T) {
	t.Parallel()
	fake, dataDir, cwd := newFixture(t)
	for name, text := range map[string]string{"AGENTS.md": "ROOT RULE\n", "pkg/AGENTS.md": "PKG RULE ON DISK\n", "pkg/f.go": "package pkg\n"} {
		p := filepath.Join(cwd, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a := startAgent(t, fake, dataDir, cwd, nil)
	id := a.newSession()
	if _, err := a.prompt(id, text("hi"),
		map[string]any{"type": "resource_link", "uri": "file://" + filepath.Join(cwd, "pkg/f.go"), "name": "f.go"},
		map[string]any{"type": "resource", "resource": map[string]any{"uri": "file://" + filepath.Join(cwd, "pkg/AGENTS.md"), "text": "PKG RULE EMBEDDED\n"}},
	); err != nil {
		t.Fatal(err)
	}
	sys := fake.LastStreamed().SystemPrompt()
	i, j := strings.Index(sys, "Instructions from "+filepath.Join(cwd, "AGENTS.md")), strings.Index(sys, "PKG RULE EMBEDDED")
	if i < 0 || j < i || !strings.Contains(sys, "ROOT RULE") || strings.Contains(sys, "PKG RULE ON DISK") {
		t.Errorf("system prompt over ACP:\n%s", sys)
	}

	off := startAgent(t, fake, t.TempDir(), cwd, nil)
	var res map[string]any
	if err := off.Call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{},
		"_meta": map[string]any{"ctxls": map[string]any{"projectInstructions": false}}}, &res); err != nil {
		t.Fatal(err)
	}
	id = off.newSession()
	if _, err := off.prompt(id, text("hi")); err != nil {
		t.Fatal(err)
	}
	if sys := fake.LastStreamed().SystemPrompt(); strings.Contains(sys, "RULE") {
		t.Errorf("instructions given with projectInstructions false:\n%s", sys)
	}
}
