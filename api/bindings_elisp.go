package api

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
)

// ElispPath is the Emacs client's generated protocol constants.
const ElispPath = "editors/emacs/ctxls-protocol.el"

// ElispPrefixes name the Elisp constants of each table; the keys are the
// sections of the generated Lua table, for the cross-check below. The
// closed string types' values are named by their type too:
// ctxls-protocol-tool-status-done is protocol.lua's tool_status.done. Built
// when the bindings are generated, not at start-up.
var ElispPrefixes = sync.OnceValue(func() map[string]string {
	m := map[string]string{
		"commands":             "ctxls-protocol-command-",
		"requests":             "ctxls-protocol-request-",
		"notifications":        "ctxls-protocol-notification-",
		"client_notifications": "ctxls-protocol-client-notification-",
		"server_requests":      "ctxls-protocol-server-request-",
		"error_kinds":          "ctxls-protocol-error-",
		"init_options":         "ctxls-protocol-init-option-",
		"settings":             "ctxls-protocol-setting-",
	}
	for _, e := range sortedEnums() {
		m[snake(e.name)] = "ctxls-protocol-" + kebab(e.name) + "-"
	}
	return m
})

// kebab is command.Name in kebab-case: "ctxls.session.regenerateTitle" →
// "session-regenerate-title".
func kebab(id string) string { return separated(id, '-') }

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
func elispFirstSentence(doc string) string {
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

// Elisp renders editors/emacs/ctxls-protocol.el from the Go tables, the
// same tables the TypeScript and Lua bindings come from.
func Elisp() string {
	var b strings.Builder
	b.WriteString(";;; ctxls-protocol.el --- The ctxls protocol's names  -*- lexical-binding: t; -*-\n\n")
	b.WriteString(";; Generated from package api by `go test ./api -update`.\n")
	b.WriteString(";; DO NOT EDIT.  SPDX-License-Identifier: MIT\n\n")
	b.WriteString(";;; Commentary:\n\n")
	b.WriteString(";; The commands (workspace/executeCommand), requests and notifications of\n")
	b.WriteString(";; the ctxls daemon, as declared once in its Go table.  See docs/protocol.md.\n\n")
	b.WriteString(";;; Code:\n\n")
	fmt.Fprintf(&b, "(defconst ctxls-protocol-version %d\n  \"The version every command result carries as v.\")\n\n", V)
	section := func(prefix string, infos []Info) {
		for _, c := range infos {
			fmt.Fprintf(&b, "(defconst %s%s %s\n  %s)\n\n", prefix, kebab(c.ID), elispString(c.ID), docString(elispFirstSentence(c.Doc)))
		}
	}
	section(ElispPrefixes()["commands"], Commands)
	section(ElispPrefixes()["requests"], Requests)
	section(ElispPrefixes()["notifications"], Notifications)
	section(ElispPrefixes()["server_requests"], ServerRequests)
	section(ElispPrefixes()["client_notifications"], ClientNotifications)
	for _, e := range sortedEnums() {
		for _, v := range e.values {
			fmt.Fprintf(&b, "(defconst %s%s %s\n  \"A value of %s.\")\n\n", ElispPrefixes()[snake(e.name)], kebab(v), elispString(v), e.name)
		}
	}
	b.WriteString("(defconst ctxls-protocol-commands\n  '(")
	for i, id := range IDs() {
		if i > 0 {
			b.WriteString("\n    ")
		}
		b.WriteString(elispString(id))
	}
	b.WriteString(")\n  \"Every command id, as the daemon advertises them.\")\n\n")
	for _, f := range jsonFields(reflect.TypeFor[InitializationOptions]()) {
		fmt.Fprintf(&b, "(defconst %s%s %s\n  %s)\n\n", ElispPrefixes()["init_options"], kebab(f.name), elispString(f.name), docString("An initializationOptions field."))
	}
	for _, f := range jsonFields(reflect.TypeFor[Settings]()) {
		fmt.Fprintf(&b, "(defconst %s%s %s\n  %s)\n\n", ElispPrefixes()["settings"], kebab(f.name), elispString(f.name), docString("A settings.ctxls field."))
	}
	for _, k := range ErrorKinds {
		fmt.Fprintf(&b, "(defconst %s%s %s\n  %s)\n\n", ElispPrefixes()["error_kinds"], kebab(string(k.Kind)), elispString(string(k.Kind)), docString(elispFirstSentence(k.Doc)))
	}
	b.WriteString("(provide 'ctxls-protocol)\n;;; ctxls-protocol.el ends here\n")
	return b.String()
}
