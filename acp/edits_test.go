package acp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/acp/acptest"
	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// TestModelEditsOverACP: the model's edits are computed against the
// client's text (fs/read_text_file, unsaved), shown as a tool_call of kind
// edit with a diff, asked with session/request_permission, and written
// through fs/write_text_file; rejected ones are not; without the client's
// fs the file on disk is written.
func TestModelEditsOverACP(t *testing.T) {
	t.Parallel()
	for _, viaClient := range []bool{true, false} {
		t.Run(map[bool]string{true: "client fs", false: "disk"}[viaClient], func(t *testing.T) {
			fake, dataDir, cwd := newFixture(t)
			path := filepath.Join(cwd, "main.go")
			os.WriteFile(path, []byte("package main\n\nfunc main() {}\n"), 0o644)
			a := startAgent(t, fake, dataDir, cwd, map[string]bool{"readTextFile": viaClient, "writeTextFile": viaClient})
			unsaved := "package main\n\nfunc main() { unsaved() }\n"
			if viaClient {
				a.SetFile(path, unsaved)
			}
			id := a.newSession()
			old := "func main() {}"
			if viaClient {
				old = "func main() { unsaved() }"
			}
			a.AnswerPermissions("accept", "reject")
			fake.Enqueue(
				openaitest.Reply{ToolCalls: []openaitest.ToolCall{
					{ID: "e1", Name: "edit_file", Arguments: `{"path":"main.go","old_string":"` + old + `","new_string":"func main() { run() }"}`},
					{ID: "e2", Name: "create_file", Arguments: `{"path":"extra.go","content":"package main\n"}`},
				}},
				openaitest.Reply{Chunks: []string{"Edited."}},
			)
			if _, err := a.prompt(id, text("edit main")); err != nil {
				t.Fatal(err)
			}
			got := fake.LastStreamed().ToolResults()
			if !strings.Contains(got["e1"], "edited "+path) || !strings.Contains(got["e1"], "+func main() { run() }") || !strings.Contains(got["e2"], "rejected") {
				t.Errorf("results: %q", got)
			}
			perms := a.Permissions()
			if len(perms) != 2 {
				t.Fatalf("%d permission requests", len(perms))
			}
			var p struct {
				ToolCall struct {
					Kind    string
					Content []struct {
						Type, Path       string
						OldText, NewText *string
					}
					Locations []struct{ Path string }
				}
			}
			json.Unmarshal(perms[0], &p)
			if p.ToolCall.Kind != "edit" || len(p.ToolCall.Content) != 1 || p.ToolCall.Content[0].Type != "diff" || p.ToolCall.Content[0].Path != path ||
				p.ToolCall.Content[0].OldText == nil || !strings.Contains(*p.ToolCall.Content[0].OldText, old) || len(p.ToolCall.Locations) != 1 {
				t.Errorf("the review: %s", perms[0])
			}
			want := strings.Replace(map[bool]string{true: unsaved, false: "package main\n\nfunc main() {}\n"}[viaClient], old, "func main() { run() }", 1)
			disk, _ := os.ReadFile(path)
			if viaClient {
				w := a.Writes()
				if len(w) != 1 || w[0].Path != path || w[0].Content != want || string(disk) != "package main\n\nfunc main() {}\n" {
					t.Errorf("writes %+v; disk %q", w, disk)
				}
			} else if string(disk) != want {
				t.Errorf("disk %q, want %q", disk, want)
			}
			if _, err := os.Stat(filepath.Join(cwd, "extra.go")); err == nil {
				t.Error("the rejected file was created")
			}
		})
	}
}

