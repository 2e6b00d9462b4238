package nvim_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxLuaLines is how long a Lua file of the plugin may grow: past it, a file
// holds more than one concern (init.lua was once 2,911 lines) and is split
// by concern, as lua/ctxls/ is (docs/architecture.md).
const maxLuaLines = 800

// TestLuaFileSizes fails when a .lua file under lua/ is longer than
// maxLuaLines.
func TestLuaFileSizes(t *testing.T) {
	t.Parallel()
	n := 0
	err := filepath.WalkDir("lua", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".lua") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n++
		lines := bytes.Count(data, []byte("\n"))
		if len(data) > 0 && data[len(data)-1] != '\n' {
			lines++
		}
		if lines > maxLuaLines {
			t.Errorf("%s has %d lines, more than %d: split it by concern", path, lines, maxLuaLines)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no .lua file under lua/")
	}
}
