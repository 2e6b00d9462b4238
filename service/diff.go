package service

import (
	"fmt"
	"strings"
)

// contextLines is how many unchanged lines a diff shows around a change.
const contextLines = 3

// unifiedDiff is the edit from old to new as a unified diff of one hunk
// (from the first changed line to the last, with three lines around), and
// a one-line summary of it. It works from the common beginning and end of
// the two texts, so it costs what the change's size costs plus one count
// of the lines before it: a one-line edit of a 10 MB file is cheap.
func unifiedDiff(path, old, new string, create bool) (diff, summary string) {
	from, to := "a/"+path, "b/"+path
	if create {
		from = "/dev/null"
	}
	// The changed region, in whole lines: [start, oldEnd) of old and
	// [start, newEnd) of new.
	p := 0
	for p < len(old) && p < len(new) && old[p] == new[p] {
		p++
	}
	start := strings.LastIndexByte(old[:p], '\n') + 1
	s := 0
	for s < len(old)-start && s < len(new)-start && old[len(old)-1-s] == new[len(new)-1-s] {
		s++
	}
	// The common end counts in whole lines: it starts after a newline in
	// both texts (or is all of what is left).
	atLineStart := func(text string, i int) bool { return i == start || text[i-1] == '\n' }
	if !atLineStart(old, len(old)-s) || !atLineStart(new, len(new)-s) {
		if k := strings.IndexByte(old[len(old)-s:], '\n'); k >= 0 {
			s -= k + 1
		} else {
			s = 0
		}
	}
	oldEnd, newEnd := len(old)-s, len(new)-s
	before := lastLines(old[:start], contextLines)
	after := firstLines(old[oldEnd:], contextLines)
	oldLines, newLines := splitLines(old[start:oldEnd]), splitLines(new[start:newEnd])
	first := strings.Count(old[:start], "\n") + 1 - len(before)

	var b strings.Builder
	fmt.Fprintf(&b, "--- %s\n+++ %s\n", from, to)
	oldCount := len(before) + len(oldLines) + len(after)
	newCount := len(before) + len(newLines) + len(after)
	fmt.Fprintf(&b, "@@ -%s +%s @@\n", hunkRange(first, oldCount), hunkRange(first, newCount))
	for _, l := range before {
		b.WriteString(" " + l + "\n")
	}
	for _, l := range oldLines {
		b.WriteString("-" + l + "\n")
	}
	for _, l := range newLines {
		b.WriteString("+" + l + "\n")
	}
	for _, l := range after {
		b.WriteString(" " + l + "\n")
	}
	if !strings.HasSuffix(new, "\n") && new != "" && len(after) == 0 && len(newLines) > 0 {
		b.WriteString("\\ No newline at end of file\n")
	}
	summary = fmt.Sprintf("+%d −%d lines", len(newLines), len(oldLines))
	if create {
		summary = fmt.Sprintf("a new file of %d lines", len(newLines))
	}
	return b.String(), summary
}

// hunkRange is a hunk header's "line,count" (an empty range is the line
// before it, as diff writes it).
func hunkRange(first, count int) string {
	if count == 0 {
		return fmt.Sprintf("%d,0", first-1)
	}
	return fmt.Sprintf("%d,%d", first, count)
}

// splitLines splits text into lines without their newlines.
func splitLines(text string) []string {
	if text == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(text, "\n"), "\n")
}

// lastLines are the last n lines of text (which ends at a line's start).
func lastLines(text string, n int) []string {
	i := len(text)
	for k := 0; k < n && i > 0; k++ {
		i = strings.LastIndexByte(text[:i-1], '\n') + 1
	}
	return splitLines(text[i:])
}

// firstLines are the first n lines of text.
func firstLines(text string, n int) []string {
	i := 0
	for k := 0; k < n && i < len(text); k++ {
		j := strings.IndexByte(text[i:], '\n')
		if j < 0 {
			i = len(text)
			break
		}
		i += j + 1
	}
	return splitLines(text[:i])
}
