package cli_test

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

func TestChatAndDoctor(t *testing.T) {
	t.Parallel()
	// Title requests get the default reply, so the queue holds only the
	// turns' replies.
	fake := openaitest.New(t, openaitest.WithModels("test-model", "other"), openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Greeting"}}))
	dir := t.TempDir()
	env := []string{"CTXLS_DATA_DIR=" + dir, "OPENAI_BASE_URL=" + fake.URL, "CTXLS_MODEL=test-model", "OPENAI_API_KEY="}
	fake.Enqueue(openaitest.Reply{Chunks: []string{"Hello ", "from the model."}})
	out, errOut, code := run(t, env, "chat", "say hello")
	if code != 0 || out != "Hello from the model.\n" || !strings.Contains(errOut, "session ") {
		t.Errorf("chat: %d %q %q", code, out, errOut)
	}
	// Message from stdin.
	fake.Enqueue(openaitest.Reply{Chunks: []string{"piped"}})
	cmd := exec.Command(lsptest.BuildBinary(t), "chat")
	cmd.Env = append(cmd.Environ(), env...)
	cmd.Stdin = strings.NewReader("from stdin\n")
	b, err := cmd.Output()
	if err != nil || string(b) != "piped\n" {
		t.Errorf("stdin: %q %v", b, err)
	}
	out, _, code = run(t, env, "sessions", "list")
	if code != 0 || !strings.Contains(out, "say hello") && !strings.Contains(out, "Greeting") {
		t.Errorf("the CLI turn is in the store: %s", out)
	}
	out, _, code = run(t, env, "doctor")
	if code != 0 || !strings.Contains(out, "✓ model test-model is available") {
		t.Errorf("doctor: %d %s", code, out)
	}
	out, _, code = run(t, env, "doctor", "--model", "missing")
	if code != api.KindProviderFailed.Info().CLI || !strings.Contains(out, `model "missing" is not among them`) {
		t.Errorf("doctor, unknown model: %d %s", code, out)
	}
	out, _, code = run(t, []string{"CTXLS_DATA_DIR=" + dir, "OPENAI_BASE_URL=", "CTXLS_MODEL=", "OPENAI_API_KEY="}, "doctor", "--base-url", "http://127.0.0.1:1/v1", "--model", "m")
	if code != api.KindProviderFailed.Info().CLI || !strings.Contains(out, "✗ reaching") {
		t.Errorf("doctor, unreachable: %d %s", code, out)
	}
	_, errOut, code = run(t, []string{"CTXLS_DATA_DIR=" + dir, "OPENAI_BASE_URL=" + fake.URL, "CTXLS_MODEL=", "OPENAI_API_KEY="}, "chat", "hi")
	if code != api.KindNoProvider.Info().CLI || !strings.Contains(errOut, "no model is configured") {
		t.Errorf("chat without a model: %d %q", code, errOut)
	}
	// Doctor then says so, and what the server offers to pick from.
	out, _, code = run(t, []string{"CTXLS_DATA_DIR=" + dir, "OPENAI_BASE_URL=" + fake.URL, "CTXLS_MODEL=", "OPENAI_API_KEY="}, "doctor")
	if code != api.KindNoProvider.Info().CLI || !strings.Contains(out, "✗ model: none configured") || !strings.Contains(out, "the server offers: test-model, other") {
		t.Errorf("doctor without a model: %d %s", code, out)
	}
}

func TestChatCtrlCCancels(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	fake.Enqueue(openaitest.Reply{Chunks: []string{"partial ", "never"}, Fault: openaitest.FaultStall, FaultAfter: 1})
	dir := t.TempDir()
	cmd := exec.Command(lsptest.BuildBinary(t), "chat", "long one")
	cmd.Env = append(cmd.Environ(), "CTXLS_DATA_DIR="+dir, "OPENAI_BASE_URL="+fake.URL, "CTXLS_MODEL=test-model", "OPENAI_API_KEY=")
	stdout, _ := cmd.StdoutPipe()
	var errb strings.Builder
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 8)
	if n, _ := io.ReadFull(stdout, buf); string(buf[:n]) != "partial " {
		t.Fatalf("first delta %q", buf[:n])
	}
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != api.KindCancelled.Info().CLI || !strings.Contains(errb.String(), "cancelled; the partial answer is kept") {
		t.Errorf("exit %v, stderr %q", err, errb.String())
	}
	fake.WaitCancelled(0, 2*time.Second)
	out, _, _ := run(t, []string{"CTXLS_DATA_DIR=" + dir}, "sessions", "list", "--json")
	if !strings.Contains(out, `"messageCount": 2`) {
		t.Errorf("the turn is stored: %s", out)
	}
	var list api.SessionListResult
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list.Sessions) != 1 {
		t.Fatalf("sessions list --json: %v %s", err, out)
	}
	// Stopped by the user: "cancelled", not "interrupted" as after a crash.
	out, _, _ = run(t, []string{"CTXLS_DATA_DIR=" + dir}, "sessions", "show", list.Sessions[0].ID)
	if !strings.Contains(out, "(cancelled)]\npartial \n") || strings.Contains(out, "interrupted") {
		t.Errorf("sessions show after Ctrl-C:\n%s", out)
	}
}
