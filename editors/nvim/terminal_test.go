package nvim_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/editors/screenshot"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// TestNeovimNoHitEnter runs Neovim in a real terminal (tmux) with a provider
// that is not running: the error of a question, and of :CtxlsModel's list,
// wider than the command line, is cut to fit it instead of stopping the
// user on "Press ENTER"; the chat holds the turn's error whole.
func TestNeovimNoHitEnter(t *testing.T) {
	t.Parallel()
	needTmux(t)
	eachNeovim(t, testNeovimNoHitEnter)
}

func testNeovimNoHitEnter(t *testing.T, nvim string) {
	bin := lsptest.BuildBinary(t)
	// A port nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + l.Addr().String() + "/v1"
	l.Close()
	work := t.TempDir()
	file := filepath.Join(work, "main.go")
	os.WriteFile(file, []byte("package main\n\nfunc main() {}\n"), 0o644)
	rtp, _ := filepath.Abs(".")
	setup := filepath.Join(t.TempDir(), "setup.lua")
	os.WriteFile(setup, []byte(fmt.Sprintf(`require("ctxls").setup({
  cmd = { %q, "serve", "--data-dir", %q },
  provider = { baseURL = %q, model = "test-model" },
  log_file = false,
})
`, bin, t.TempDir(), down)), 0o644)
	const cols = 90
	session := tmuxName(t, "ctxls-nvim-hitenter")
	term := startTmux(t, session, cols, 24, work,
		[]string{"OPENAI_API_KEY=", "TERM=xterm-256color", "HOME=" + t.TempDir()},
		nvimArgs(t, nvim, "--clean", "-c", "set rtp+="+rtp, "-c", "runtime plugin/ctxls.lua", "-c", "luafile "+setup, file)...)
	term.WaitFor("Neovim", func(s string) bool { return strings.Contains(s, "main.go") })
	quiet := func(what string) {
		t.Helper()
		time.Sleep(500 * time.Millisecond) // a second message would come by now
		s := term.Screen(false)
		last := screenshot.LastLine(s)
		if strings.Contains(s, "Press ENTER") || !strings.HasPrefix(last, "ctxls: ") || !strings.HasSuffix(last, "…") || len([]rune(last)) > cols {
			t.Fatalf("%s: the screen:\n%s", what, s)
		}
	}
	term.Keys(":CtxlsAsk hello?", "Enter")
	term.WaitFor("the provider's error", func(s string) bool {
		return strings.Contains(s, "ctxls: could not reach the provider") || strings.Contains(s, "Press ENTER")
	})
	quiet("the question's error")
	// The chat has it whole (its window wraps it).
	s := term.WaitFor("the error in the chat", func(s string) bool { return strings.Contains(s, "error: could not reach the provider at") })
	if !strings.Contains(strings.Join(strings.Fields(s), " "), "connection refused") {
		t.Errorf("the chat lacks the whole error:\n%s", s)
	}
	// :CtxlsModel cannot list the provider's models: the prompt to type
	// one says so, with no Press ENTER before it.
	term.Keys(":CtxlsModel", "Enter")
	term.WaitFor("the prompt", func(s string) bool {
		return strings.Contains(s, "Press ENTER") || screenshot.LastLine(s) == "Model (the provider listed none):"
	})
	time.Sleep(300 * time.Millisecond)
	if s := term.Screen(false); strings.Contains(s, "Press ENTER") || screenshot.LastLine(s) != "Model (the provider listed none):" {
		t.Fatalf("the model's prompt: the screen:\n%s", s)
	}
	term.Keys("other-model", "Enter")
	// Then whether it is for this session or new ones too (1: this one).
	term.WaitFor("the second question", func(s string) bool { return strings.Contains(s, "Use other-model for") })
	term.Keys("1", "Enter")
	term.WaitFor("the model typed", func(s string) bool { return strings.Contains(s, "model: other-model") })
	quitTmux(t, term)
}

// TestNeovimNoProviderNoHitEnter: asked with no provider configured in a
// short terminal (10 rows, 60 columns, 'cmdheight' 1), Neovim says so in one
// message, cut to fit, and waits at no Press ENTER; :messages holds it once
// (the daemon's own message of it is not shown beside the plugin's).
func TestNeovimNoProviderNoHitEnter(t *testing.T) {
	t.Parallel()
	needTmux(t)
	eachNeovim(t, testNeovimNoProviderNoHitEnter)
}

