// Package emacs_test runs ctxls.el (batch mode) in every installed Emacs,
// Debian's 28 and the newer ones editors/install-newer.sh unpacks (each
// test a subtest per version), against the built ctxls binary and the
// in-repo OpenAI-compatible test server, and the documented Vim + ALE
// recipe in Debian's Vim. editors/emacs/ci-install.sh installs the editors
// and the packages the tests load.
package emacs_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/internal/editortest"
	"github.com/ctxls/ctxls/internal/pgtest"
	"github.com/ctxls/ctxls/internal/testmain"
	"github.com/ctxls/ctxls/internal/testmcp"
	"github.com/ctxls/ctxls/lsp/lsptest"
	"github.com/ctxls/ctxls/session/backend"
)

// TestMain doubles as a fake language server (standing in for gopls or
// pyright next to ctxls) when CTXLS_FAKE_LSP is set. The tests, each with
// its own workspace, run up to 4 at once: they wait on Emacs and Vim.
func TestMain(m *testing.M) {
	if os.Getenv("CTXLS_FAKE_LSP") != "" {
		fakeLSP(os.Stdin, os.Stdout)
		os.Exit(0)
	}
	code := testmain.Run(m, 4)
	elnCaches.Range(func(_, c any) bool {
		os.RemoveAll(c.(*elnCache).dir)
		return true
	})
	os.Exit(code)
}

// emacsVersion is one installed Emacs the tests run in
// (editortest.Editors: Debian's on PATH, and the newer ones
// editors/install-newer.sh put in its cache), with Elpa, the folder of
// elpa packages (lsp-mode, markdown-mode, use-package...) it activates:
// Debian's for the one on PATH; for a newer one the same packages
// byte-compiled by it, which ci-install.sh puts in its cache folder
// (Emacs 30 cannot run all that Emacs 28 compiled).
type emacsVersion struct {
	editortest.Editor
	Elpa string
}

// tmuxName is the version in a tmux session's name (tmux reads a dot in
// a target as the window's).
func (e emacsVersion) tmuxName() string { return strings.ReplaceAll(e.Name, ".", "_") }

// debianElpa is where Debian's elpa-* packages are, compiled for its Emacs.
const debianElpa = "/usr/share/emacs/site-lisp/elpa"

// eachEmacs runs test in every installed Emacs, each in a parallel subtest
// named by its version ("path" for Debian's on PATH, "30.1").
func eachEmacs(t *testing.T, test func(t *testing.T, emacs emacsVersion)) {
	t.Helper()
	for _, e := range editortest.Editors(t, "emacs") {
		v := emacsVersion{Editor: e, Elpa: debianElpa}
		if e.Name != "path" {
			v.Elpa = filepath.Join(filepath.Dir(filepath.Dir(e.Path)), "elpa")
		}
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			test(t, v)
		})
	}
}

// editor finds an editor binary (Vim); with CI set a missing one fails
// the test.
func editor(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed: .ci/run must call editors/emacs/ci-install.sh", name)
		}
		t.Skipf("%s is not installed (editors/emacs/ci-install.sh installs it)", name)
	}
	return path
}

