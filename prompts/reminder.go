// Package prompts turns session state into the text the model is given. Its
// functions are pure: the same inputs give byte-identical output, checked by
// golden files under testdata/ (go test ./prompts -update rewrites them).
package prompts

import (
	"fmt"
	"github.com/ctxls/ctxls/api"
	"slices"
	"strings"
)

// KnownSets are the relevant-context set names with a meaning of their own;
// other names are shown as plain lists.
const (
	SetFiles  = api.SetFiles
	SetApplet = api.SetApplet
)

// Reminder renders a session's relevant context: "Environment: <env>" when
// env (the session's envHint) is set, the relevant files that still exist,
// then "(N files not found)" when some are missing, then the last applet as
// "Last applet: slug (key=value, key=value)" (the slug alone without
// parameters), then every other set as "name: a, b" in name order. missing
// lists the files items that do not exist. The result is empty when there
// is no context and no env at all.
func Reminder(sets map[string][]string, missing []string, env string) string {
	var b strings.Builder
	for _, p := range ReminderParts(sets, missing, env) {
		b.WriteString(p.Text)
	}
	return b.String()
}

// ReminderPart is one part of the reminder: Key "env", "files" (the
// relevant files with the count of those not found), "applet", or a set's
// name; Text its lines.
type ReminderPart struct{ Key, Text string }

// ReminderParts is Reminder in parts, in its order, so a turn can repeat
// only the parts that changed.
func ReminderParts(sets map[string][]string, missing []string, env string) []ReminderPart {
	var parts []ReminderPart
	if env != "" {
		parts = append(parts, ReminderPart{"env", fmt.Sprintf("Environment: %s\n", env)})
	}
	var b strings.Builder
	files := sets[SetFiles]
	var present []string
	for _, f := range files {
		if !slices.Contains(missing, f) {
			present = append(present, f)
		}
	}
	nMissing := len(files) - len(present)
	if len(present) > 0 {
		b.WriteString("Relevant files:\n")
		for _, f := range present {
			fmt.Fprintf(&b, "- %s\n", f)
		}
	}
	if nMissing > 0 {
		noun := "files"
		if nMissing == 1 {
			noun = "file"
		}
		fmt.Fprintf(&b, "(%d %s not found)\n", nMissing, noun)
	}
	if b.Len() > 0 {
		parts = append(parts, ReminderPart{SetFiles, b.String()})
	}
	if applet := sets[SetApplet]; len(applet) > 0 {
		// [slug, "key=value", ...], as the design stores it.
		text := "Last applet: " + applet[0]
		if len(applet) > 1 {
			text += fmt.Sprintf(" (%s)", strings.Join(applet[1:], ", "))
		}
		parts = append(parts, ReminderPart{SetApplet, text + "\n"})
	}
	names := make([]string, 0, len(sets))
	for name, items := range sets {
		if name != SetFiles && name != SetApplet && len(items) > 0 {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		parts = append(parts, ReminderPart{name, fmt.Sprintf("%s: %s\n", name, strings.Join(sets[name], ", "))})
	}
	return parts
}
