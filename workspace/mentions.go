package workspace

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// LineRange is "PATH:N" or "PATH:N-M" at the end of a turn's file: the
// lines the user selected or named.
var LineRange = regexp.MustCompile(`^(.+):([1-9][0-9]*)(?:-([1-9][0-9]*))?$`)

// mention is "@PATH" at the start of a message or after white space.
var mention = regexp.MustCompile(`(?:^|\s)@(\S+)`)

// Mentions are the files message mentions, at most max: "@PATH" at its
// start or after white space, PATH (with ":N" or ":N-M" lines, kept on the
// item) naming a file Mentionable says a mention may send, relative to a
// workspace folder or absolute; each as "/abs/path" or "/abs/path:5-8",
// once.
func Mentions(message string, roots []string, max int) []string {
	if !strings.Contains(message, "@") || len(roots) == 0 {
		return nil
	}
	var out []string
	for _, m := range mention.FindAllStringSubmatch(message, -1) {
		item, ok := mentionedFile(m[1], roots)
		if !ok || slices.Contains(out, item) {
			continue
		}
		out = append(out, item)
		if len(out) == max {
			break
		}
	}
	return out
}

// mentionedFile resolves a mention's PATH (lines optional) to the item a
// turn's files take, "/abs/path" or "/abs/path:5-8": a regular file
// inside a workspace folder (links resolved), not under .git, without a
// secret-looking name. Trailing punctuation of the sentence around it
// ("see @main.go, then") is not part of the name unless the file is
// named so.
func mentionedFile(raw string, roots []string) (string, bool) {
	for _, text := range []string{raw, strings.TrimRight(raw, ".,;:!?)]}'\"")} {
		name, lines := text, ""
		if m := LineRange.FindStringSubmatch(text); m != nil {
			name, lines = m[1], text[len(m[1]):]
		}
		for _, p := range mentionPaths(name, roots) {
			if Mentionable(p, roots) {
				return p + lines, true
			}
		}
		if lines != "" {
			for _, p := range mentionPaths(text, roots) { // a file named "x:3"
				if Mentionable(p, roots) {
					return p, true
				}
			}
		}
	}
	return "", false
}

// mentionPaths are the absolute paths name may mean: itself when
// absolute, else under each workspace folder (with several, also under the
// folder its first element names, as listings show paths).
func mentionPaths(name string, roots []string) []string {
	if name == "" {
		return nil
	}
	if filepath.IsAbs(name) {
		return []string{filepath.Clean(name)}
	}
	var out []string
	for _, r := range roots {
		out = append(out, filepath.Join(r, filepath.FromSlash(name)))
	}
	if len(roots) > 1 {
		if first, rest, ok := strings.Cut(name, "/"); ok {
			for _, r := range roots {
				if filepath.Base(r) == first {
					out = append(out, filepath.Join(r, filepath.FromSlash(rest)))
				}
			}
		}
	}
	return out
}

// Mentionable reports whether a mention may send p: a regular file inside
// a workspace folder (links resolved), not under .git, without a
// secret-looking name (ctxls.workspace.files lists no other).
func Mentionable(p string, roots []string) bool {
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	if SecretName(p) || InGitDir(p) {
		return false
	}
	g := Guard{Roots: roots}
	return g.Refusal(p) == ""
}

// InGitDir reports whether path p has a .git folder among its elements:
// the repository's own files, which ctxls neither sends nor edits.
func InGitDir(p string) bool {
	return slices.Contains(strings.Split(filepath.ToSlash(p), "/"), ".git")
}