// workspace makes a git-like project folder whose path has a space and a
// non-ASCII letter, so file URIs must be percent-encoded right.
func workspace(t *testing.T) string {
	t.Helper()
	work := filepath.Join(t.TempDir(), "wört space")
	for name, text := range map[string]string{
		".git/HEAD": "ref: refs/heads/main\n",
		"main.go":   "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"héllo\")\n}\n",
		"sync.txt":  "first line\n// héllo wörld — ünïcödé 😀 line\nthird line with tabs\tand spaces\n\nlast line\n",
		"tool.py":   "def greet(name):\n    return 'hi ' + name\n",
	} {
		p := filepath.Join(work, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return work
}

// readLisp reads the Lisp files so that go test's cache sees them change
// (Emacs reads them, not the test process).
func readLisp(t *testing.T) {
	t.Helper()
	files, _ := filepath.Glob("*.el")
	for _, f := range append(files, "test/ctxls-test.el") {
		if _, err := os.ReadFile(f); err != nil {
			t.Fatal(err)
		}
	}
}

// elnCaches holds, by version name, the folder each Emacs's tests share
// for the trampolines to native code that Emacs (Debian builds 28 and 30
// with native compilation) compiles for the primitives ctxls-test.el
// advises: compiled anew in each test's fresh HOME, they were a large share
// of what the suite spent. Filled before the first test of that Emacs.
var elnCaches sync.Map

type elnCache struct {
	once sync.Once
	dir  string // the trampolines
	lisp string // ctxls's Lisp and test/ctxls-test.el, byte-compiled
	err  error
}

// elnCache is emacs's trampoline folder, filled on first use by loading
// test/ctxls-test.el once, and the folder of ctxls's Lisp files and the
// test file byte-compiled by that Emacs (as a package manager installs
// them, and a fifth faster to load: 0.36 against 0.59 CPU-seconds a
// start, for the hundred Emacs the suite starts).
func (emacs emacsVersion) elnCache(t *testing.T) (eln, lisp string) {
	t.Helper()
	v, _ := elnCaches.LoadOrStore(emacs.Name, &elnCache{})
	c := v.(*elnCache)
	c.once.Do(func() {
		if c.dir, c.err = os.MkdirTemp("", "ctxls-eln-"); c.err != nil {
			return
		}
		here, _ := filepath.Abs(".")
		env := append(os.Environ(), "HOME="+c.dir, "CTXLS_ELN_CACHE="+c.dir, "CTXLS_ELPA="+emacs.Elpa)
		c.lisp = filepath.Join(c.dir, "lisp")
		if c.err = os.Mkdir(c.lisp, 0o755); c.err != nil {
			return
		}
		sources, _ := filepath.Glob(filepath.Join(here, "*.el"))
		sources = append(sources, filepath.Join(here, "test", "ctxls-test.el"))
		var copies []string
		for _, src := range sources {
			data, err := os.ReadFile(src)
			if err != nil {
				c.err = err
				return
			}
			dst := filepath.Join(c.lisp, filepath.Base(src))
			if c.err = os.WriteFile(dst, data, 0o644); c.err != nil {
				return
			}
			copies = append(copies, dst)
		}
		compile := exec.Command(emacs.Path, append([]string{"-Q", "--batch", "-L", c.lisp, "-f", "batch-byte-compile"}, copies...)...)
		compile.Env = env
		if out, err := compile.CombinedOutput(); err != nil {
			c.err = fmt.Errorf("%s: byte-compiling ctxls's Lisp: %v\n%s", emacs.Name, err, out)
			return
		}
		cmd := exec.Command(emacs.Path, "-Q", "--batch", "-L", c.lisp, "-l", filepath.Join(c.lisp, "ctxls-test.elc"))
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			c.err = fmt.Errorf("%s: loading test/ctxls-test.el: %v\n%s", emacs.Name, err, out)
		}
	})
	if c.err != nil {
		t.Fatal(c.err)
	}
	return c.dir, c.lisp
}

// emacsRunner runs one ERT test of test/ctxls-test.el in a fresh Emacs.
type emacsRunner struct {
	emacs                       emacsVersion
	bin, work, dataDir, fakeURL string
}

func (r emacsRunner) run(t *testing.T, test string, env ...string) string {
	t.Helper()
	return r.start(t, test, env...)()
}

// start starts the ERT test in the background; the returned func waits for
// it, fails the test when it failed, and returns Emacs's output.
func (r emacsRunner) start(t *testing.T, test string, env ...string) func() string {
	t.Helper()
	readLisp(t)
	eln, lisp := r.emacs.elnCache(t)
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	cmd := exec.CommandContext(ctx, r.emacs.Path, "-Q", "--batch", "-L", lisp, "-l", filepath.Join(lisp, "ctxls-test.elc"),
		"--eval", fmt.Sprintf("(ert-run-tests-batch-and-exit '(member %s))", test))
	cmd.Dir = r.work
	self, _ := os.Executable()
	cmd.Env = append(os.Environ(), "CTXLS_BIN="+r.bin, "CTXLS_DATA_DIR="+r.dataDir, "CTXLS_WORK="+r.work,
		"OPENAI_BASE_URL="+r.fakeURL, "OPENAI_API_KEY=", "HOME="+t.TempDir(), "CTXLS_FAKE_LSP_BIN="+self,
		"CTXLS_ELPA="+r.emacs.Elpa, "CTXLS_ELN_CACHE="+eln)
	cmd.Env = append(cmd.Env, env...)
	var buf strings.Builder
	cmd.Stdout, cmd.Stderr = &buf, &buf
	start := time.Now()
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	return func() string {
		t.Helper()
		defer cancel()
		err := cmd.Wait()
		out := buf.String()
		t.Logf("%s: %.1fs", test, time.Since(start).Seconds())
		if ctx.Err() != nil {
			t.Fatalf("%s: Emacs did not finish within 40 s:\n%s", test, out)
		}
		if err != nil {
			t.Fatalf("%s: %v\n%s", test, err, out)
		}
		if m := ertSkipped.FindStringSubmatch(out); m != nil && os.Getenv("CI") == "" {
			t.Skipf("%s: %s", test, m[1])
		}
		if !strings.Contains(out, "Ran 1 test") || !strings.Contains(out, "1 results as expected") {
			t.Fatalf("%s: the ERT test did not run:\n%s", test, out)
		}
		if w := emacsWarning.FindString(out); w != "" {
			t.Fatalf("%s: Emacs warned: %q\n%s", test, w, out)
		}
		return out
	}
}

// ertSkipped is what a test of ctxls-test.el says as it skips itself
// (not in CI: a package it needs is not installed), with the reason.
var ertSkipped = regexp.MustCompile(`(?m)^ctxls-test: skipped: (.*)$`)

// emacsWarning is a line of Emacs's output that warns of something
// deprecated or obsolete (an argument, a package, a function or macro).
var emacsWarning = regexp.MustCompile(`(?im)^.*\b(deprecated|obsolete)\b.*$`)

// TestEmacs drives ctxls.el in one fresh Emacs per subtest. The subtests
// share the data directory and the provider's reply queue, and run in
// order: resume shows the sessions ask and cancel made.
func TestEmacs(t *testing.T) {
	t.Parallel()
	eachEmacs(t, func(t *testing.T, emacs emacsVersion) {
		fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Emacs Test Title"}}))
		r := emacsRunner{emacs: emacs, bin: lsptest.BuildBinary(t), work: workspace(t), dataDir: t.TempDir(), fakeURL: fake.URL}
		file := filepath.Join(r.work, "main.go")
		answered := 0 // chat requests the provider has seen

		// An asked question streams while Emacs keeps running.
		t.Run("ask", func(t *testing.T) {
			fake.Enqueue(openaitest.Reply{Delay: 300 * time.Millisecond,
				Chunks: []string{"Streaming ", "answer: ", "it prints ", "a greeting, ", "final words."}})
			r.run(t, "ctxls-test-ask")
			reqs := fake.WaitRequests(answered+1, 5*time.Second)
			turn := reqs[answered]
			sys := turn.ModelContext()
			if !strings.Contains(sys, "// UNSAVED LINE FROM EMACS: naïve café 😀\n") {
				t.Errorf("the model did not get the unsaved buffer byte for byte:\n%s", sys)
			}
			// The region's lines went with the question as the turn's file.
			if q := turn.Question(); q != "what does this do?" {
				t.Errorf("the question is %q", q)
			}
			if c := turn.TurnContext(); !strings.Contains(c, "(the user selected lines 3–4)") || !strings.Contains(c, file) {
				t.Errorf("the region did not go with the question:\n%s", c)
			}
			answered = len(fake.Requests())
		})

		// The file in front of you goes with the question (its unsaved text),
		// also asked from the chat buffer; C-u and ctxls-send-active-file nil
		// leave it out.
		t.Run("activefile", func(t *testing.T) {
			r.run(t, "ctxls-test-activefile")
			asked := map[string]openaitest.Request{}
			for _, req := range fake.Requests()[answered:] {
				asked[req.Question()] = req
			}
			if c := asked["what is this?"].TurnContext(); !strings.Contains(c, "// UNSAVED ACTIVE LINE") || !strings.Contains(c, "main.go (unsaved editor text)") {
				t.Errorf("the current file's unsaved text did not go with the question:\n%s", c)
			}
			// Asked again, the file is named (its text, shown in the first
			// turn, unchanged).
			if c := asked["from the chat"].TurnContext(); !strings.Contains(c, "main.go (unsaved editor text)") {
				t.Errorf("from the chat: the file buffer used last did not go with the question:\n%s", c)
			}
			for _, q := range []string{"without the file", "no file by default"} {
				req, ok := asked[q]
				if !ok {
					t.Fatalf("%q did not reach the model", q)
				}
				if c := req.TurnContext(); strings.Contains(c, "## Relevant Files") {
					t.Errorf("%q: a file went with the question:\n%s", q, c)
				}
			}
			answered = len(fake.Requests())
		})

		// Cancel, then ask again.
		t.Run("cancel", func(t *testing.T) {
			// The title is asked for after the first complete answer; the test
			// waits for it before the failing turn.
			fake.Enqueue(openaitest.Reply{Chunks: []string{"one ", "two "}, Fault: openaitest.FaultStall, FaultAfter: 1},
				openaitest.Reply{Chunks: []string{"after ", "cancel ", "ok"}},
				openaitest.Reply{Chunks: []string{"Emacs Test Title"}},
				openaitest.Reply{Status: 404, ErrorMessage: "no such model: test-model", ErrorType: "invalid_request_error"},
				openaitest.Reply{Chunks: []string{"restarted ", "fine"}})
			r.run(t, "ctxls-test-cancel")
			if req := fake.WaitCancelled(answered, 5*time.Second); !req.Cancelled {
				t.Error("the provider's stream was not cancelled")
			}
			answered = len(fake.Requests())
		})

		// Resume and search show the stored history.
		t.Run("resume", func(t *testing.T) { r.run(t, "ctxls-test-resume") })

		// Add the last file from the chat buffer, show, preview, remove, new session.
		t.Run("context", func(t *testing.T) { r.run(t, "ctxls-test-context") })

		// A file the model writes is announced and opens from the chat buffer.
		t.Run("files", func(t *testing.T) {
			fake.Enqueue(openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "w1", Name: "write_file",
				Arguments: `{"path": "results/notes.md", "content": "hello from the model"}`}}},
				openaitest.Reply{Chunks: []string{"Wrote the notes."}})
			r.run(t, "ctxls-test-files")
		})

		// Compact the cancel test's session: a summary request, and the mark.
		t.Run("compact", func(t *testing.T) {
			fake.Enqueue(openaitest.Reply{Chunks: []string{"## Goal\n\nGoal: explain main.go."}})
			before := len(fake.Requests())
			r.run(t, "ctxls-test-compact")
			reqs := fake.Requests()
			if len(reqs) != before+1 || !strings.HasPrefix(reqs[before].ModelContext(), "You are compacting") {
				t.Fatalf("%d requests, want one summary request", len(reqs)-before)
			}
			if in := reqs[before].Parsed.Messages[1].Content; !strings.Contains(in, "count slowly") || strings.Contains(in, "after the restart") {
				t.Errorf("the summary request does not hold the earlier turns only: %.400s", in)
			}
		})

		// The sessions picker (most recent first, told apart), rename, the
		// model (its turns go to it), export; context messages.
		t.Run("sessions", func(t *testing.T) {
			fake.Enqueue(openaitest.Reply{Chunks: []string{"Answered by the other model."}})
			before := len(fake.Requests())
			r.run(t, "ctxls-test-sessions")
			var found bool
			for _, req := range fake.Requests()[before:] {
				if req.Question() == "which model?" {
					found = true
					if req.Parsed.Model != "other-model" {
						t.Errorf("the turn went to %q, want other-model", req.Parsed.Model)
					}
				}
			}
			if !found {
				t.Error("the question did not reach the model")
			}
		})
	})
}