func testNeovimNoProviderNoHitEnter(t *testing.T, nvim string) {
	bin := lsptest.BuildBinary(t)
	work := t.TempDir()
	file := filepath.Join(work, "main.go")
	os.WriteFile(file, []byte("package main\n\nfunc main() {}\n"), 0o644)
	rtp, _ := filepath.Abs(".")
	setup := filepath.Join(t.TempDir(), "setup.lua")
	os.WriteFile(setup, []byte(fmt.Sprintf(`require("ctxls").setup({ cmd = { %q, "serve", "--data-dir", %q }, log_file = false })
`, bin, t.TempDir())), 0o644)
	term := startTmux(t, tmuxName(t, "ctxls-nvim-noprovider"), 60, 10, work,
		[]string{"OPENAI_API_KEY=", "OPENAI_BASE_URL=", "ANTHROPIC_API_KEY=", "CTXLS_MODEL=", "TERM=xterm-256color", "HOME=" + t.TempDir()},
		nvimArgs(t, nvim, "--clean", "-c", "set rtp+="+rtp, "-c", "set cmdheight=1", "-c", "runtime plugin/ctxls.lua", "-c", "luafile "+setup, file)...)
	term.WaitFor("Neovim", func(s string) bool { return strings.Contains(s, "main.go") })
	term.Keys(":CtxlsAsk hello?", "Enter")
	term.WaitFor("the notice", func(s string) bool {
		return strings.Contains(s, "Press ENTER") || strings.HasPrefix(screenshot.LastLine(s), "ctxls: no model provider yet")
	})
	time.Sleep(500 * time.Millisecond) // a second message would come by now
	if s := term.Screen(false); strings.Contains(s, "Press ENTER") || !strings.HasPrefix(screenshot.LastLine(s), "ctxls: no model provider yet: the chat says") ||
		len([]rune(screenshot.LastLine(s))) > 60 {
		t.Fatalf("the screen:\n%s", s)
	}
	term.Keys(":messages", "Enter")
	time.Sleep(300 * time.Millisecond)
	if s := term.Screen(false); strings.Contains(s, "Press ENTER") || strings.Count(s, "no model provider") != 1 {
		t.Fatalf(":messages: the screen:\n%s", s)
	}
	quitTmux(t, term)
}

// TestNeovimNotInstalledTerminal: Neovim opened on a file in a real
// terminal (tmux) with ctxls nowhere says so in one line, without "Error
// detected while processing BufReadPost" and Press ENTER at start-up.
func TestNeovimNotInstalledTerminal(t *testing.T) {
	t.Parallel()
	needTmux(t)
	eachNeovim(t, testNeovimNotInstalledTerminal)
}

func testNeovimNotInstalledTerminal(t *testing.T, nvim string) {
	work := t.TempDir()
	file := filepath.Join(work, "main.go")
	os.WriteFile(file, []byte("package main\n"), 0o644)
	rtp, _ := filepath.Abs(".")
	session := tmuxName(t, "ctxls-nvim-missing")
	term := startTmux(t, session, 130, 20, work,
		[]string{"TERM=xterm-256color", "HOME=" + t.TempDir(), "GOBIN=", "GOPATH="},
		nvimArgs(t, nvim, "--clean", "-n", "-c", "set rtp+="+rtp, "-c", "runtime plugin/ctxls.lua",
			"-c", `lua require("ctxls").setup({ cmd = { "ctxls-not-installed-here", "serve" }, log_file = false })`, file)...)
	term.WaitFor("the notice", func(s string) bool {
		return strings.Contains(s, "Press ENTER") || strings.HasPrefix(screenshot.LastLine(s), "ctxls: ctxls is not installed (:checkhealth ctxls)")
	})
	time.Sleep(300 * time.Millisecond)
	if s := term.Screen(false); strings.Contains(s, "Press ENTER") || strings.Contains(s, "Error detected") ||
		!strings.HasPrefix(screenshot.LastLine(s), "ctxls: ctxls is not installed (:checkhealth ctxls): ctxls-not-installed-here is neither on $PATH nor in ~/go/bin") {
		t.Fatalf("the screen:\n%s", s)
	}
	quitTmux(t, term)
}

// needTmux skips the test when tmux is not installed.
func needTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
}
