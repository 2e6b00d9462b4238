package e2e_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/internal/proctest"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// commandDaemon is the built binary with the provider's keys in its
// environment (its configured key variable MYLLM_API_KEY among them),
// asking in the chat (questions) or with window/showMessageRequest.
func commandDaemon(t *testing.T, fake *openaitest.Server, questions bool, answers *permissionAnswers) (*lsptest.Server, string) {
	t.Helper()
	root, rootURI := workspace(t)
	s := lsptest.Binary(t, []string{"OPENAI_API_KEY=sk-test-not-real", "ANTHROPIC_API_KEY=sk-ant-not-real", "CTXLS_MCP_TOKEN=mcp-token-not-real", "MYLLM_API_KEY=myllm-not-real"},
		"serve", "--data-dir", t.TempDir())
	s.OnServerRequest(answers.handle)
	opts := map[string]any{
		"provider":                     map[string]any{"baseURL": fake.URL, "model": "test-model", "apiKeyEnv": "MYLLM_API_KEY"},
		"toolPermissionTimeoutSeconds": 30,
	}
	if questions {
		opts["questions"] = true
	}
	s.Initialize(lsptest.InitOptions{RootURI: rootURI, WorkDoneProgress: true, InitOptions: opts})
	return s, root
}

// toolCalls are the ctxls/toolCall notifications of call id so far.
func toolCalls(s *lsptest.Server, id string) []api.ToolCallParams {
	var out []api.ToolCallParams
	for _, m := range s.Notifications(api.ToolCall) {
		var p api.ToolCallParams
		json.Unmarshal(m.Params, &p)
		if p.ID == id {
			out = append(out, p)
		}
	}
	return out
}

// TestRunCommand: the model's run_command over LSP with the built binary,
// asked with ctxls/question naming the command exactly: allowed once (the
// model gets the output, stdout and stderr interleaved, and the exit
// status; the environment has none of the provider's keys), its output
// streamed as the call's progress, denied (the model told, nothing run),
// always (the same command line not asked again, a different one asked),
// and a turn cancelled mid-command (its processes gone within a second).
func TestRunCommand(t *testing.T) {
	parallel(t, waitTests)
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Title"}}))
	answers := &permissionAnswers{}
	s, root := commandDaemon(t, fake, true, answers)
	realRoot, _ := filepath.EvalSymlinks(root)
	asked := 0
	// ask waits for the next question, checks it names the command, and
	// answers it.
	ask := func(command, action string) api.QuestionParams {
		t.Helper()
		asked++
		q := question(t, s, asked)
		if want := "ctxls: the model wants to run the command " + command + " in " + realRoot + " (killed after 2m0s). Allow it?"; q.Kind != api.QuestionPermission || q.Message != want {
			t.Errorf("question %d: %q, want %q", asked, q.Message, want)
		}
		s.MustCommand(api.QuestionAnswer, map[string]any{"id": q.ID, "action": action}, nil)
		return q
	}
	chat := func(message string, calls ...openaitest.ToolCall) <-chan *lsptest.Message {
		fake.Enqueue(openaitest.Reply{ToolCalls: calls}, openaitest.Reply{Chunks: []string{"Done."}})
		return s.Async("workspace/executeCommand", map[string]any{"command": api.Chat, "arguments": []any{map[string]any{"message": message}}})
	}
	args := func(command string) string {
		b, _ := json.Marshal(map[string]any{"command": command})
		return string(b)
	}
	ended := func(done <-chan *lsptest.Message) map[string]string {
		t.Helper()
		if m := <-done; m == nil || m.Error != nil {
			t.Fatalf("the turn: %+v", m)
		}
		return fake.LastStreamed().ToolResults()
	}

	// 1. Allowed once: output, exit status, no keys; progress while it runs
	// (the output before the sleep), none after the call's end.
	first := `echo hello; echo oops >&2; sleep 1; env | grep -c -E 'OPENAI_API_KEY|ANTHROPIC_API_KEY|CTXLS_MCP_TOKEN|MYLLM_API_KEY|not-real'; exit 3`
	done := chat("run it", openaitest.ToolCall{ID: "r1", Name: "run_command", Arguments: args(first)})
	q := ask(first, "allow")
	res := ended(done)
	if want := "hello\noops\n0\n[exit status 3]"; res["r1"] != want {
		t.Errorf("r1: %q, want %q", res["r1"], want)
	}
	calls := toolCalls(s, q.ToolCallID)
	var progress []string
	for _, c := range calls {
		if c.Progress != "" {
			progress = append(progress, string(c.Status)+" "+c.Progress)
		}
	}
	if len(calls) < 3 || calls[0].Status != api.ToolPending || calls[len(calls)-1].Status != api.ToolFailed ||
		!strings.Contains(calls[len(calls)-1].Output, "[exit status 3]") || !slices.Contains(progress, "running hello\noops\n") {
		t.Errorf("ctxls/toolCall of r1: %+v; progress %q", calls, progress)
	}
	s.WaitFor("the model's title", func(m *lsptest.Message) bool {
		return m.Method == api.SessionUpdated && strings.Contains(string(m.Params), `"titleSource":"model"`)
	})

	// 2. Denied: the model is told, nothing runs.
	done = chat("touch it", openaitest.ToolCall{ID: "r2", Name: "run_command", Arguments: args("touch denied")})
	ask("touch denied", "deny")
	res = ended(done)
	if _, err := os.Stat(filepath.Join(root, "denied")); err == nil || !strings.HasPrefix(res["r2"], "The user declined to run this command; it did not run.") {
		t.Errorf("r2: %q (the file: %v)", res["r2"], err)
	}

	// 3. Always: this exact command line is not asked about again in the
	// session; another is.
	done = chat("again", openaitest.ToolCall{ID: "r3", Name: "run_command", Arguments: args("echo A")})
	ask("echo A", "always")
	if res = ended(done); res["r3"] != "A\n[exit status 0]" {
		t.Errorf("r3: %q", res["r3"])
	}
	done = chat("twice", openaitest.ToolCall{ID: "r4", Name: "run_command", Arguments: args("echo A")},
		openaitest.ToolCall{ID: "r5", Name: "run_command", Arguments: args("echo A ")})
	ask("echo A ", "allow") // the first call was not asked: this is the next question
	if res = ended(done); res["r4"] != "A\n[exit status 0]" || res["r5"] != "A\n[exit status 0]" {
		t.Errorf("r4, r5: %q", res)
	}
	if n := len(s.Notifications(api.Question)); n != asked {
		t.Errorf("%d questions, want %d", n, asked)
	}

	// 4. Cancelled mid-command: its processes are gone within a second.
	pidFile := filepath.Join(t.TempDir(), "pid")
	slow := `sleep 300 & echo $! > ` + pidFile + `; sleep 301`
	fake.Enqueue(openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "r6", Name: "run_command", Arguments: args(slow)}}},
		openaitest.Reply{Chunks: []string{"Never."}})
	wait := s.Send(77, "workspace/executeCommand", map[string]any{"command": api.Chat, "arguments": []any{map[string]any{"message": "slow"}}})
	ask(slow, "allow")
	pid := proctest.PidIn(t, pidFile, 20*time.Second)
	s.Notify("$/cancelRequest", map[string]any{"id": 77})
	if !proctest.Gone(pid, time.Second) {
		t.Errorf("the command's grandchild %d outlived the cancel by a second", pid)
	}
	if m := wait(); m.Error == nil || m.Error.Code != -32800 {
		t.Errorf("the cancelled turn: %+v", m)
	}
	if q := answers.asked(); len(q) != 0 {
		t.Errorf("asked with window/showMessageRequest too: %q", q)
	}
}