// TestEmacsFirstView: the view Emacs sends while no session exists yet
// (point resting on line 6) goes with the first question, which makes the
// session.
func TestEmacsFirstView(t *testing.T) {
	t.Parallel()
	eachEmacs(t, func(t *testing.T, emacs emacsVersion) {
		fake := openaitest.New(t, openaitest.WithTitles(openaitest.Reply{Chunks: []string{"Emacs Test Title"}}))
		fake.Enqueue(openaitest.Reply{Chunks: []string{"Println."}})
		r := emacsRunner{emacs: emacs, bin: lsptest.BuildBinary(t), work: workspace(t), dataDir: t.TempDir(), fakeURL: fake.URL}
		r.run(t, "ctxls-test-first-view")
		reqs := fake.Requests()
		if len(reqs) == 0 || reqs[0].Question() != "what is on my line?" {
			t.Fatalf("the first question did not reach the model")
		}
		want := "Last applet: editor (file=" + filepath.Join(r.work, "main.go") + ", line=6)"
		if c := reqs[0].TurnContext() + reqs[0].ModelContext(); !strings.Contains(c, want) {
			t.Errorf("the first question went without the editor's view %q:\n%s", want, c)
		}
	})
}

// TestEmacsAskTwice: in a fresh Emacs a second question asked before the
// first is answered (the daemon not even up) is refused; the first is
// answered whole, and only it reaches the model.
func TestEmacsAskTwice(t *testing.T) {
	t.Parallel()
	eachEmacs(t, func(t *testing.T, emacs emacsVersion) {
		fake := openaitest.New(t, openaitest.WithTitles(openaitest.Reply{Chunks: []string{"Emacs Test Title"}}))
		fake.Enqueue(openaitest.Reply{Delay: 200 * time.Millisecond, Chunks: []string{"the whole ", "first answer"}})
		r := emacsRunner{emacs: emacs, bin: lsptest.BuildBinary(t), work: workspace(t), dataDir: t.TempDir(), fakeURL: fake.URL}
		r.run(t, "ctxls-test-ask-twice")
		first := 0
		for _, req := range fake.Requests() {
			switch req.Question() {
			case "first question":
				first++
			case "second question":
				t.Errorf("the refused question reached the model")
			}
		}
		if first != 1 {
			t.Errorf("the first question reached the model %d times, want once", first)
		}
	})
}

