package vscode_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxSourceLines is how long a source file of the extension may grow: past
// it, a file holds more than one concern (extension.ts was once 2,088 lines,
// media/chat.js 995) and is split by feature, as src/ and media/ are.
const maxSourceLines = 800

// sourceGlobs are the extension's source files: its TypeScript and the chat
// view's scripts and stylesheets.
var sourceGlobs = []string{"src/*.ts", "media/*.js", "media/*.css"}

// TestSourceFileSizes fails when a source file of the extension is longer
// than maxSourceLines.
func TestSourceFileSizes(t *testing.T) {
	t.Parallel()
	n := 0
	for _, glob := range sourceGlobs {
		paths, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range paths {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			n++
			lines := bytes.Count(data, []byte("\n"))
			if len(data) > 0 && data[len(data)-1] != '\n' {
				lines++
			}
			if lines > maxSourceLines {
				t.Errorf("%s has %d lines, more than %d: split it by feature", path, lines, maxSourceLines)
			}
		}
	}
	if n == 0 {
		t.Fatalf("no source file matches %v", sourceGlobs)
	}
}

// TestMediaLoaded fails when a script or stylesheet under media/ is not
// loaded by the chat view's page (src/chatview.ts names each one), as when a
// part split out of chat.js or chat.css is left out of the page.
func TestMediaLoaded(t *testing.T) {
	t.Parallel()
	page, err := os.ReadFile(filepath.Join("src", "chatview.ts"))
	if err != nil {
		t.Fatal(err)
	}
	for _, glob := range []string{"media/*.js", "media/*.css"} {
		paths, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range paths {
			name := filepath.Base(path)
			if !strings.Contains(string(page), `"`+name+`"`) {
				t.Errorf("src/chatview.ts does not load media/%s", name)
			}
		}
	}
}
