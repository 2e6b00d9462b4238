package emacs_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/api"
)

// TestElispProtocolMatchesLua checks every name of the generated Lua table
// (editors/nvim/lua/ctxls/protocol.lua) against ctxls-protocol.el: the two
// clients cannot disagree on a name.
func TestElispProtocolMatchesLua(t *testing.T) {
	t.Parallel()
	lua, err := os.ReadFile(filepath.Join("..", "..", api.LuaPath))
	if err != nil {
		t.Fatal(err)
	}
	el, err := os.ReadFile("ctxls-protocol.el")
	if err != nil {
		t.Fatal(err)
	}
	defs := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^\(defconst (\S+) "([^"]*)"$`).FindAllStringSubmatch(string(el), -1) {
		defs[m[1]] = m[2]
	}
	sectionRe := regexp.MustCompile(`^  (\w+) = \{$`)
	entryRe := regexp.MustCompile(`^    (\w+) = "([^"]*)",$`)
	section, seen := "", 0
	for _, line := range strings.Split(string(lua), "\n") {
		if m := sectionRe.FindStringSubmatch(line); m != nil {
			section = m[1]
			continue
		}
		m := entryRe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		prefix, ok := api.ElispPrefixes()[section]
		if !ok {
			t.Errorf("protocol.lua section %q has no Elisp prefix", section)
			continue
		}
		name := prefix + strings.ReplaceAll(m[1], "_", "-")
		if defs[name] != m[2] {
			t.Errorf("%s.%s = %q in protocol.lua, but (defconst %s %q) in ctxls-protocol.el", section, m[1], m[2], name, defs[name])
		}
		seen++
	}
	if seen == 0 || seen != len(defs) {
		t.Errorf("protocol.lua has %d names, ctxls-protocol.el %d", seen, len(defs))
	}
}
