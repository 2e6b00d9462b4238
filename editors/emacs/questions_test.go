package emacs_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/editors/screenshot"
	"github.com/ctxls/ctxls/internal/testmcp"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// emacsState is what the Emacs under test (terminalEmacs) writes down
// every 100 ms.
type emacsState struct {
	Source   string `json:"source"`   // the text of notes.txt's buffer, the file the user types in
	Main     string `json:"main"`     // the text of main.go's buffer, if visited
	Open     int    `json:"open"`     // the questions open (waiting for an answer)
	Chat     string `json:"chat"`     // the chat buffer's text
	Selected string `json:"selected"` // the selected window's buffer
	Review   bool   `json:"review"`   // an edit is shown for review, undecided
	Reviewed int    `json:"reviewed"` // the reviews decided
}

// terminalEmacs is an Emacs in a terminal (tmux, emacs -nw, its real
// command loop) visiting notes.txt (empty) in a workspace, with ctxls-mode
// on, the test MCP server "t", questions waiting 60 s, and C-c x the
// command map; read is its state, waitState waits for one.
type terminalEmacs struct {
	t    *testing.T
	term *screenshot.Tmux
	work string
	read func() emacsState
}

func startTerminalEmacs(t *testing.T, emacs emacsVersion, name string, fake *openaitest.Server) *terminalEmacs {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("tmux is not installed: .ci/run must call editors/emacs/ci-install.sh")
		}
		t.Skip("tmux is not installed")
	}
	readLisp(t)
	bin := lsptest.BuildBinary(t)
	mcp := testmcp.Server(t, "t", t.TempDir())
	env := ""
	for k, v := range mcp["env"].(map[string]string) {
		env += fmt.Sprintf("(%q . %q) ", k, v)
	}
	args := ""
	for _, a := range mcp["args"].([]string) {
		args += fmt.Sprintf("%q ", a)
	}
	work := workspace(t)
	os.WriteFile(filepath.Join(work, "notes.txt"), nil, 0o644)
	data := scratchDir(t)
	here, _ := filepath.Abs(".")
	statePath := filepath.Join(t.TempDir(), "state.json")
	setup := filepath.Join(t.TempDir(), "setup.el")
	os.WriteFile(setup, []byte(fmt.Sprintf(`
(setq native-comp-jit-compilation nil native-comp-deferred-compilation nil)
;; Emacs 28's own term/xterm.el, compiled in the background as the terminal
;; starts (before this file): a failure there pops *Warnings* over the
;; window the test looks at; it is Emacs's, not ctxls's.
(setq native-comp-async-report-warnings-errors nil)
(require 'package)
(add-to-list 'package-directory-list %q)
(package-initialize)
(add-to-list 'load-path %q)
(require 'ctxls)
(require 'json)
(setq ctxls-command '(%q "serve") ctxls-data-dir %q
      ctxls-provider '(:baseURL %q :model "test-model")
      ctxls-mcp-servers '(("t" :command %q :args (%s) :env (%s)))
      ctxls-tool-permission-timeout 60)
(setq inhibit-startup-screen t)
(menu-bar-mode -1)
(global-set-key (kbd "C-c x") 'ctxls-command-map)
(ctxls-mode 1)
;; What the test reads, written whole then renamed: never read half written.
(run-with-timer 0.1 0.1
  (lambda ()
    (let ((text (lambda (name)
                  (let ((b (get-file-buffer (expand-file-name name %q))))
                    (if b (with-current-buffer b (buffer-substring-no-properties (point-min) (point-max))) "")))))
      (with-temp-file %[11]q
        (insert (json-encode
                 (list (cons 'source (funcall text "notes.txt"))
                       (cons 'main (funcall text "main.go"))
                       (cons 'open (cond ((boundp 'ctxls--open-questions) (length ctxls--open-questions))
                                         ((and (boundp 'ctxls--asking) ctxls--asking) 1)
                                         (t 0)))
                       (cons 'chat (if (buffer-live-p ctxls--chat)
                                       (with-current-buffer ctxls--chat (buffer-substring-no-properties (point-min) (point-max)))
                                     ""))
                       (cons 'selected (buffer-name (window-buffer (selected-window))))
                       (cons 'review (if ctxls--review t :json-false))
                       (cons 'reviewed ctxls--reviewed)))))
      (rename-file %[11]q %[10]q t))))
`, emacs.Elpa, here, bin, data, fake.URL, mcp["command"], args, env, work, statePath, statePath+".new")), 0o644)
	term := screenshot.StartTmux(t, name+"-"+emacs.tmuxName(), 200, 40, work,
		[]string{"OPENAI_API_KEY=", "TERM=xterm-256color", "HOME=" + t.TempDir()},
		emacs.Path, "-nw", "-Q", "-l", setup, filepath.Join(work, "notes.txt"))
	term.WaitFor("the mode line", func(s string) bool { return strings.Contains(s, " ctxls") && !strings.Contains(s, "starting") })
	return &terminalEmacs{t: t, term: term, work: work, read: func() emacsState {
		var st emacsState
		for range 50 {
			b, err := os.ReadFile(statePath)
			if err == nil && json.Unmarshal(b, &st) == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		return st
	}}
}

