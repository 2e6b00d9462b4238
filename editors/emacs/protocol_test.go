package emacs_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/ctxls/ctxls/lsp/command"
)

var update = flag.Bool("update", false, "rewrite editors/emacs/ctxls-protocol.el from lsp/command")

// elispPrefixes name the Elisp constants of each table; the keys are the
// sections of the generated Lua table, for the cross-check below.
var elispPrefixes = map[string]string{
	"commands":             "ctxls-protocol-command-",
	"requests":             "ctxls-protocol-request-",
	"notifications":        "ctxls-protocol-notification-",
	"client_notifications": "ctxls-protocol-client-notification-",
}

// kebab is command.Name in kebab-case: "ctxls.session.regenerateTitle" →
// "session-regenerate-title".
func kebab(id string) string {
	var b strings.Builder
	for _, r := range command.Name(id) {
		if unicode.IsUpper(r) {
			b.WriteByte('-')
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// elispString quotes s as an Elisp string literal.
func elispString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// docString is doc as an Elisp docstring: lines of at most 70 bytes, and a
// parenthesis that starts a line escaped (Emacs reads it as a defun start).
func docString(doc string) string {
	return strings.ReplaceAll(elispString(wrap(doc, 70)), "\n(", "\n\\(")
}

// firstSentence is the doc line's first sentence, without Markdown code
// quotes (a backquote means something else in an Emacs docstring).
func firstSentence(doc string) string {
	doc = strings.ReplaceAll(doc, "`", "")
	if i := strings.Index(doc, ". "); i >= 0 {
		doc = doc[:i+1]
	}
	return doc
}

// wrap breaks s into lines of at most width bytes, at spaces.
func wrap(s string, width int) string {
	var b strings.Builder
	n := 0
	for i, w := range strings.Fields(s) {
		if i > 0 {
			if n+1+len(w) > width {
				b.WriteByte('\n')
				n = 0
			} else {
				b.WriteByte(' ')
				n++
			}
		}
		b.WriteString(w)
		n += len(w)
	}
	return b.String()
}

// elisp renders editors/emacs/ctxls-protocol.el from the Go tables, the
// same tables the TypeScript and Lua bindings come from.
func elisp() string {
	var b strings.Builder
	b.WriteString(";;; ctxls-protocol.el --- The ctxls protocol's names  -*- lexical-binding: t; -*-\n\n")
	b.WriteString(";; Generated from lsp/command by `go test ./editors/emacs -run TestElispProtocol -update`.\n")
	b.WriteString(";; DO NOT EDIT.  SPDX-License-Identifier: MIT\n\n")
	b.WriteString(";;; Commentary:\n\n")
	b.WriteString(";; The commands (workspace/executeCommand), requests and notifications of\n")
	b.WriteString(";; the ctxls daemon, as declared once in its Go table.  See docs/protocol.md.\n\n")
	b.WriteString(";;; Code:\n\n")
	fmt.Fprintf(&b, "(defconst ctxls-protocol-version %d\n  \"The version every command result carries as v.\")\n\n", command.V)
	section := func(prefix string, infos []command.Info) {
		for _, c := range infos {
			fmt.Fprintf(&b, "(defconst %s%s %s\n  %s)\n\n", prefix, kebab(c.ID), elispString(c.ID), docString(firstSentence(c.Doc)))
		}
	}
	section(elispPrefixes["commands"], command.Commands)
	section(elispPrefixes["requests"], command.Requests)
	section(elispPrefixes["notifications"], command.Notifications)
	section(elispPrefixes["client_notifications"], command.ClientNotifications)
	b.WriteString("(defconst ctxls-protocol-commands\n  '(")
	for i, id := range command.IDs() {
		if i > 0 {
			b.WriteString("\n    ")
		}
		b.WriteString(elispString(id))
	}
	b.WriteString(")\n  \"Every command id, as the daemon advertises them.\")\n\n")
	b.WriteString("(provide 'ctxls-protocol)\n;;; ctxls-protocol.el ends here\n")
	return b.String()
}

// TestElispProtocol keeps ctxls-protocol.el equal to what lsp/command
// generates, so a command added in Go without regenerating fails here.
func TestElispProtocol(t *testing.T) {
	const path = "ctxls-protocol.el"
	want := elisp()
	got, err := os.ReadFile(path)
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("editors/emacs/%s is stale: run go test ./editors/emacs -run TestElispProtocol -update", path)
	}
}

// TestElispProtocolMatchesLua checks every name of the generated Lua table
// (editors/nvim/lua/ctxls/protocol.lua) against ctxls-protocol.el: the two
// clients cannot disagree on a name.
func TestElispProtocolMatchesLua(t *testing.T) {
	lua, err := os.ReadFile(filepath.Join("..", "..", command.LuaPath))
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
		prefix, ok := elispPrefixes[section]
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
