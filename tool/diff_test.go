package tool

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestUnifiedDiff(t *testing.T) {
	t.Parallel()
	old := "a\nb\nc\nd\ne\nf\ng\nh\n"
	for _, c := range []struct {
		name, new, want, summary string
		create                   bool
	}{
		{"one line", strings.Replace(old, "e\n", "E\n", 1),
			"--- a/x.go\n+++ b/x.go\n@@ -2,7 +2,7 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n", "+1 −1 lines", false},
		{"insert at the top", "z\n" + old,
			"--- a/x.go\n+++ b/x.go\n@@ -1,3 +1,4 @@\n+z\n a\n b\n c\n", "+1 −0 lines", false},
		{"delete at the end", strings.TrimSuffix(old, "h\n"),
			"--- a/x.go\n+++ b/x.go\n@@ -5,4 +5,3 @@\n e\n f\n g\n-h\n", "+0 −1 lines", false},
		{"within a line", strings.Replace(old, "d\n", "dd\n", 1),
			"--- a/x.go\n+++ b/x.go\n@@ -1,7 +1,7 @@\n a\n b\n c\n-d\n+dd\n e\n f\n g\n", "+1 −1 lines", false},
	} {
		diff, summary := diffOf("x.go", old, c.new, c.create)
		if diff != c.want || summary != c.summary {
			t.Errorf("%s:\n%s\nwant\n%s(%s / %s)", c.name, diff, c.want, summary, c.summary)
		}
	}
	diff, summary := diffOf("n.go", "", "package n\n", true)
	if diff != "--- /dev/null\n+++ b/n.go\n@@ -0,0 +1,1 @@\n+package n\n" || summary != "a new file of 1 lines" {
		t.Errorf("create:\n%s %s", diff, summary)
	}
}

// TestUnifiedDiffApplies: for many edits, the hunk applied to the old
// lines gives the new lines.
func TestUnifiedDiffApplies(t *testing.T) {
	t.Parallel()
	rnd := rand.New(rand.NewPCG(1, 2))
	words := []string{"a", "b", "c", "", "dd", "x y", "package main", "}"}
	text := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(words[rnd.IntN(len(words))] + "\n")
		}
		return b.String()
	}
	for i := range 2000 {
		old := text(rnd.IntN(20))
		lines := strings.SplitAfter(old, "\n")
		// Replace a random run of lines with random lines.
		from := rnd.IntN(len(lines))
		to := from + rnd.IntN(len(lines)-from+1)
		new := strings.Join(lines[:from], "") + text(rnd.IntN(4)) + strings.Join(lines[to:], "")
		if old == new {
			continue
		}
		diff, _ := diffOf("f", old, new, false)
		if got := applyHunk(t, old, diff); got != new {
			t.Fatalf("case %d: old %q new %q\ndiff:\n%s\napplied: %q", i, old, new, diff, got)
		}
	}
}

// applyHunk applies a diff of one hunk to old (texts of whole lines).
func applyHunk(t *testing.T, old, diff string) string {
	t.Helper()
	parts := strings.SplitN(diff, "\n", 4)
	var oldFirst, oldCount, newFirst, newCount int
	if _, err := fmt.Sscanf(parts[2], "@@ -%d,%d +%d,%d @@", &oldFirst, &oldCount, &newFirst, &newCount); err != nil {
		t.Fatalf("header %q: %v", parts[2], err)
	}
	lines := splitLines(old)
	start := oldFirst - 1
	if oldCount == 0 {
		start = oldFirst
	}
	var out []string
	out = append(out, lines[:start]...)
	at := start
	for _, l := range splitLines(parts[3]) {
		switch l[0] {
		case ' ':
			if lines[at] != l[1:] {
				t.Fatalf("context %q is %q in the old text", l[1:], lines[at])
			}
			out = append(out, l[1:])
			at++
		case '-':
			if lines[at] != l[1:] {
				t.Fatalf("removed %q is %q in the old text", l[1:], lines[at])
			}
			at++
		case '+':
			out = append(out, l[1:])
		}
	}
	out = append(out, lines[at:]...)
	if len(out) == 0 {
		return ""
	}
	return strings.Join(out, "\n") + "\n"
}

// diffOf is unifiedDiff of two whole texts.
func diffOf(path, old, new string, create bool) (string, string) {
	start, oldEnd, newEnd := changed(old, new)
	return unifiedDiff(path, old, create, start, oldEnd, new[start:newEnd])
}

// TestReplaceInSpan: a replacement's span says where the texts differ:
// the same before it and after it, at rune boundaries, no wider than the
// replaced text.
func TestReplaceInSpan(t *testing.T) {
	t.Parallel()
	text := "package main\n\nfunc main() { println(\"😀 unsaved\") }\n"
	for _, c := range [][2]string{{"unsaved", "edited"}, {"😀 unsaved", "😃 unsaved"}, {"main() {", "main() { x()"}, {"\n\n", "\n"}, {"println", "println"[:3]}} {
		s, oe, ins, err := replaceIn("f", text, c[0], c[1], false)
		out, ne := text[:s]+ins+text[oe:], s+len(ins)
		i := strings.Index(text, c[0])
		if err != nil || out[:s] != text[:s] || out[ne:] != text[oe:] || s < i || oe > i+len(c[0]) ||
			!utf8.RuneStart(text[s]) || oe < len(text) && !utf8.RuneStart(text[oe]) {
			t.Errorf("%q → %q: span %d %d %d (%v)", c[0], c[1], s, oe, ne, err)
		}
	}
}
