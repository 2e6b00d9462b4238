package emacs_test

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/editors/screenshot"
	"github.com/ctxls/ctxls/internal/testmcp"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// TestEmacsScreenshot runs Emacs in a terminal (tmux) with its real command
// loop, in a light and a dark theme: it asks about a region (the model
// first calls a tool of an MCP server: the permission question, in the chat
// under the call's line with its keys, is rendered to
// CTXLS_SCREENSHOT_DIR/emacs-permission-light.png and -dark.png, then
// answered with y in the chat), types into the file while the answer streams (the
// typed text shows before the answer ends: nothing blocks), shows the tool
// call's output with RET on its line, and renders the screen to
// CTXLS_SCREENSHOT_DIR/emacs-light.png and emacs-dark.png; then it writes a
// second question over two lines in the question buffer (C-c x w), with an
// image attached (C-c x I), rendered to emacs-compose-light.png and
// -dark.png, sends it (the chat shows the image's line), runs M-x ctxls-compact and renders the chat with the line
// that marks where the model's view starts to emacs-compact-light.png and
// emacs-compact-dark.png; then the model edits main.go (unsaved) and the
// diff shown for review (beside the file, which keeps the cursor) is
// rendered to emacs-review-light.png and emacs-review-dark.png before it
// is accepted there (C-x o, C-c C-c). It runs only when
// that variable is set: CTXLS_SCREENSHOT_DIR=$PWD/docs go test ./editors/emacs -run Screenshot
func TestEmacsScreenshot(t *testing.T) {
	dir := screenshot.Dir(t, "emacs")
	eachEmacs(t, func(t *testing.T, emacs emacsVersion) {
		readLisp(t)
		bin := lsptest.BuildBinary(t)
		for _, theme := range termThemes {
			t.Run(theme.name, func(t *testing.T) {
				fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Greeting in main.go"}}))
				fake.Enqueue(openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: "mcp__docs__echo", Arguments: `{"text": "fmt.Println"}`}}})
				fake.Enqueue(openaitest.Reply{Delay: 250 * time.Millisecond, Chunks: []string{
					"`main` prints ", "a greeting with ", "`fmt.Println`:\n\n", "- the string is ", "UTF-8, so ", "`héllo` ",
					"prints as written;\n", "- nothing else ", "runs.\n\n", "Lines 5-7 are ", "the whole program.",
				}})
				work := workspace(t)
				mcp := testmcp.Server(t, "docs", t.TempDir())
				setup := terminalSetup(t, emacs, bin, scratchDir(t), fake.URL, theme.emacsTheme, fmt.Sprintf(`(setq ctxls-mcp-servers '(("docs" :command %q :args ("-name" "docs") :env (("TESTMCP_DIR" . %q)))))`, mcp["command"], mcp["env"].(map[string]string)["TESTMCP_DIR"]))
				term := startTerminal(t, emacs, "ctxls-emacs-shot-"+emacs.tmuxName()+"-"+theme.name, 110, 40, work, setup, filepath.Join(work, "main.go"))
				keys, screen, waitFor := term.Keys, term.Screen, term.WaitFor
				// Select lines 5-7 (func main) and ask about them.
				keys("M-<", "C-n", "C-n", "C-n", "C-n", "C-Space", "C-n", "C-n", "C-n", "C-c", "x", "a")
				waitFor("the prompt", func(s string) bool { return strings.Contains(s, "Ask ctxls (with main.go:5-7):") })
				keys("-l", "What does main print?")
				keys("Enter")
				// The model calls docs · echo: its line waits while the question
				// is in the chat under it, with its keys, and the echo area
				// says how to answer; the cursor stays in main.go.
				waitFor("the permission question", func(s string) bool {
					return strings.Contains(s, "• docs · echo `{\"text\": \"fmt.Println\"}` — waiting for your permission") &&
						strings.Contains(s, `> ctxls asks: the model wants to call docs · echo (read-only) with {"text": "fmt.Println"}. Allow it?`) &&
						strings.Contains(s, "> [y] allow once  [n] deny  [A] always in this session (asks to confirm)  (or M-x ctxls-answer)") &&
						strings.Contains(screenshot.LastLine(s), "ctxls: in the chat, y allow, n deny, A always (or M-x ctxls-answer): the model")
				})
				render(t, emacs, screen(true), theme.bg, theme.fg, filepath.Join(dir, "emacs-permission-"+theme.name+".png"), 1000, 740)
				// Answered in the chat, then back to the file.
				keys("C-x", "o", "y")
				waitFor("the answer's line", func(s string) bool {
					return strings.Contains(s, "allowed once") && !strings.Contains(s, "[y] allow once")
				})
				keys("C-x", "o")
				waitFor("the first words", func(s string) bool { return strings.Contains(s, "prints") })
				// Type into the file while the answer streams.
				keys("M-<", "C-e")
				keys("-l", " // typed while streaming")
				mid := waitFor("the typed text", func(s string) bool { return strings.Contains(s, "// typed while streaming") })
				if strings.Contains(mid, "the whole program.") {
					t.Errorf("the answer had ended before the typed text showed; the screen:\n%s", mid)
				}
				waitFor("the whole answer", func(s string) bool { return strings.Contains(s, "the whole program.") })
				waitFor("the model's title", func(s string) bool { return strings.Contains(s, "Greeting in main.go") })
				// Show the whole exchange: the chat window from its top, the tool
				// call's output shown (RET on its line).
				keys("C-x", "o", "M-<")
				waitFor("the chat's top", func(s string) bool { return strings.Contains(s, "# Greeting in main.go") })
				keys("C-s")
				keys("-l", "docs · echo")
				keys("Enter", "Enter", "M-<")
				waitFor("the call's output", func(s string) bool {
					return strings.Contains(s, "▾ docs · echo `{\"text\": \"fmt.Println\"}` — done") && strings.Contains(s, "echo: fmt.Println") &&
						chatTopLine.MatchString(s) // M-< done, the screen redrawn
				})
				// The chat's header line ends with its last key hint, not cut
				// off at the terminal's edge.
				if header := headerLine(screen(false), " ctxls · Greeting in main.go"); !strings.HasSuffix(header, "  ? keys") {
					t.Errorf("the chat's header line is cut off: %q", header)
				}
				render(t, emacs, screen(true), theme.bg, theme.fg, filepath.Join(dir, "emacs-"+theme.name+".png"), 1000, 740)

				// A second turn, then M-x ctxls-compact: the chat marks where
				// the model's view of the session now starts.
				fake.Enqueue(openaitest.Reply{Chunks: []string{"It returns, ", "so the program ", "exits with status 0."}},
					openaitest.Reply{Chunks: []string{"The user asked what main prints: a UTF-8 greeting, nothing else."}})
				// With an image (C-c x I), written over two lines in the
				// question buffer (C-c x w).
				if err := os.WriteFile(filepath.Join(work, "dot.png"), onePixelPNG(t), 0o644); err != nil {
					t.Fatal(err)
				}
				keys("M->", "C-c", "x", "I")
				waitFor("the image prompt", func(s string) bool { return strings.Contains(s, "Image for the next question: ") })
				keys("-l", "dot.png")
				keys("Enter")
				waitFor("the image attached", func(s string) bool { return strings.Contains(s, "dot.png goes with the next question") })
				keys("C-c", "x", "w")
				waitFor("the question buffer", func(s string) bool {
					return strings.Contains(s, "ctxls: your question (with main.go; image: dot.png)   RET new line   C-c C-c send   C-c C-k abort")
				})
				keys("-l", "And after that?")
				keys("Enter")
				keys("-l", "Say how the program ends.")
				waitFor("the two lines", func(s string) bool { return strings.Contains(s, "Say how the program ends.") })
				render(t, emacs, screen(true), theme.bg, theme.fg, filepath.Join(dir, "emacs-compose-"+theme.name+".png"), 1000, 740)
				keys("C-c", "C-c")
				// The turn has ended once what it cost shows.
				waitFor("the second answer", func(s string) bool {
					return strings.Contains(s, "exits with status 0.\n\n_tokens: 10 in · 3 out_")
				})
				keys("M-x")
				keys("-l", "ctxls-compact")
				keys("Enter")
				waitFor("the compaction's message", func(s string) bool { return strings.Contains(s, "ctxls: summarised for the model: the first") })
				// The chat window alone, from the top of the block the command showed.
				keys("C-x", "1", "M->", "C-r")
				keys("-l", "# Greeting in main.go")
				keys("Enter", "C-u", "0", "C-l")
				shown := waitFor("the mark", func(s string) bool {
					return strings.Contains(s, "summarised for the model: the first question and its answer") && strings.Contains(s, "exits with status 0.") &&
						strings.Contains(s, "Say how the program ends.\n\n[image: ")
				})
				if a, m, b := strings.Index(shown, "Lines 5-7"), strings.Index(shown, "summarised for the model"), strings.Index(shown, "And after that?"); a < 0 || !(a < m && m < b) {
					t.Errorf("the mark is not between the first answer and the second question:\n%s", shown)
				}
				render(t, emacs, screen(true), theme.bg, theme.fg, filepath.Join(dir, "emacs-compact-"+theme.name+".png"), 1000, 740)

				// The model edits main.go (unsaved since the typing above): the
				// edit is shown as a diff for review, then accepted with C-c C-c.
				fake.Enqueue(openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "e1", Name: "edit_file",
					Arguments: `{"path": "main.go", "old_string": "\tfmt.Println(\"héllo\")\n", ` +
						`"new_string": "\tname := \"wörld\"\n\tfmt.Println(\"héllo,\", name)\n"}`}}},
					openaitest.Reply{Chunks: []string{"`main` now ", "greets the world."}})
				keys("C-x", "b")
				keys("-l", "main.go")
				keys("Enter", "C-c", "x", "a")
				waitFor("the prompt", func(s string) bool { return strings.Contains(screenshot.LastLine(s), "Ask ctxls") })
				keys("-l", "Greet the world by name.")
				keys("Enter")
				waitFor("the review", func(s string) bool {
					return strings.Contains(s, "ctxls: edit main.go (+2 −1 lines)   C-c C-c accept   C-c C-a accept all in this turn   C-c C-k reject") &&
						strings.Contains(s, "against its text now (unsaved edits included)") && strings.Contains(s, `fmt.Println("héllo,", name)`)
				})
				render(t, emacs, screen(true), theme.bg, theme.fg, filepath.Join(dir, "emacs-review-"+theme.name+".png"), 1000, 740)
				keys("C-x", "o", "C-c", "C-c")
				waitFor("the edit in the buffer", func(s string) bool {
					return strings.Contains(s, `name := "wörld"`) && mainModified.MatchString(s) && !strings.Contains(s, "C-c C-c accept")
				})
				// The turn's end, before the workspace is removed: the daemon
				// writes into it until then.
				waitFor("the turn's end", func(s string) bool {
					return strings.Contains(s, "? keys") && !strings.Contains(s, "C-c C-k cancel") // the chat's header line
				})
			})
		}
	})
}

