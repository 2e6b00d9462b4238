package emacs_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/editors/screenshot"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// testScript prints what a Go test run prints, then fails: 17 lines,
// more than the chat shows of a command's output.
const testScript = `for p in auth billing cache config db events export feed geo http jobs mail; do
  printf 'ok   example/%-8s 0.0%ds\n' "$p" "${#p}"
done
printf -- '--- FAIL: TestGreeting (0.00s)\n'
printf '    main_test.go:9: got "héllo", want "héllo, wörld"\n'
printf 'FAIL\nFAIL example/web      0.004s\nFAIL\n'
exit 1
`

// TestEmacsCommandScreenshot renders, in a light and a dark theme, the
// model's commands, plans and ctxls-undo in the chat of an Emacs in a
// terminal (tmux): a turn that makes a plan and runs the tests (sh
// test.sh, allowed with y in the chat; 17 lines of output, failing), its
// finished command card (the last 12 lines under "… 6 lines above", the
// exit status in the failed face) to
// CTXLS_SCREENSHOT_DIR/emacs-command-light.png and -dark.png; a second
// turn that edits main.go (review mode auto) and updates the plan, its
// task list to emacs-plan-light.png and -dark.png; then C-c x u
// (ctxls-undo) and the note it leaves in the chat to emacs-undo-light.png
// and -dark.png. It runs only when that variable is set:
// CTXLS_SCREENSHOT_DIR=$PWD/docs go test ./editors/emacs -run CommandScreenshot
// youAtTop: a turn's "## You" first under the chat's header line.
var youAtTop = regexp.MustCompile(`\? keys *\n## You\n`)

func TestEmacsCommandScreenshot(t *testing.T) {
	dir := screenshot.Dir(t, "emacs")
	eachEmacs(t, func(t *testing.T, emacs emacsVersion) {
		readLisp(t)
		bin := lsptest.BuildBinary(t)
		for _, theme := range termThemes {
			t.Run(theme.name, func(t *testing.T) {
				fake := openaitest.New(t, openaitest.WithTitles(openaitest.Reply{Chunks: []string{"Fix the failing test"}}))
				plan := func(s1, s2, s3 string) string {
					return `{"items":[{"content":"Run the tests","status":"` + s1 + `"},` +
						`{"content":"Fix the greeting in main.go","status":"` + s2 + `","priority":"high"},` +
						`{"content":"Run the tests again","status":"` + s3 + `"}]}`
				}
				fake.Enqueue(
					openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "p1", Name: "update_plan", Arguments: plan("in_progress", "pending", "pending")}}},
					openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "r1", Name: "run_command", Arguments: `{"command":"sh test.sh"}`}}},
					openaitest.Reply{Chunks: []string{"`example/web` fails: ", "`TestGreeting` wants ", "`héllo, wörld`."}},
					openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "e1", Name: "edit_file",
						Arguments: `{"path":"main.go","old_string":"fmt.Println(\"héllo\")","new_string":"fmt.Println(\"héllo, wörld\")"}`}}},
					openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "p2", Name: "update_plan", Arguments: plan("completed", "completed", "in_progress")}}},
					openaitest.Reply{Chunks: []string{"The greeting ", "is fixed; ", "next, the tests again."}},
				)
				work := workspace(t)
				if err := os.WriteFile(filepath.Join(work, "test.sh"), []byte(testScript), 0o644); err != nil {
					t.Fatal(err)
				}
				setup := terminalSetup(t, emacs, bin, scratchDir(t), fake.URL, theme.emacsTheme, "")
				term := startTerminal(t, emacs, "ctxls-emacs-cmd-"+emacs.tmuxName()+"-"+theme.name, 110, 40, work, setup, filepath.Join(work, "main.go"))
				keys, screen, waitFor := term.Keys, term.Screen, term.WaitFor

				// 1. A plan, then the tests: the command asked in the chat, y there.
				keys("C-c", "x", "a")
				waitFor("the prompt", func(s string) bool { return strings.Contains(screenshot.LastLine(s), "Ask ctxls") })
				keys("-l", "Make the tests pass.")
				keys("Enter")
				waitFor("the command's question", func(s string) bool {
					return strings.Contains(s, "• run_command `sh test.sh` — waiting for your permission") && strings.Contains(s, "[y] allow once")
				})
				keys("C-x", "o", "y", "C-x", "o")
				waitFor("the first answer", func(s string) bool {
					return strings.Contains(s, "`héllo, wörld`.") && strings.Contains(s, "_tokens: ")
				})
				// The chat alone, from its top.
				keys("C-x", "o", "C-x", "1", "M-<")
				waitFor("the command card", func(s string) bool {
					return strings.Contains(s, "▸ run_command `sh test.sh` — failed: exit status 1") &&
						strings.Contains(s, "… 6 lines above (RET on the line shows them)") &&
						strings.Contains(s, "[exit status 1]") && strings.Contains(s, "• plan — 0 of 3 done") &&
						chatTopLine.MatchString(s)
				})
				render(t, emacs, screen(true), theme.bg, theme.fg, filepath.Join(dir, "emacs-command-"+theme.name+".png"), 1000, 740)

				// 2. Edits applied unasked (review mode auto), the plan updated.
				keys("M-x")
				keys("-l", "ctxls-set-review-mode")
				keys("Enter")
				keys("-l", "auto")
				keys("Enter")
				waitFor("the review mode", func(s string) bool { return strings.Contains(s, "review mode auto") })
				keys("M->", "C-c", "x", "a")
				waitFor("the prompt", func(s string) bool { return strings.Contains(screenshot.LastLine(s), "Ask ctxls") })
				keys("-l", "Fix it.")
				keys("Enter")
				waitFor("the plan updated", func(s string) bool {
					return strings.Contains(s, "• plan — 2 of 3 done") && strings.Contains(s, "next, the tests again.") &&
						strings.Count(s, "_tokens: ") == 2
				})
				keys("C-r")
				keys("-l", "## You")
				keys("Enter", "C-u", "0", "C-l")
				waitFor("the second turn at the top", func(s string) bool {
					return youAtTop.MatchString(s) && strings.Contains(s, "Fix it.") && strings.Contains(s, "- [x] Run the tests")
				})
				render(t, emacs, screen(true), theme.bg, theme.fg, filepath.Join(dir, "emacs-plan-"+theme.name+".png"), 1000, 740)

				// 3. C-c x u takes the edit back; the chat says so.
				keys("C-c", "x", "u")
				waitFor("the undo's note", func(s string) bool { return strings.Contains(s, "undid the model's changes") })
				keys("M->", "C-l", "C-l", "C-l")
				render(t, emacs, screen(true), theme.bg, theme.fg, filepath.Join(dir, "emacs-undo-"+theme.name+".png"), 1000, 740)
			})
		}
	})
}