// TestEmacsHandlerError: an error in one message's handler does not leave
// the messages read with it unhandled (a request would seem unanswered).
func TestEmacsHandlerError(t *testing.T) {
	t.Parallel()
	eachEmacs(t, func(t *testing.T, emacs emacsVersion) {
		fake := openaitest.New(t)
		r := emacsRunner{emacs: emacs, bin: lsptest.BuildBinary(t), work: workspace(t), dataDir: t.TempDir(), fakeURL: fake.URL}
		r.run(t, "ctxls-test-handler-error")
	})
}

// TestEmacsReentrantOutput: the daemon's output read while a handler runs
// (a request sent from a handler may read it) is handled after that
// handler, in order, none of it lost (jsonrpc.el 1.0.14 lost it: a chat's
// session read never ended).
func TestEmacsReentrantOutput(t *testing.T) {
	t.Parallel()
	eachEmacs(t, func(t *testing.T, emacs emacsVersion) {
		fake := openaitest.New(t)
		r := emacsRunner{emacs: emacs, bin: lsptest.BuildBinary(t), work: workspace(t), dataDir: t.TempDir(), fakeURL: fake.URL}
		r.run(t, "ctxls-test-reentrant-output")
	})
}

// TestEmacsNoProvider: a new user asks before setting ctxls-provider. The
// chat says what to set in Emacs (not the daemon's words for other
// editors' settings), the failed question leaves no session behind, and
// once ctxls-provider is set the next question is answered by the running
// daemon (no restart).
func TestEmacsNoProvider(t *testing.T) {
	t.Parallel()
	eachEmacs(t, func(t *testing.T, emacs emacsVersion) {
		fake := openaitest.New(t, openaitest.WithTitles(openaitest.Reply{Chunks: []string{"Emacs Test Title"}}))
		fake.Enqueue(openaitest.Reply{Chunks: []string{"provider set later"}})
		r := emacsRunner{emacs: emacs, bin: lsptest.BuildBinary(t), work: workspace(t), dataDir: t.TempDir(), fakeURL: fake.URL}
		// No provider in the environment either: the URL reaches the test alone.
		r.run(t, "ctxls-test-no-provider", "OPENAI_BASE_URL=", "CTXLS_TEST_PROVIDER_URL="+fake.URL)
		if reqs := fake.Requests(); len(reqs) == 0 || reqs[0].Question() != "hello again" {
			t.Fatalf("the question asked once the provider was set did not reach the model")
		}
	})
}