// The mode lines the tests wait for: Emacs 30 pads the position ("Top
// L1" reads "Top   L1") and puts spaces before the frame's name ("-UUU:**-
// F1") where Emacs 28 has none ("Top L1", "-UUU:**--F1").
var (
	chatTopLine  = regexp.MustCompile(`\*ctxls chat\* +Top +L1 `)
	chatAllLine  = regexp.MustCompile(`\*ctxls chat\* +All +L1 `)
	mainModified = regexp.MustCompile(`-UUU:\*\*-[- ]*F1  main\.go`)
)

// render renders a terminal's screen (with its colours) to png, for the
// Emacs on PATH (Debian's, the one docs/ shows); in a newer Emacs the
// test takes the same steps and checks, and renders nothing.
func render(t *testing.T, emacs emacsVersion, screen, bg, fg, png string, width, height int) {
	t.Helper()
	if emacs.Name != "path" {
		return
	}
	if err := screenshot.HTML(screenshot.TerminalColors(screen, bg, fg), png, width, height); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", png)
}

// headerLine is the line of screen that starts with prefix, trailing
// spaces cut, or "".
func headerLine(screen, prefix string) string {
	for _, l := range strings.Split(screen, "\n") {
		if strings.HasPrefix(l, prefix) {
			return strings.TrimRight(l, " ")
		}
	}
	return ""
}