// TestRunCommandDaemonKilled: a client without questions is asked with
// window/showMessageRequest naming the command; when the daemon is killed
// with SIGKILL mid-command, the command's processes (its sh and a
// grandchild) die with it.
func TestRunCommandDaemonKilled(t *testing.T) {
	parallel(t, waitTests)
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Title"}}))
	answers := &permissionAnswers{answers: []string{"Allow once"}}
	s, root := commandDaemon(t, fake, false, answers)
	realRoot, _ := filepath.EvalSymlinks(root)
	dir := t.TempDir()
	grandchild, sh := filepath.Join(dir, "grandchild"), filepath.Join(dir, "sh")
	line := `sleep 300 & echo $! > ` + grandchild + `; echo $$ > ` + sh + `; sleep 301; echo never`
	args, _ := json.Marshal(map[string]any{"command": line})
	fake.Enqueue(openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "k1", Name: "run_command", Arguments: string(args)}}},
		openaitest.Reply{Chunks: []string{"Never."}})
	s.Async("workspace/executeCommand", map[string]any{"command": api.Chat, "arguments": []any{map[string]any{"message": "run"}}})
	gpid, spid := proctest.PidIn(t, grandchild, 20*time.Second), proctest.PidIn(t, sh, 20*time.Second)
	if q := answers.asked(); len(q) != 1 || q[0] != "ctxls: the model wants to run the command "+line+" in "+realRoot+" (killed after 2m0s). Allow it?" {
		t.Errorf("asked: %q", q)
	}
	s.Kill()
	for what, pid := range map[string]int{"sh": spid, "grandchild": gpid} {
		if !proctest.Gone(pid, 2*time.Second) {
			t.Errorf("the command's %s (%d) outlived the daemon", what, pid)
		}
	}
}