// TestEmacsCompose: a question written in the *ctxls question* buffer
// reaches the model with its lines, and the region's lines as its file.
func TestEmacsCompose(t *testing.T) {
	t.Parallel()
	eachEmacs(t, func(t *testing.T, emacs emacsVersion) {
		fake := openaitest.New(t, openaitest.WithTitles(openaitest.Reply{Chunks: []string{"Emacs Test Title"}}))
		fake.Enqueue(openaitest.Reply{Chunks: []string{"Two lines ", "read."}},
			openaitest.Reply{Delay: 300 * time.Millisecond, Chunks: []string{"slow ", "answer ", "done"}},
			openaitest.Reply{Chunks: []string{"Sent after all."}})
		r := emacsRunner{emacs: emacs, bin: lsptest.BuildBinary(t), work: workspace(t), dataDir: t.TempDir(), fakeURL: fake.URL}
		r.run(t, "ctxls-test-compose")
		var asked []string
		for _, req := range fake.Requests() {
			asked = append(asked, req.Question())
		}
		reqs := fake.Requests()
		if len(reqs) == 0 || reqs[0].Question() != "first line\nsecond line" {
			t.Fatalf("the model was asked %q, want the two lines first", asked)
		}
		if c := reqs[0].TurnContext(); !strings.Contains(c, "(the user selected lines 3–4)") {
			t.Errorf("the region did not go with the question:\n%s", c)
		}
		if !slices.Contains(asked, "kept\nfor later") || slices.Contains(asked, "never sent") {
			t.Errorf("the model was asked %q: want the kept question, not the aborted one", asked)
		}
	})
}

// TestEmacsImages: an image attached in Emacs (C-c x I) goes with the next
// question as the model's image part, the file's bytes as a data URL, and
// with that question only; files that are no image, or too big, are
// refused before anything is sent; the chat's image lines open the image.
func TestEmacsImages(t *testing.T) {
	t.Parallel()
	eachEmacs(t, func(t *testing.T, emacs emacsVersion) {
		fake := openaitest.New(t, openaitest.WithTitles(openaitest.Reply{Chunks: []string{"A picture"}}))
		fake.Enqueue(openaitest.Reply{Chunks: []string{"a red ", "dot"}}, openaitest.Reply{Chunks: []string{"still a dot"}},
			openaitest.Reply{Chunks: []string{"third answer"}}, openaitest.Reply{Chunks: []string{"answered again"}})
		r := emacsRunner{emacs: emacs, bin: lsptest.BuildBinary(t), work: workspace(t), dataDir: t.TempDir(), fakeURL: fake.URL}
		r.run(t, "ctxls-test-images")
		dot, err := os.ReadFile(filepath.Join(r.work, "dot.png"))
		if err != nil {
			t.Fatal(err)
		}
		want := "data:image/png;base64," + base64.StdEncoding.EncodeToString(dot)
		var asked []string
		for _, req := range fake.Requests() {
			q, _, _ := strings.Cut(req.Question(), "\n")
			if q == "what is in the picture?" || q == "and now?" {
				asked = append(asked, q)
				msgs := req.Parsed.Messages
				var last openai.ChatCompletionMessage
				for _, m := range msgs {
					if m.Role == openai.ChatMessageRoleUser {
						last = m
					}
				}
				got := openaitest.Images(last)
				if q == "what is in the picture?" && !slices.Equal(got, []string{want}) {
					t.Errorf("the question's image parts are %.80q, want the file's bytes, %.80q", got, want)
				}
				if q == "and now?" {
					if len(got) != 0 {
						t.Errorf("the second question went with %d images, want none", len(got))
					}
					// The first question's image goes again with the history.
					n := 0
					for _, m := range msgs {
						n += len(openaitest.Images(m))
					}
					if n != 1 {
						t.Errorf("the second request holds %d images, want the first question's", n)
					}
				}
			}
		}
		if !slices.Equal(asked, []string{"what is in the picture?", "and now?"}) {
			t.Errorf("the model was asked %q", asked)
		}
	})
}

// TestEmacsRewind: the last question asked again (a failed answer
// retried, an answer regenerated) and edited and sent again: the chat and
// the session hold the new turn in place of the old, and the model is
// asked without it.
func TestEmacsRewind(t *testing.T) {
	t.Parallel()
	eachEmacs(t, func(t *testing.T, emacs emacsVersion) {
		fake := openaitest.New(t, openaitest.WithTitles(openaitest.Reply{Chunks: []string{"Emacs Test Title"}}))
		fake.Enqueue(openaitest.Reply{Chunks: []string{"first answer"}},
			openaitest.Reply{Status: 400, ErrorMessage: "the model is overloaded"},
			openaitest.Reply{Chunks: []string{"retried answer"}},
			openaitest.Reply{Chunks: []string{"regenerated answer"}},
			openaitest.Reply{Chunks: []string{"edited answer"}})
		r := emacsRunner{emacs: emacs, bin: lsptest.BuildBinary(t), work: workspace(t), dataDir: t.TempDir(), fakeURL: fake.URL}
		r.run(t, "ctxls-test-rewind")
		var last openaitest.Request
		for _, req := range fake.Requests() {
			if req.Question() == "second question, put better\non two lines" {
				last = req
			}
		}
		if last.Parsed.Model == "" {
			t.Fatal("the edited question did not reach the model")
		}
		var history []string
		for _, m := range last.Parsed.Messages {
			if m.Role == "user" || m.Role == "assistant" {
				history = append(history, m.Role+": "+m.Content)
			}
		}
		text := strings.Join(history, "\n")
		if !strings.Contains(text, "first answer") || strings.Contains(text, "regenerated answer") || strings.Contains(text, "overloaded") {
			t.Errorf("the edited question was asked with this history:\n%s", text)
		}
	})
}