// onePixelPNG is a 1×1 PNG image.
func onePixelPNG(t *testing.T) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestEmacsSearchScreenshot renders, in a light and a dark theme, the chat
// after the model searched the workspace: grep's line shown (RET) with its
// matches as buttons, the unsaved one marked, find_files' and
// list_directory's lines, and the file a match's button visited beside it,
// to CTXLS_SCREENSHOT_DIR/emacs-search-light.png and -dark.png. It runs
// only when that variable is set:
// CTXLS_SCREENSHOT_DIR=$PWD/docs go test ./editors/emacs -run SearchScreenshot
func TestEmacsSearchScreenshot(t *testing.T) {
	dir := screenshot.Dir(t, "emacs")
	eachEmacs(t, func(t *testing.T, emacs emacsVersion) {
		readLisp(t)
		bin := lsptest.BuildBinary(t)
		for _, theme := range termThemes {
			t.Run(theme.name, func(t *testing.T) {
				fake := openaitest.New(t)
				fake.Enqueue(searchReplies()...)
				work := searchWorkspace(t)
				setup := terminalSetup(t, emacs, bin, scratchDir(t), fake.URL, theme.emacsTheme, ";; The chat beside the file, as on a wide screen.\n(setq split-width-threshold 120)")
				term := startTerminal(t, emacs, "ctxls-emacs-search-"+emacs.tmuxName()+"-"+theme.name, 164, 34, work, setup, filepath.Join(work, "auth", "handler.go"))
				keys, screen, waitFor := term.Keys, term.Screen, term.WaitFor
				// Typed, not saved: the buffer calls loginRedirect on line 3.
				keys("M-<", "C-n", "C-n", "C-k")
				keys("-l", "func handle() { loginRedirect() }")
				keys("C-c", "x", "a")
				waitFor("the prompt", func(s string) bool { return strings.Contains(screenshot.LastLine(s), "Ask ctxls") })
				keys("-l", "Where is loginRedirect called?")
				keys("Enter")
				waitFor("the answer", func(s string) bool {
					return strings.Contains(s, "It is called from handle.") && strings.Contains(s, "_tokens: ")
				})
				// In the chat, RET on grep's line shows its matches; RET on a
				// match visits its file at its line in the other window.
				keys("C-x", "o", "M-<", "C-s")
				keys("-l", "grep `")
				keys("Enter", "Enter")
				waitFor("grep's matches", func(s string) bool {
					if !strings.Contains(s, "▾ grep `loginRedirect` — 2 matches in 2 files") {
						return false
					}
					return strings.Contains(s, "auth/handler.go:3: func handle() { loginRedirect() }  (unsaved)") && strings.Contains(s, "auth/login.go:3: func loginRedirect() {}")
				})
				keys("C-s")
				keys("-l", "auth/login.go:3:")
				keys("Enter", "Enter")
				waitFor("login.go visited", func(s string) bool { return strings.Contains(s, "F1  login.go") && !strings.Contains(s, "I-search") })
				render(t, emacs, screen(true), theme.bg, theme.fg, filepath.Join(dir, "emacs-search-"+theme.name+".png"), 1480, 640)
			})
		}
	})
}
