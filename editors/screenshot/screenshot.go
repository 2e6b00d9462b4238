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
