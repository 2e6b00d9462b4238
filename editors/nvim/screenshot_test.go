package nvim_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/editors/screenshot"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// TestNeovimScreenshot runs Neovim in tmux, asks a question, and renders the
// screen to CTXLS_SCREENSHOT_DIR/nvim.png. It runs only when that
// variable is set: CTXLS_SCREENSHOT_DIR=$PWD/docs go test ./editors/nvim -run Screenshot
func TestNeovimScreenshot(t *testing.T) {
	dir := os.Getenv("CTXLS_SCREENSHOT_DIR")
	if dir == "" {
		t.Skip("set CTXLS_SCREENSHOT_DIR to take the screenshot")
	}
	for _, tool := range []string{"tmux", "nvim", screenshot.Chromium} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed for the screenshot", tool)
		}
	}
	bin := lsptest.BuildBinary(t)
	fake := openaitest.New(t)
	fake.Enqueue(openaitest.Reply{Delay: 40 * time.Millisecond, Chunks: []string{
		"`main` reads ", "the port from ", "`PORT` and ", "starts the server.\n\n",
		"It also registers ", "a **health check**:\n\n", "```go\n", "http.HandleFunc(\"/healthz\", ok)\n", "```\n\n",
		"It answers 200 ", "without touching the database.",
	}}, openaitest.Reply{Chunks: []string{"Server health check"}})
	work := t.TempDir()
	file := filepath.Join(work, "main.go")
	os.WriteFile(file, []byte("package main\n\nimport (\n\t\"net/http\"\n\t\"os\"\n)\n\nfunc main() {\n\thttp.HandleFunc(\"/healthz\", ok)\n\thttp.ListenAndServe(\":\"+os.Getenv(\"PORT\"), nil)\n}\n"), 0o644)
	rtp, _ := filepath.Abs(".")
	setup := `lua require("ctxls").setup({cmd={"` + bin + `","serve","--data-dir","` + t.TempDir() + `"}, provider={baseURL="` + fake.URL + `", model="test-model"}})`
	session := "ctxls-shot"
	exec.Command("tmux", "kill-session", "-t", session).Run()
	start := exec.Command("tmux", "new-session", "-d", "-s", session, "-x", "110", "-y", "28",
		"nvim", "--clean", "-c", "set rtp+="+rtp, "-c", "runtime plugin/ctxls.lua", "-c", "set number", "-c", setup, file)
	start.Env = append(os.Environ(), "OPENAI_API_KEY=", "TERM=xterm-256color")
	if out, err := start.CombinedOutput(); err != nil {
		t.Fatalf("tmux: %v %s", err, out)
	}
	defer exec.Command("tmux", "kill-session", "-t", session).Run()
	keys := func(k ...string) { exec.Command("tmux", append([]string{"send-keys", "-t", session}, k...)...).Run() }
	time.Sleep(1500 * time.Millisecond)
	keys(":CtxlsAdd", "Enter")
	time.Sleep(500 * time.Millisecond)
	keys(":CtxlsAsk What does main do now?", "Enter")
	time.Sleep(2500 * time.Millisecond)
	out, err := exec.Command("tmux", "capture-pane", "-p", "-t", session).Output()
	if err != nil {
		t.Fatal(err)
	}
	screen := string(out)
	if !strings.Contains(screen, "health check") {
		t.Fatalf("the answer is not on screen:\n%s", screen)
	}
	if err := screenshot.Terminal(strings.TrimRight(screen, "\n"), filepath.Join(dir, "nvim.png"), 1000, 520); err != nil {
		t.Fatal(err)
	}
}
