package acp_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/chat/openaitest"
)

// TestUndoRedoOverACP: /undo takes back the model's last turn's changes —
// through fs/write_text_file into the client's buffer (its unsaved text
// exactly), or on the disk with a created file removed — and /redo makes
// them again; a second /redo says there is nothing to redo.
func TestUndoRedoOverACP(t *testing.T) {
	t.Parallel()
	for _, viaClient := range []bool{true, false} {
		t.Run(map[bool]string{true: "client fs", false: "disk"}[viaClient], func(t *testing.T) {
			fake, dataDir, cwd := newFixture(t)
			path, extra := filepath.Join(cwd, "main.go"), filepath.Join(cwd, "extra.go")
			onDisk := "package main\n\nfunc main() {}\n"
			os.WriteFile(path, []byte(onDisk), 0o644)
			a := startAgent(t, fake, dataDir, cwd, map[string]bool{"readTextFile": viaClient, "writeTextFile": viaClient})
			before := onDisk
			if viaClient {
				before = "package main\n\nfunc main() { unsaved() }\n"
				a.SetFile(path, before)
				a.WritesLand()
			}
			id := a.newSession()
			a.AnswerPermissions("accept_all")
			old := strings.Split(before, "\n")[2]
			calls := []openaitest.ToolCall{{ID: "e1", Name: "edit_file", Arguments: `{"path":"main.go","old_string":"` + old + `","new_string":"func main() { run() }"}`}}
			if !viaClient {
				calls = append(calls, openaitest.ToolCall{ID: "e2", Name: "create_file", Arguments: `{"path":"extra.go","content":"package main\n"}`})
			}
			fake.Enqueue(openaitest.Reply{ToolCalls: calls}, openaitest.Reply{Chunks: []string{"Edited."}})
			if _, err := a.prompt(id, text("edit main")); err != nil {
				t.Fatal(err)
			}
			after := strings.Replace(before, old, "func main() { run() }", 1)
			current := func() string {
				if viaClient {
					text, _ := a.File(path)
					return text
				}
				b, _ := os.ReadFile(path)
				return string(b)
			}
			if current() != after {
				t.Fatalf("main.go after the turn: %q", current())
			}

			if res, err := a.prompt(id, text("/undo")); err != nil || res.StopReason != "end_turn" {
				t.Fatalf("/undo: %+v %v", res, err)
			}
			said := a.AgentText(id)
			if current() != before || !strings.Contains(said, "Undid the model's changes to") || !strings.Contains(said, "- "+path) {
				t.Errorf("after /undo main.go is %q; said %q", current(), said)
			}
			if !viaClient {
				if _, err := os.Stat(extra); !os.IsNotExist(err) || !strings.Contains(said, "- "+extra) {
					t.Errorf("the created file after /undo: %v; said %q", err, said)
				}
			}
			if disk, _ := os.ReadFile(path); viaClient && string(disk) != onDisk {
				t.Errorf("the disk was written through a client that holds the file: %q", disk)
			}
			if _, err := a.prompt(id, text("/redo")); err != nil {
				t.Fatal(err)
			}
			if current() != after || !strings.Contains(a.AgentText(id), "Redid the model's changes to") {
				t.Errorf("after /redo main.go is %q; said %q", current(), a.AgentText(id))
			}
			if !viaClient {
				if b, err := os.ReadFile(extra); err != nil || string(b) != "package main\n" {
					t.Errorf("the created file after /redo: %q %v", b, err)
				}
			}
			if _, err := a.prompt(id, text("/redo")); err != nil {
				t.Fatal(err)
			}
			if out := a.AgentText(id); !strings.Contains(out[max(0, len(out)-200):], "nothing to redo") {
				t.Errorf("a second /redo said %q", out[max(0, len(out)-200):])
			}
		})
	}
}
