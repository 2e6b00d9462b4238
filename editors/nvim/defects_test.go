package nvim_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// phaseRunner runs test/defects.lua phases in headless Neovim against one
// data directory and the fake provider.
type phaseRunner struct {
	t       *testing.T
	nvim    string
	env     []string
	home    string
	logFile string
}

func newPhaseRunner(t *testing.T, nvim, baseURL string) *phaseRunner {
	work := t.TempDir()
	file := filepath.Join(work, "main.go")
	os.WriteFile(file, []byte("package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n"), 0o644)
	r := &phaseRunner{t: t, nvim: nvim, home: t.TempDir()}
	r.logFile = filepath.Join(t.TempDir(), "ctxls.log")
	r.env = append(os.Environ(), "CTXLS_BIN="+lsptest.BuildBinary(t), "CTXLS_DATA_DIR="+t.TempDir(), "CTXLS_TEST_FILE="+file,
		"OPENAI_BASE_URL="+baseURL, "OPENAI_API_KEY=", "CTXLS_MODEL=", "HOME="+r.home, "XDG_CACHE_HOME="+filepath.Join(r.home, ".cache"), "XDG_STATE_HOME="+filepath.Join(r.home, ".local", "state"), "CTXLS_LOG_FILE="+r.logFile)
	return r
}

func (r *phaseRunner) run(phase string) {
	r.t.Helper()
	runNvim(r.t, r.nvim, "", "defects.lua", append(r.env, "CTXLS_TEST_PHASE="+phase), 60*time.Second, phase)
}

// TestNeovimDefects: each phase is a defect seen in Neovim 0.7.2, driven as
// a person uses the plugin (see test/defects.lua).
func TestNeovimDefects(t *testing.T) {
	t.Parallel()
	eachNeovim(t, testNeovimDefects)
}

