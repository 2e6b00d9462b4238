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
	if env != "" {
		fmt.Fprintf(&b, "Environment: %s\n", env)
	}
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
	if applet := sets[SetApplet]; len(applet) > 0 {
		// [slug, "key=value", ...], as the design stores it.
		fmt.Fprintf(&b, "Last applet: %s", applet[0])
		if len(applet) > 1 {
			fmt.Fprintf(&b, " (%s)", strings.Join(applet[1:], ", "))
		}
		b.WriteString("\n")
	}
	names := make([]string, 0, len(sets))
	for name, items := range sets {
		if name != SetFiles && name != SetApplet && len(items) > 0 {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		fmt.Fprintf(&b, "%s: %s\n", name, strings.Join(sets[name], ", "))
	}
	return b.String()
}