// TestEmacsElsewhere: a turn another client (the ctxls CLI, a daemon of
// its own) makes in the session open in Emacs's chat shows there live, with
// no focus change and no g (the question while the answer streams, then the
// answer), with the PostgreSQL store and with SQLite (one data directory,
// the daemon looks at the sessions' activity every half second); a turn of
// this Emacs's streams meanwhile untouched, nothing shown twice; a question
// asked again there (ctxls chat --again) shows the session again, without
// the turn it removed.
func TestEmacsElsewhere(t *testing.T) {
	t.Parallel()
	eachEmacs(t, func(t *testing.T, emacs emacsVersion) {
		bin := lsptest.BuildBinary(t)
		for _, store := range []string{"postgres", "sqlite"} {
			t.Run(store, func(t *testing.T) {
				t.Parallel() // each store has its own Emacs, daemons, provider and folders
				fake := openaitest.New(t, openaitest.WithTitles(openaitest.Reply{Chunks: []string{"Shared session"}}))
				fake.Enqueue(openaitest.Reply{Chunks: []string{"answer ", "here"}},
					openaitest.Reply{Delay: 400 * time.Millisecond, Chunks: []string{"answer ", "from ", "the ", "other ", "client"}},
					openaitest.Reply{Delay: 300 * time.Millisecond, Chunks: []string{"second ", "answer here, ", "all ", "of it"}},
					openaitest.Reply{Chunks: []string{"last ", "one"}},
					openaitest.Reply{Chunks: []string{"answered again"}},
					openaitest.Reply{Delay: 600 * time.Millisecond, Chunks: []string{"slow ", "answer ", "from ", "far ", "away", "."}})
				r := emacsRunner{emacs: emacs, bin: bin, work: workspace(t), dataDir: t.TempDir(), fakeURL: fake.URL}
				other, dsn := r.dataDir, ""
				var c *pgtest.Cluster
				if store == "postgres" {
					c = pgtest.Start(t)
					if _, err := backend.InitPostgres(context.Background(), c.DSN("", "postgres")); err != nil {
						t.Fatal(err)
					}
					if out, err := c.Psql(t, "", "postgres", "CREATE ROLE alice LOGIN IN ROLE ctxls_user; GRANT CONNECT ON DATABASE postgres TO alice"); err != nil {
						t.Fatalf("%v %s", err, out)
					}
					other, dsn = t.TempDir(), c.DSN("alice", "postgres")
				}
				shared := filepath.Join(t.TempDir(), "session")
				wait := r.start(t, "ctxls-test-elsewhere", "CTXLS_TEST_STORE="+store, backend.StoreEnv+"="+dsn,
					"CTXLS_OTHER_DATA_DIR="+other, "CTXLS_SHARED="+shared)
				deadline := time.Now().Add(30 * time.Second)
				for {
					if _, err := os.Stat(shared); err == nil {
						break
					}
					if time.Now().After(deadline) {
						wait()
						t.Fatal("Emacs did not write the session's id")
					}
					time.Sleep(50 * time.Millisecond)
				}
				// Emacs's daemon listens for changes before the other client
				// changes anything.
				for c != nil {
					out, err := c.Psql(t, "", "postgres", "SELECT count(*) FROM pg_stat_activity WHERE query = 'LISTEN ctxls_changes'")
					if n, _ := strconv.Atoi(strings.TrimSpace(out)); err == nil && n >= 1 {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("Emacs's daemon does not listen for changes: %q %v", out, err)
					}
					time.Sleep(50 * time.Millisecond)
				}
				if err := os.WriteFile(shared+".go", nil, 0o644); err != nil {
					t.Fatal(err)
				}
				wait()
			})
		}
	})
}

// TestEmacsHistory: each answer in the chat says what it cost (cached
// input tokens included) and the header line what the session cost; a
// stopped answer reads "cancelled" and one the killed daemon left
// "interrupted", live, resumed, and in a new Emacs.
func TestEmacsHistory(t *testing.T) {
	t.Parallel()
	eachEmacs(t, func(t *testing.T, emacs emacsVersion) {
		fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Emacs Test Title"}}))
		r := emacsRunner{emacs: emacs, bin: lsptest.BuildBinary(t), work: workspace(t), dataDir: t.TempDir(), fakeURL: fake.URL}
		fake.Enqueue(openaitest.Reply{Chunks: []string{"Costly ", "answer."},
			Usage: &openai.Usage{PromptTokens: 1834, CompletionTokens: 211, PromptTokensDetails: &openai.PromptTokensDetails{CachedTokens: 1536}}})
		// The title request comes between the first two turns.
		fake.Enqueue(openaitest.Reply{Chunks: []string{"Emacs Test Title"}},
			openaitest.Reply{Chunks: []string{"Cheap."}}, // 10 in, 1 out
			openaitest.Reply{Chunks: []string{"one ", "two "}, Fault: openaitest.FaultStall, FaultAfter: 1},
			openaitest.Reply{Chunks: []string{"partial ", "words "}, Fault: openaitest.FaultStall, FaultAfter: 1})
		r.run(t, "ctxls-test-history")
		r.run(t, "ctxls-test-history-resume")
	})
}