func testNeovimDefects(t *testing.T, nvim string) {
	// Titles are asked in the background after a session's first answer,
	// maybe during the next phase: they never take a phase's reply.
	title := openaitest.Reply{Chunks: []string{"Model title"}}
	fake := openaitest.New(t, openaitest.WithDefault(title), openaitest.WithTitles(title))
	r := newPhaseRunner(t, nvim, fake.URL)

	t.Run("cancel then ask again", func(t *testing.T) {
		fake.Enqueue(openaitest.Reply{Chunks: []string{"partial ", "never"}, Fault: openaitest.FaultStall, FaultAfter: 1},
			openaitest.Reply{Chunks: []string{"second answer"}})
		r.t = t
		r.run("cancel")
		// The daemon's logs go to its log file, not to Neovim's LSP log as [ERROR].
		if b, err := os.ReadFile(r.logFile); err != nil || !strings.Contains(string(b), "level=INFO") {
			t.Errorf("the daemon's log file: %v\n%s", err, b)
		}
		lspLog := filepath.Join(r.home, ".cache", "nvim", "lsp.log")
		if b, err := os.ReadFile(lspLog); err == nil && strings.Contains(string(b), "level=INFO") {
			t.Errorf("the daemon's INFO logs are in Neovim's LSP log:\n%s", b)
		}
	})
	t.Run("prompted ask streams", func(t *testing.T) {
		fake.Enqueue(openaitest.Reply{Delay: 300 * time.Millisecond, Chunks: []string{"one ", "two ", "three ", "four ", "five"}})
		r.t = t
		r.run("stream")
	})
	t.Run("notices and add from the chat", func(t *testing.T) {
		fake.Enqueue(openaitest.Reply{Chunks: []string{"hi there"}})
		r.t = t
		r.run("notices")
	})
	t.Run("a buffer per session", func(t *testing.T) {
		fake.Enqueue(openaitest.Reply{Chunks: []string{"answer A"}})
		r.t = t
		r.run("sessions")
	})
	t.Run("search resumes with history, preview, delete asks", func(t *testing.T) {
		r.t = t
		r.run("resume")
	})
	t.Run("view", func(t *testing.T) {
		fake.Enqueue(openaitest.Reply{Chunks: []string{"hi"}})
		r.t = t
		r.run("view")
	})
	t.Run("commands right after start-up", func(t *testing.T) {
		fake.Enqueue(openaitest.Reply{Chunks: []string{"early ", "answer"}})
		early := newPhaseRunner(t, nvim, fake.URL)
		early.run("early")
	})
	t.Run("asked with no file open", func(t *testing.T) {
		fake.Enqueue(openaitest.Reply{Chunks: []string{"no file ", "needed"}})
		nofile := newPhaseRunner(t, nvim, fake.URL)
		nofile.run("nofile")
	})
	t.Run("no provider", func(t *testing.T) {
		nokey := newPhaseRunner(t, nvim, "")
		nokey.run("nokey")
	})
	t.Run("an MCP configuration's warning once", func(t *testing.T) {
		own := openaitest.New(t, openaitest.WithDefault(title), openaitest.WithTitles(title))
		own.Enqueue(openaitest.Reply{Chunks: []string{"first answer"}}, openaitest.Reply{Chunks: []string{"second answer"}})
		newPhaseRunner(t, nvim, own.URL).run("mcpwarn")
	})
	t.Run("not installed", func(t *testing.T) {
		newPhaseRunner(t, nvim, "").run("nomissing")
	})
	t.Run("in Go's install folder", func(t *testing.T) {
		fake.Enqueue(openaitest.Reply{Chunks: []string{"found in ", "go/bin"}})
		gobin := newPhaseRunner(t, nvim, fake.URL)
		dir := filepath.Join(gobin.home, "go", "bin")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		var bin string
		for _, e := range gobin.env {
			if v, ok := strings.CutPrefix(e, "CTXLS_BIN="); ok {
				bin = v
			}
		}
		if err := os.Symlink(bin, filepath.Join(dir, "ctxls-in-gobin")); err != nil {
			t.Fatal(err)
		}
		gobin.env = append(gobin.env, "GOBIN=", "GOPATH=")
		gobin.run("gobin")
	})
	t.Run("the file in front of you goes with the question", func(t *testing.T) {
		own := openaitest.New(t, openaitest.WithDefault(title), openaitest.WithTitles(title))
		own.Enqueue(openaitest.Reply{Chunks: []string{"quick ", "answer"}, Delay: 100 * time.Millisecond},
			openaitest.Reply{Chunks: []string{"first answer"}}, openaitest.Reply{Chunks: []string{"second answer"}},
			openaitest.Reply{Chunks: []string{"third answer"}}, openaitest.Reply{Chunks: []string{"fourth answer"}})
		af := newPhaseRunner(t, nvim, own.URL)
		af.run("activefile")
		asked := map[string]openaitest.Request{}
		for _, r := range own.Streamed() {
			asked[r.Question()] = r
		}
		if _, ok := asked["quick two"]; ok {
			t.Error("the second quick ask reached the model")
		}
		if c := asked["what is this?"].TurnContext(); !strings.Contains(c, "// UNSAVED ACTIVE LINE") || !strings.Contains(c, "main.go (unsaved editor text)") {
			t.Errorf("the current file's unsaved text did not go with the question:\n%s", c)
		}
		if c := asked["and these lines?"].TurnContext(); !strings.Contains(c, "(the user selected lines 3–4)") || !strings.Contains(c, "func main() {") {
			t.Errorf("the range did not go with the question:\n%s", c)
		}
		for _, q := range []string{"without the file", "no file by default"} {
			if c := asked[q].TurnContext(); strings.Contains(c, "## Relevant Files") {
				t.Errorf("%q: a file went with the question:\n%s", q, c)
			}
		}
	})
}

// TestHelpAfterInstall follows the README's install with a fresh copy of
// the plugin (no doc/tags): :help ctxls works right after setup().
func TestHelpAfterInstall(t *testing.T) {
	t.Parallel()
	eachNeovim(t, testHelpAfterInstall)
}

func testHelpAfterInstall(t *testing.T, nvim string) {
	plugin := filepath.Join(t.TempDir(), "ctxls.nvim")
	if out, err := exec.Command("cp", "-r", ".", plugin).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	os.Remove(filepath.Join(plugin, "doc", "tags"))
	// Modelines on, as for anyone but root (who runs the tests here):
	// Neovim 0.10 takes a plugin's help file's filetype from its modeline.
	argv := nvimArgs(t, nvim, "--headless", "--clean", "--cmd", "set modeline", "-c", "set rtp+="+plugin,
		"-c", `lua require("ctxls").setup({})`,
		"-c", "try | help ctxls | catch | cquit 2 | endtry",
		"-c", `if &buftype !=# 'help' || &filetype !=# 'help' || expand('%:t') !=# 'ctxls.txt' | cquit 3 | endif`,
		"-c", "help ctxls-statusline", "-c", "qall!")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf(":help ctxls after the README's install: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(plugin, "doc", "tags")); err != nil {
		t.Errorf("setup() did not generate doc/tags: %v", err)
	}
}
