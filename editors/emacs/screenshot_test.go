package emacs_test

import (
	"fmt"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/editors/screenshot"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// TestEmacsScreenshot runs Emacs in a terminal (tmux) with its real command
// loop, in a light and a dark theme: it asks about a region, types into the
// file while the answer streams (the typed text shows before the answer
// ends: nothing blocks), and renders the screen to
// CTXLS_SCREENSHOT_DIR/emacs-light.png and emacs-dark.png. It runs only when
// that variable is set: CTXLS_SCREENSHOT_DIR=$PWD/docs go test ./editors/emacs -run Screenshot
func TestEmacsScreenshot(t *testing.T) {
	dir := os.Getenv("CTXLS_SCREENSHOT_DIR")
	if dir == "" {
		t.Skip("set CTXLS_SCREENSHOT_DIR to take the screenshots")
	}
	for _, tool := range []string{"tmux", "emacs", screenshot.Chromium} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed for the screenshots", tool)
		}
	}
	readLisp(t)
	bin := lsptest.BuildBinary(t)
	for _, theme := range []struct{ name, emacsTheme, bg, fg string }{
		{"light", "modus-operandi", "#ffffff", "#000000"},
		{"dark", "modus-vivendi", "#000000", "#ffffff"},
	} {
		t.Run(theme.name, func(t *testing.T) {
			fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Greeting in main.go"}}))
			fake.Enqueue(openaitest.Reply{Delay: 250 * time.Millisecond, Chunks: []string{
				"`main` prints ", "a greeting with ", "`fmt.Println`:\n\n", "- the string is ", "UTF-8, so ", "`héllo` ",
				"prints as written;\n", "- nothing else ", "runs.\n\n", "Lines 5-7 are ", "the whole program.",
			}})
			work := workspace(t)
			here, _ := filepath.Abs(".")
			setup := filepath.Join(t.TempDir(), "setup.el")
			os.WriteFile(setup, []byte(fmt.Sprintf(`
;; Debian's elpa packages (markdown-mode, when installed), as emacs without -Q.
(require 'package)
(add-to-list 'package-directory-list "/usr/share/emacs/site-lisp/elpa")
(package-initialize)
(add-to-list 'load-path %q)
(require 'ctxls)
(setq ctxls-command '(%q "serve") ctxls-data-dir %q
      ctxls-provider '(:baseURL %q :model "test-model"))
(load-theme '%s t)
(setq inhibit-startup-screen t)
(menu-bar-mode -1)
(global-set-key (kbd "C-c a") 'ctxls-command-map)
(ctxls-mode 1)
`, here, bin, t.TempDir(), fake.URL, theme.emacsTheme)), 0o644)
			session := "ctxls-emacs-shot-" + theme.name
			exec.Command("tmux", "kill-session", "-t", session).Run()
			start := exec.Command("tmux", "new-session", "-d", "-s", session, "-x", "110", "-y", "40",
				"emacs", "-nw", "-Q", "-l", setup, filepath.Join(work, "main.go"))
			start.Dir = work
			start.Env = append(os.Environ(), "OPENAI_API_KEY=", "TERM=xterm-256color", "HOME="+t.TempDir())
			if out, err := start.CombinedOutput(); err != nil {
				t.Fatalf("tmux: %v %s", err, out)
			}
			defer exec.Command("tmux", "kill-session", "-t", session).Run()
			keys := func(k ...string) {
				if out, err := exec.Command("tmux", append([]string{"send-keys", "-t", session}, k...)...).CombinedOutput(); err != nil {
					t.Fatalf("send-keys: %v %s", err, out)
				}
			}
			screen := func(colors bool) string {
				args := []string{"capture-pane", "-p", "-t", session}
				if colors {
					args = append(args, "-e")
				}
				out, _ := exec.Command("tmux", args...).Output()
				return string(out)
			}
			waitFor := func(what string, cond func(string) bool) string {
				deadline := time.Now().Add(15 * time.Second)
				for time.Now().Before(deadline) {
					if s := screen(false); cond(s) {
						return s
					}
					time.Sleep(50 * time.Millisecond)
				}
				t.Fatalf("timed out waiting for %s; the screen:\n%s", what, screen(false))
				return ""
			}
			waitFor("the mode line", func(s string) bool { return strings.Contains(s, " ctxls") && !strings.Contains(s, "starting") })
			// Select lines 5-7 (func main) and ask about them.
			keys("M-<", "C-n", "C-n", "C-n", "C-n", "C-Space", "C-n", "C-n", "C-n", "C-c", "a", "a")
			waitFor("the prompt", func(s string) bool { return strings.Contains(s, "Ask ctxls about main.go:5-7:") })
			keys("-l", "What does main print?")
			keys("Enter")
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
			// Show the whole exchange: the chat window from its top.
			keys("C-x", "o", "M-<")
			waitFor("the chat's top", func(s string) bool { return strings.Contains(s, "# Greeting in main.go") })
			png := filepath.Join(dir, "emacs-"+theme.name+".png")
			if err := screenshot.HTML(terminalHTML(screen(true), theme.bg, theme.fg), png, 1000, 740); err != nil {
				t.Fatal(err)
			}
			t.Logf("wrote %s", png)
		})
	}
}