// TestEmacsSync: unsaved edits reach the daemon byte for byte, in both
// encodings, on a workspace of its own beside TestEmacs.
func TestEmacsSync(t *testing.T) {
	t.Parallel()
	eachEmacs(t, func(t *testing.T, emacs emacsVersion) {
		fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Emacs Test Title"}}))
		r := emacsRunner{emacs: emacs, bin: lsptest.BuildBinary(t), work: workspace(t), dataDir: t.TempDir(), fakeURL: fake.URL}
		// The test saves the file, so each run starts from a fresh one.
		syncText, _ := os.ReadFile(filepath.Join(r.work, "sync.txt"))
		for _, enc := range []struct{ offer, want string }{{"utf-8,utf-16", "utf-8"}, {"utf-16", "utf-16"}} {
			t.Run("sync-"+enc.want, func(t *testing.T) {
				os.WriteFile(filepath.Join(r.work, "sync.txt"), syncText, 0o644)
				r.run(t, "ctxls-test-sync", "CTXLS_TEST_ENCODINGS="+enc.offer, "CTXLS_TEST_EXPECT="+enc.want)
			})
		}
	})
}

// TestEmacsSetup: the package itself and the documented ways of setting it
// up (plain, use-package, lsp-mode, eglot), each in a fresh Emacs, on a
// workspace of its own beside TestEmacs.
func TestEmacsSetup(t *testing.T) {
	t.Parallel()
	eachEmacs(t, func(t *testing.T, emacs emacsVersion) {
		fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Emacs Test Title"}}))
		r := emacsRunner{emacs: emacs, bin: lsptest.BuildBinary(t), work: workspace(t), dataDir: t.TempDir(), fakeURL: fake.URL}

		// The package compiles without a warning and its autoloads work.
		t.Run("package", func(t *testing.T) { r.run(t, "ctxls-test-package") })
		// A synchronous request (a picker's list) leaves nothing that came
		// with its answer unread (Emacs 28's jsonrpc-request did).
		t.Run("request-wait", func(t *testing.T) { r.run(t, "ctxls-test-request-wait") })

		// The init code docs/editors.md gives, plain and with use-package, with
		// "ctxls" found on PATH.
		here, _ := filepath.Abs(".")
		for _, block := range []string{"emacs-setup", "emacs-use-package"} {
			t.Run(block, func(t *testing.T) {
				code := docBlock(t, block)
				if !strings.Contains(code, "/path/to/ctxls/editors/emacs") {
					t.Fatalf("the %s block does not load /path/to/ctxls/editors/emacs:\n%s", block, code)
				}
				code = strings.ReplaceAll(code, "/path/to/ctxls/editors/emacs", here)
				r.run(t, "ctxls-test-docs-setup", "CTXLS_DOC_SETUP="+code,
					"PATH="+filepath.Dir(r.bin)+string(os.PathListSeparator)+os.Getenv("PATH"), "CTXLS_DATA_DIR="+t.TempDir())
			})
		}

		// lsp-mode runs ctxls as an add-on server, as documented. (Not
		// installed outside CI, it and eglot skip themselves.)
		t.Run("lsp-mode", func(t *testing.T) {
			r.run(t, "ctxls-test-lsp-mode", "CTXLS_DOC_LSP="+docBlock(t, "lsp-mode"), "CTXLS_DOC_LSP_COMMAND="+docBlock(t, "lsp-mode-command"),
				"PATH="+filepath.Dir(r.bin)+string(os.PathListSeparator)+os.Getenv("PATH"), "CTXLS_DATA_DIR="+t.TempDir())
		})

		// eglot (Debian's elpa-eglot on Emacs 28, built in from 29) keeps its
		// own server on the buffer while ctxls-mode syncs it.
		t.Run("eglot", func(t *testing.T) {
			r.run(t, "ctxls-test-eglot")
		})
	})
}

// fakeLSP is a minimal language server: full text sync, and a hover that
// answers with the line under the cursor as the server holds it, so a test
// can see that this server still gets the buffer's edits.
func fakeLSP(in io.Reader, out io.Writer) {
	br := bufio.NewReader(in)
	docs := map[string]string{}
	write := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(out, "Content-Length: %d\r\n\r\n%s", len(b), b)
	}
	for {
		n := -1
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimSpace(line)
			if line == "" {
				break
			}
			if v, ok := strings.CutPrefix(line, "Content-Length:"); ok {
				n, _ = strconv.Atoi(strings.TrimSpace(v))
			}
		}
		if n < 0 {
			return
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(br, body); err != nil {
			return
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				TextDocument struct {
					URI  string `json:"uri"`
					Text string `json:"text"`
				} `json:"textDocument"`
				ContentChanges []struct {
					Text string `json:"text"`
				} `json:"contentChanges"`
				Position struct {
					Line int `json:"line"`
				} `json:"position"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &msg) != nil {
			continue
		}
		p := msg.Params
		var result any
		switch msg.Method {
		case "initialize":
			result = map[string]any{
				"capabilities": map[string]any{"textDocumentSync": map[string]any{"openClose": true, "change": 1}, "hoverProvider": true},
				"serverInfo":   map[string]any{"name": "fake-lsp"},
			}
		case "textDocument/didOpen":
			docs[p.TextDocument.URI] = p.TextDocument.Text
		case "textDocument/didChange":
			for _, c := range p.ContentChanges {
				docs[p.TextDocument.URI] = c.Text
			}
		case "textDocument/hover":
			lines := strings.Split(docs[p.TextDocument.URI], "\n")
			text := ""
			if p.Position.Line < len(lines) {
				text = lines[p.Position.Line]
			}
			result = map[string]any{"contents": map[string]any{"kind": "plaintext", "value": "fake-lsp line: " + text}}
		case "exit":
			return
		}
		if len(msg.ID) > 0 {
			write(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": result})
		}
	}
}

// docBlock returns the code block that follows "<!-- test: name -->" in
// docs/editors.md, so the tests follow the documented recipes as written.
func docBlock(t *testing.T, name string) string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "editors.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "<!-- test: "+name+" -->\n```")
	if !ok {
		t.Fatalf("docs/editors.md has no block marked %q", name)
	}
	_, rest, _ = strings.Cut(rest, "\n") // the fence's language
	block, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatalf("docs/editors.md: the block %q is not closed", name)
	}
	return block
}