// TestReviewModesOverACP: session/new advertises the review modes;
// session/set_mode changes the session's (current_mode_update follows),
// kept with it: resume answers with it, and off offers no edit tools.
func TestReviewModesOverACP(t *testing.T) {
	t.Parallel()
	fake, dataDir, cwd := newFixture(t)
	a := startAgent(t, fake, dataDir, cwd, nil)
	var created struct {
		SessionID string
		Modes     struct {
			CurrentModeID  string `json:"currentModeId"`
			AvailableModes []struct{ ID, Name string }
		}
	}
	if err := a.Call("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}}, &created); err != nil {
		t.Fatal(err)
	}
	if created.Modes.CurrentModeID != "ask" || len(created.Modes.AvailableModes) != 3 || created.Modes.AvailableModes[2].ID != "off" {
		t.Fatalf("modes: %+v", created.Modes)
	}
	id := created.SessionID
	if err := a.Call("session/set_mode", map[string]any{"sessionId": id, "modeId": "off"}, nil); err != nil {
		t.Fatal(err)
	}
	a.WaitUpdate("current_mode_update", func(u acptest.Update) bool {
		return u.SessionID == id && u.Kind == "current_mode_update" && strings.Contains(string(u.Raw), `"currentModeId":"off"`)
	})
	fake.Enqueue(openaitest.Reply{Chunks: []string{"Chat only."}})
	if _, err := a.prompt(id, text("hello")); err != nil {
		t.Fatal(err)
	}
	for _, tool := range fake.LastStreamed().Parsed.Tools {
		if tool.Function.Name == "edit_file" || tool.Function.Name == "create_file" {
			t.Errorf("%s offered in the off mode", tool.Function.Name)
		}
	}
	var resumed struct {
		Modes struct {
			CurrentModeID string `json:"currentModeId"`
		}
	}
	if err := a.Call("session/resume", map[string]any{"sessionId": id, "cwd": cwd}, &resumed); err != nil || resumed.Modes.CurrentModeID != "off" {
		t.Errorf("resume: %+v %v", resumed, err)
	}
}

// modelOption is a session config option as the model tests read it.
type modelOption struct {
	ID, Category, Type string
	CurrentValue       string `json:"currentValue"`
	Options            []struct{ Value, Name string }
}

// TestModelConfigOption: the session's model is a config option of
// category "model" listing the provider's models; choosing one makes the
// session's turns use it, kept for resume.
func TestModelConfigOption(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t, openaitest.WithModels("test-model", "big-model"), openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Title"}}))
	dataDir, cwd := t.TempDir(), t.TempDir()
	a := startAgent(t, fake, dataDir, cwd, nil)
	var created struct {
		SessionID     string
		ConfigOptions []modelOption `json:"configOptions"`
	}
	if err := a.Call("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}}, &created); err != nil {
		t.Fatal(err)
	}
	if len(created.ConfigOptions) != 1 {
		t.Fatalf("configOptions: %+v", created.ConfigOptions)
	}
	o := created.ConfigOptions[0]
	if o.ID != "model" || o.Category != "model" || o.Type != "select" || o.CurrentValue != "test-model" || len(o.Options) != 2 || o.Options[1].Value != "big-model" {
		t.Errorf("the model option: %+v", o)
	}
	var set struct {
		ConfigOptions []modelOption `json:"configOptions"`
	}
	if err := a.Call("session/set_config_option", map[string]any{"sessionId": created.SessionID, "configId": "model", "value": "big-model"}, &set); err != nil {
		t.Fatal(err)
	}
	if len(set.ConfigOptions) != 1 || set.ConfigOptions[0].CurrentValue != "big-model" {
		t.Errorf("after set_config_option: %+v", set.ConfigOptions)
	}
	fake.Enqueue(openaitest.Reply{Chunks: []string{"From the big one."}})
	if _, err := a.prompt(created.SessionID, text("hello")); err != nil {
		t.Fatal(err)
	}
	if m := fake.LastStreamed().Parsed.Model; m != "big-model" {
		t.Errorf("the turn's model: %q", m)
	}
	var resumed struct {
		ConfigOptions []modelOption `json:"configOptions"`
	}
	if err := a.Call("session/resume", map[string]any{"sessionId": created.SessionID, "cwd": cwd}, &resumed); err != nil || len(resumed.ConfigOptions) != 1 || resumed.ConfigOptions[0].CurrentValue != "big-model" {
		t.Errorf("resume: %+v %v", resumed, err)
	}
	if err := a.Call("session/set_config_option", map[string]any{"sessionId": created.SessionID, "configId": "speed", "value": "fast"}, nil); rpcCode(t, err) != -32602 {
		t.Errorf("an unknown option: %v", err)
	}
}