func (e *terminalEmacs) waitState(what string, cond func(emacsState) bool) emacsState {
	e.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if st := e.read(); cond(st) {
			return st
		}
		time.Sleep(50 * time.Millisecond)
	}
	e.t.Fatalf("%s: the state %+v\nthe screen:\n%s", what, e.read(), e.term.Screen(false))
	return emacsState{}
}

// typeSlowly types text as a person does, a key at a time.
func (e *terminalEmacs) typeSlowly(text string) {
	for _, k := range strings.Split(text, "") {
		e.term.Keys("-l", k)
		time.Sleep(40 * time.Millisecond)
	}
}

// ask asks question with C-c x a, from the buffer the user is in.
func (e *terminalEmacs) ask(question string) {
	e.term.Keys("C-c", "x", "a")
	e.term.WaitFor("the prompt", func(s string) bool { return strings.Contains(screenshot.LastLine(s), "Ask ctxls") })
	e.term.Keys("-l", question)
	e.term.Keys("Enter")
	e.waitState("the question in the chat", func(st emacsState) bool { return strings.Contains(st.Chat, question) })
}

// TestEmacsQuestionSurvivesTyping reproduces issue 35's defect in a real
// terminal: the model asks to call an MCP tool while the user types
// `var x = 1` and Enter in the file they edit. The typing stays in the
// file, exactly; the question stays open in the chat, unanswered, and the
// tool does not run. Then the user goes to the chat (C-x o): A (always)
// asks to confirm and n there leaves the question open; y allows the call
// once, the tool runs, and the question's line says so. (Before:
// read-multiple-choice, asked from a timer, took the a of "var" as
// "[A]lways in this session" and the tool ran.)
func TestEmacsQuestionSurvivesTyping(t *testing.T) {
	t.Parallel()
	eachEmacs(t, func(t *testing.T, emacs emacsVersion) {
		fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Title"}}))
		// The tool call waits until the user is typing.
		fake.Enqueue(
			openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: "mcp__t__echo", Arguments: `{"text":"hi"}`}}, HoldAt: []int{0}},
			openaitest.Reply{Chunks: []string{"Echoed."}},
		)
		e := startTerminalEmacs(t, emacs, "ctxls-emacs-question", fake)
		e.ask("echo hi")
		fake.Release()
		e.waitState("the question", func(st emacsState) bool { return st.Open == 1 })
		e.typeSlowly("var x = 1")
		e.term.Keys("Enter")
		time.Sleep(1500 * time.Millisecond) // the tool would have run by now
		st := e.read()
		if n := len(fake.Requests()); n != 1 {
			t.Errorf("the typed keys answered the question: the model was asked %d times (tool results %q)", n, fake.LastStreamed().ToolResults())
		}
		if st.Source != "var x = 1\n" {
			t.Errorf("notes.txt holds %q, want exactly what was typed: %q", st.Source, "var x = 1\n")
		}
		if st.Selected != "notes.txt" {
			t.Errorf("the selected window shows %q, not the file typed in", st.Selected)
		}
		if st.Open != 1 || !strings.Contains(st.Chat, "• t · echo `{\"text\":\"hi\"}` — waiting for your permission\n\n> ctxls asks: the model wants to call t · echo (read-only) with {\"text\":\"hi\"}. Allow it?\n> [y] allow once  [n] deny  [A] always in this session (asks to confirm)  (or M-x ctxls-answer)\n") {
			t.Fatalf("the question is not open in the chat (%d open):\n%s\nthe screen:\n%s", st.Open, st.Chat, e.term.Screen(false))
		}
		// Answered on purpose, in the chat. Always takes a confirmation:
		// declined, the question stays open.
		e.term.Keys("C-x", "o")
		e.waitState("the chat selected", func(st emacsState) bool { return strings.HasPrefix(st.Selected, "*ctxls chat*") })
		e.term.Keys("A")
		e.term.WaitFor("the confirmation", func(s string) bool {
			return strings.Contains(screenshot.LastLine(s), "Always in this session") && strings.Contains(screenshot.LastLine(s), "(y or n)")
		})
		e.term.Keys("n")
		time.Sleep(500 * time.Millisecond)
		if st := e.read(); st.Open != 1 || len(fake.Requests()) != 1 {
			t.Fatalf("always, not confirmed, answered the question (%d open, %d requests):\n%s", st.Open, len(fake.Requests()), st.Chat)
		}
		e.term.Keys("y")
		st = e.waitState("the answer", func(st emacsState) bool { return st.Open == 0 && strings.Contains(st.Chat, "Echoed.") })
		if r := fake.LastStreamed().ToolResults(); r["c1"] != "echo: hi" {
			t.Errorf("the tool's result: %q", r)
		}
		if !strings.Contains(st.Chat, "\n> ctxls asked: the model wants to call t · echo (read-only) with {\"text\":\"hi\"}. Allow it? → allowed once\n") ||
			strings.Contains(st.Chat, "[y] allow once") {
			t.Errorf("the closed question's line:\n%s", st.Chat)
		}
		if st.Source != "var x = 1\n" {
			t.Errorf("notes.txt holds %q after the answer", st.Source)
		}
	})
}

