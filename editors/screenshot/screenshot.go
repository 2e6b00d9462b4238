// Package screenshot renders HTML to PNG with headless Chromium, for the
// editor clients' documentation screenshots (taken by tests that run only
// when CTXLS_SCREENSHOT_DIR is set).
package screenshot

import (
	"fmt"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// Chromium is the browser binary (Debian's chromium package).
const Chromium = "chromium"

// HTML renders page to png at width×height pixels.
func HTML(page, png string, width, height int) error {
	dir, err := os.MkdirTemp("", "ctxls-shot-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	src := filepath.Join(dir, "page.html")
	if err := os.WriteFile(src, []byte(page), 0o644); err != nil {
		return err
	}
	abs, err := filepath.Abs(png)
	if err != nil {
		return err
	}
	cmd := exec.Command(Chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
		"--user-data-dir="+filepath.Join(dir, "profile"), fmt.Sprintf("--window-size=%d,%d", width, height),
		"--screenshot="+abs, "file://"+src)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("chromium: %v\n%s", err, out)
	}
	if _, err := os.Stat(abs); err != nil {
		return fmt.Errorf("chromium wrote no screenshot: %v", err)
	}
	return nil
}

// Terminal renders captured terminal text as a dark terminal window.
func Terminal(text, png string, width, height int) error {
	page := `<!DOCTYPE html><html><head><meta charset="utf-8"><style>
body { margin: 0; background: #1e1e1e; }
pre { margin: 0; padding: 10px; color: #d4d4d4; font: 14px/1.25 "DejaVu Sans Mono", monospace; }
</style></head><body><pre>` + html.EscapeString(text) + `</pre></body></html>`
	return HTML(page, png, width, height)
}

// TerminalColors renders tmux's capture-pane -e output (SGR colour codes) as
// an HTML page, bg and fg being the terminal's default colours.
func TerminalColors(captured, bg, fg string) string {
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