// TestVimALE follows docs/editors.md's Vim recipe in Debian's Vim 9 with
// vim-ale: an unsaved edit reaches ctxls through ALE, and the documented
// command works over ALE's connection.
func TestVimALE(t *testing.T) {
	t.Parallel()
	vim := editor(t, "vim")
	if _, err := os.Stat("/usr/share/vim/vimfiles/pack/dist-bundle/opt/ale"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("vim-ale is not installed: .ci/run must call editors/emacs/ci-install.sh")
		}
		t.Skip("vim-ale is not installed (editors/emacs/ci-install.sh installs it)")
	}
	bin := lsptest.BuildBinary(t)
	work := workspace(t)
	file := filepath.Join(work, "main.go")
	tmp := t.TempDir()
	vimrc := filepath.Join(tmp, "vimrc")
	command := filepath.Join(tmp, "command.vim")
	out := filepath.Join(tmp, "out.json")
	os.WriteFile(vimrc, []byte("set nocompatible\nfiletype plugin indent on\n"+docBlock(t, "vim-ale")), 0o644)
	os.WriteFile(command, []byte(docBlock(t, "vim-ale-command")), 0o644)
	driver, _ := filepath.Abs(filepath.Join("test", "vim-ale.vim"))
	if _, err := os.ReadFile(driver); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, vim, "-N", "-u", vimrc, "-i", "NONE", "-n", "-es", "-S", driver, file)
	cmd.Dir = work
	// The recipe runs "ctxls" from PATH: put the built binary first.
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"CTXLS_DATA_DIR="+t.TempDir(), "HOME="+t.TempDir(), "CTXLS_VIM_OUT="+out, "CTXLS_VIM_COMMAND="+command)
	output, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("vim did not finish within 30 s:\n%s", output)
	}
	raw, rerr := os.ReadFile(out)
	if rerr != nil {
		t.Fatalf("vim wrote no result (%v):\n%s", err, output)
	}
	var res struct {
		Error, Buffer, URI string
		Response           struct {
			Result struct{ Text string }
			Error  any
		}
		Context struct {
			Result struct{ Context map[string][]string }
		}
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	if res.Error != "" {
		t.Fatalf("vim: %s\n%s", res.Error, output)
	}
	if !strings.Contains(res.Buffer, "unsaved from Vim: naïve café 😀") {
		t.Fatalf("the buffer was not edited: %q", res.Buffer)
	}
	if res.Response.Result.Text != res.Buffer {
		t.Errorf("ctxls holds %q (error %v), the buffer is %q", res.Response.Result.Text, res.Response.Error, res.Buffer)
	}
	if got := res.Context.Result.Context["files"]; len(got) != 1 || got[0] != file {
		t.Errorf("the documented command set the files %q, want [%s]", got, file)
	}
}

// TestEmacsTools: the model calls tools of the test MCP server; each call
// is a line in the chat buffer, its output shown with RET; the permission
// question is answered with keys typed while it is on screen (allow once,
// deny, none until the timeout, always in this session), a slow call shows
// its progress; a new Emacs shows
// the same lines in the resumed session's history.
func TestEmacsTools(t *testing.T) {
	t.Parallel()
	eachEmacs(t, func(t *testing.T, emacs emacsVersion) {
		fake := openaitest.New(t)
		fake.Enqueue(editortest.ToolScenario()...)
		r := emacsRunner{emacs: emacs, bin: lsptest.BuildBinary(t), work: workspace(t), dataDir: t.TempDir(), fakeURL: fake.URL}
		servers, _ := json.Marshal(map[string]any{"t": testmcp.Server(t, "t", t.TempDir())})
		env := []string{"CTXLS_MCP_SERVERS=" + string(servers), "CTXLS_TOOL_LINES=" + filepath.Join(t.TempDir(), "lines")}
		r.run(t, "ctxls-test-tools", env...)
		// What the model was told of each call: its result, that the user
		// declined it, or (c4) that the question was not answered in time —
		// never that the user declined it.
		results := map[string]string{}
		for _, req := range fake.Requests() {
			for _, m := range req.Parsed.Messages {
				if m.Role == "tool" {
					results[m.ToolCallID] = m.Content
				}
			}
		}
		for id, want := range map[string]string{
			"c1": "echo: hi", "c2": "The user declined this call of t · add", "c3": "error: ",
			"c4": "The user did not answer the permission question in time; the call did not run.", "c5": "echo: a", "c6": "echo: b", "c7": "slow done after 3 steps",
		} {
			if !strings.HasPrefix(results[id], want) {
				t.Errorf("the model got %q for %s, want %q…", results[id], id, want)
			}
		}
		r.run(t, "ctxls-test-tools-resume", env...)
	})
}