// TestEmacsReviewSurvivesTyping: the model's edit of main.go is shown for
// review while the user types `quux` and Enter in notes.txt. The diff
// shows beside it, not selected: the typing lands in notes.txt, exactly,
// and the edit stays undecided. The user then goes to the review (C-x b)
// and accepts it there with C-c C-c. (Before: the review's window was
// selected, its q rejected the edit and Enter jumped into the file.)
func TestEmacsReviewSurvivesTyping(t *testing.T) {
	t.Parallel()
	eachEmacs(t, func(t *testing.T, emacs emacsVersion) {
		fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Title"}}))
		fake.Enqueue(
			openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "e1", Name: "edit_file",
				Arguments: `{"path":"main.go","old_string":"fmt.Println(\"héllo\")","new_string":"fmt.Println(\"hello\")"}`}}, HoldAt: []int{0}},
			openaitest.Reply{Chunks: []string{"Edited."}},
		)
		e := startTerminalEmacs(t, emacs, "ctxls-emacs-review", fake)
		e.ask("drop the accent")
		fake.Release()
		e.waitState("the review", func(st emacsState) bool { return st.Review })
		e.typeSlowly("quux")
		e.term.Keys("Enter")
		time.Sleep(1500 * time.Millisecond)
		st := e.read()
		if st.Source != "quux\n" {
			t.Errorf("notes.txt holds %q, want exactly what was typed: %q", st.Source, "quux\n")
		}
		if st.Selected != "notes.txt" {
			t.Errorf("the selected window shows %q, not the file typed in", st.Selected)
		}
		if !st.Review || st.Reviewed != 0 || len(fake.Requests()) != 1 {
			t.Fatalf("the typed keys decided the review (shown %v, %d decided, %d requests); the screen:\n%s",
				st.Review, st.Reviewed, len(fake.Requests()), e.term.Screen(false))
		}
		if screen := e.term.Screen(false); !strings.Contains(screen, `fmt.Println("hello")`) || !strings.Contains(screen, "*ctxls review*") {
			t.Errorf("the diff is not on screen:\n%s", screen)
		}
		// Decided on purpose: in the review's buffer.
		e.term.Keys("C-x", "b")
		e.term.Keys("-l", "*ctxls review*")
		e.term.Keys("Enter")
		e.waitState("the review selected", func(st emacsState) bool { return st.Selected == "*ctxls review*" })
		e.term.Keys("C-c", "C-c")
		st = e.waitState("the edit", func(st emacsState) bool { return st.Reviewed == 1 && strings.Contains(st.Chat, "Edited.") })
		if !strings.Contains(st.Main, "fmt.Println(\"hello\")") {
			t.Errorf("main.go's buffer holds %q", st.Main)
		}
		if st.Source != "quux\n" {
			t.Errorf("notes.txt holds %q after the review", st.Source)
		}
	})
}

// TestEmacsQuestions: a workspace's .mcp.json is asked about in the chat
// (kind trust: T, which asks to confirm, or n); typed in the file those
// letters answer nothing; M-x ctxls-answer trusts it from the file's
// buffer. The model then calls the file's server and the turn is
// cancelled while the permission question is open: its line says so and
// the chat's question keys go. ctxls-test-questions.
func TestEmacsQuestions(t *testing.T) {
	t.Parallel()
	eachEmacs(t, func(t *testing.T, emacs emacsVersion) {
		fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Title"}}))
		fake.Enqueue(openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "w1", Name: "mcp__w__echo", Arguments: `{"text":"x"}`}}})
		r := emacsRunner{emacs: emacs, bin: lsptest.BuildBinary(t), work: workspace(t), dataDir: t.TempDir(), fakeURL: fake.URL}
		cfg := testmcp.Config(map[string]map[string]any{"w": testmcp.Server(t, "w", t.TempDir())})
		if err := os.WriteFile(filepath.Join(r.work, ".mcp.json"), cfg, 0o644); err != nil {
			t.Fatal(err)
		}
		r.run(t, "ctxls-test-questions")
		if r := fake.LastStreamed().ToolResults(); r["w1"] != "" {
			t.Errorf("the cancelled call ran: %q", r)
		}
	})
}