// terminalHTML renders tmux's capture-pane -e output (SGR colour codes) as
// an HTML page, bg and fg being the terminal's default colours.
func terminalHTML(captured, bg, fg string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<!DOCTYPE html><html><head><meta charset="utf-8"><style>
body { margin: 0; background: %s; }
pre { margin: 0; padding: 8px; color: %s; font: 14px/1.25 "DejaVu Sans Mono", monospace; }
</style></head><body><pre>`, bg, fg)
	var st sgr
	open := false
	for i := 0; i < len(captured); {
		if captured[i] == 0x1b && i+1 < len(captured) && captured[i+1] == '[' {
			j := i + 2
			for j < len(captured) && (captured[j] < 0x40 || captured[j] > 0x7e) {
				j++
			}
			if j < len(captured) && captured[j] == 'm' {
				st.apply(captured[i+2 : j])
				if open {
					b.WriteString("</span>")
				}
				fmt.Fprintf(&b, `<span style="%s">`, st.css(bg, fg))
				open = true
			}
			i = j + 1
			continue
		}
		j := i
		for j < len(captured) && captured[j] != 0x1b {
			j++
		}
		b.WriteString(html.EscapeString(captured[i:j]))
		i = j
	}
	if open {
		b.WriteString("</span>")
	}
	b.WriteString("</pre></body></html>")
	return b.String()
}

// sgr is the graphic state of the terminal.
type sgr struct {
	fg, bg                  string
	bold, italic, underline bool
	reverse                 bool
}

func (s *sgr) apply(params string) {
	if params == "" {
		*s = sgr{}
		return
	}
	p := strings.Split(params, ";")
	for i := 0; i < len(p); i++ {
		n, _ := strconv.Atoi(p[i])
		switch {
		case n == 0:
			*s = sgr{}
		case n == 1:
			s.bold = true
		case n == 3:
			s.italic = true
		case n == 4:
			s.underline = true
		case n == 7:
			s.reverse = true
		case n == 22:
			s.bold = false
		case n == 23:
			s.italic = false
		case n == 24:
			s.underline = false
		case n == 27:
			s.reverse = false
		case n >= 30 && n <= 37:
			s.fg = xterm(n - 30)
		case n >= 90 && n <= 97:
			s.fg = xterm(n - 90 + 8)
		case n >= 40 && n <= 47:
			s.bg = xterm(n - 40)
		case n >= 100 && n <= 107:
			s.bg = xterm(n - 100 + 8)
		case n == 39:
			s.fg = ""
		case n == 49:
			s.bg = ""
		case (n == 38 || n == 48) && i+2 < len(p) && p[i+1] == "5":
			c, _ := strconv.Atoi(p[i+2])
			if n == 38 {
				s.fg = xterm(c)
			} else {
				s.bg = xterm(c)
			}
			i += 2
		case (n == 38 || n == 48) && i+4 < len(p) && p[i+1] == "2":
			r, _ := strconv.Atoi(p[i+2])
			g, _ := strconv.Atoi(p[i+3])
			bl, _ := strconv.Atoi(p[i+4])
			c := fmt.Sprintf("#%02x%02x%02x", r, g, bl)
			if n == 38 {
				s.fg = c
			} else {
				s.bg = c
			}
			i += 4
		}
	}
}

// css is the state as CSS; dbg and dfg are the default colours, which
// reverse video swaps in.
func (s sgr) css(dbg, dfg string) string {
	fg, bg := s.fg, s.bg
	if s.reverse {
		if fg == "" {
			fg = dfg
		}
		if bg == "" {
			bg = dbg
		}
		fg, bg = bg, fg
	}
	var parts []string
	if fg != "" {
		parts = append(parts, "color:"+fg)
	}
	if bg != "" {
		parts = append(parts, "background:"+bg)
	}
	if s.bold {
		parts = append(parts, "font-weight:bold")
	}
	if s.italic {
		parts = append(parts, "font-style:italic")
	}
	if s.underline {
		parts = append(parts, "text-decoration:underline")
	}
	return strings.Join(parts, ";")
}

// xterm is colour n of the xterm 256-colour palette.
func xterm(n int) string {
	basic := []string{"#000000", "#cd0000", "#00cd00", "#cdcd00", "#0000ee", "#cd00cd", "#00cdcd", "#e5e5e5",
		"#7f7f7f", "#ff0000", "#00ff00", "#ffff00", "#5c5cff", "#ff00ff", "#00ffff", "#ffffff"}
	switch {
	case n < 16:
		return basic[n]
	case n < 232:
		n -= 16
		level := func(v int) int {
			if v == 0 {
				return 0
			}
			return 55 + 40*v
		}
		return fmt.Sprintf("#%02x%02x%02x", level(n/36), level(n/6%6), level(n%6))
	default:
		v := 8 + 10*(n-232)
		return fmt.Sprintf("#%02x%02x%02x", v, v, v)
	}
}