// TestEditsSurviveTypingOverACP: the client's file changes while an edit
// waits for its permission. Changed elsewhere: the edit is made where its
// text now is and fs/write_text_file writes the text with both changes
// (before, the text the edit was computed against, the typing lost).
// Changed in the text the edit replaces: nothing is written, the model is
// told to read the file again and the user is told why.
func TestEditsSurviveTypingOverACP(t *testing.T) {
	t.Parallel()
	fake, dataDir, cwd := newFixture(t)
	path := filepath.Join(cwd, "main.go")
	before := "package main\n\nfunc a() int {\n\treturn 1\n}\n\nfunc b() int {\n\treturn 2\n}\n"
	os.WriteFile(path, []byte(before), 0o644)
	a := startAgent(t, fake, dataDir, cwd, map[string]bool{"readTextFile": true, "writeTextFile": true})
	a.SetFile(path, before)
	id := a.newSession()
	a.AnswerPermissions("accept", "accept")
	a.TypeBeforeAnswers(
		func(files map[string]string) { files[path] = "// typed above\n" + files[path] + "// typed below\n" },
		func(files map[string]string) { files[path] = strings.Replace(files[path], "return 2", "return 22", 1) },
	)
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{
			{ID: "e1", Name: "edit_file", Arguments: `{"path":"main.go","old_string":"\treturn 1\n","new_string":"\treturn 10\n"}`},
			{ID: "e2", Name: "edit_file", Arguments: `{"path":"main.go","old_string":"\treturn 2\n","new_string":"\treturn 20\n"}`},
		}},
		openaitest.Reply{Chunks: []string{"Edited."}},
	)
	if _, err := a.prompt(id, text("edit main")); err != nil {
		t.Fatal(err)
	}
	got := fake.LastStreamed().ToolResults()
	if !strings.Contains(got["e1"], "edited "+path) || !strings.Contains(got["e2"], "was not applied: the text it replaces was changed in the editor while the edit waited") ||
		!strings.Contains(got["e2"], "read it again") {
		t.Errorf("results: %q", got)
	}
	w := a.Writes()
	want := "// typed above\n" + strings.Replace(before, "return 1", "return 10", 1) + "// typed below\n"
	if len(w) != 1 || w[0].Content != want {
		t.Errorf("writes %+v, want one of\n%s", w, want)
	}
	if said := a.AgentText(id); !strings.Contains(said, "the model's edit of "+path+" was not applied: the text it replaces was changed") {
		t.Errorf("the user was not told why the edit was refused: %q", said)
	}
}

// TestModelConfigOptionWithoutAModel: a server and no model configured
// (no --model, CTXLS_MODEL empty): the selector lists the server's models
// under "Choose a model"; choosing one makes the session's turns use it.
func TestModelConfigOptionWithoutAModel(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t, openaitest.WithModels("test-model", "big-model"), openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Title"}}))
	dataDir, cwd := t.TempDir(), t.TempDir()
	c := acptest.Start(t, lsptest.BuildBinary(t), []string{"acp", "--data-dir", dataDir, "--base-url", fake.URL},
		[]string{"OPENAI_API_KEY=sk-test-not-real", "CTXLS_MODEL=", "OPENAI_BASE_URL="})
	if err := c.Call("initialize", map[string]any{"protocolVersion": 1}, nil); err != nil {
		t.Fatal(err)
	}
	a := &agent{Client: c, t: t, fake: fake, dataDir: dataDir, cwd: cwd}
	var created struct {
		SessionID     string
		ConfigOptions []modelOption `json:"configOptions"`
	}
	if err := a.Call("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}}, &created); err != nil {
		t.Fatal(err)
	}
	if len(created.ConfigOptions) != 1 {
		t.Fatalf("configOptions without a model: %+v", created.ConfigOptions)
	}
	o := created.ConfigOptions[0]
	if o.Category != "model" || o.CurrentValue != "" || len(o.Options) != 3 || o.Options[0].Value != "" || o.Options[0].Name != "Choose a model" ||
		o.Options[1].Value != "test-model" || o.Options[2].Value != "big-model" {
		t.Errorf("the model option without a model: %+v", o)
	}
	var set struct {
		ConfigOptions []modelOption `json:"configOptions"`
	}
	if err := a.Call("session/set_config_option", map[string]any{"sessionId": created.SessionID, "configId": "model", "value": "big-model"}, &set); err != nil {
		t.Fatal(err)
	}
	if len(set.ConfigOptions) != 1 || set.ConfigOptions[0].CurrentValue != "big-model" || len(set.ConfigOptions[0].Options) != 2 {
		t.Errorf("after choosing: %+v", set.ConfigOptions)
	}
	fake.Enqueue(openaitest.Reply{Chunks: []string{"From the big one."}})
	if _, err := a.prompt(created.SessionID, text("hello")); err != nil {
		t.Fatal(err)
	}
	if m := fake.LastStreamed().Parsed.Model; m != "big-model" {
		t.Errorf("the turn's model: %q", m)
	}
}
