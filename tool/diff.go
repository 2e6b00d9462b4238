package tool

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// contextLines is how many unchanged lines a diff shows around a change.
const contextLines = 3

// unifiedDiff is the edit of old that puts inserted in place of
// old[changeStart:changeOldEnd] (see changed) as a unified diff of one hunk
// (from the first changed line to the last, with three lines around), and
// a one-line summary of it. It works from the change alone, never building
// the new text, so it costs what the change's size costs plus one count of
// the lines before it: a one-line edit of a 10 MB file is cheap.
func unifiedDiff(path, old string, create bool, changeStart, changeOldEnd int, inserted string) (diff, summary string) {
	from, to := "a/"+path, "b/"+path
	if create {
		from = "/dev/null"
	}
	// The changed region, in whole lines: [start, oldEnd) of old, and in
	// the new text from start to the same end as old's (its last s bytes,
	// old's last s bytes, are unchanged).
	start := strings.LastIndexByte(old[:changeStart], '\n') + 1
	s := len(old) - changeOldEnd
	// The common end counts in whole lines: it starts after a newline in
	// both texts (or is all of what is left). The new text's byte before
	// its common end is inserted's last, or old's before the change.
	newBreak := changeStart+len(inserted) == start
	switch {
	case inserted != "":
		newBreak = newBreak || inserted[len(inserted)-1] == '\n'
	case changeStart > 0:
		newBreak = newBreak || old[changeStart-1] == '\n'
	}
	oldBreak := changeOldEnd == start || old[changeOldEnd-1] == '\n'
	if !oldBreak || !newBreak {
		if k := strings.IndexByte(old[changeOldEnd:], '\n'); k >= 0 {
			s -= k + 1
		} else {
			s = 0
		}
	}
	oldEnd := len(old) - s
	before := lastLines(old[:start], contextLines)
	after := firstLines(old[oldEnd:], contextLines)
	oldLines := splitLines(old[start:oldEnd])
	newLines := splitLines(old[start:changeStart] + inserted + old[changeOldEnd:oldEnd])
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
	// Whether the new text ends with a newline: its last byte is old's
	// when its end is unchanged, else inserted's, else old's before the
	// change (none: it is empty).
	endsLine := true
	switch {
	case changeOldEnd < len(old):
		endsLine = old[len(old)-1] == '\n'
	case inserted != "":
		endsLine = inserted[len(inserted)-1] == '\n'
	case changeStart > 0:
		endsLine = old[changeStart-1] == '\n'
	}
	if !endsLine && len(after) == 0 && len(newLines) > 0 {
		b.WriteString("\\ No newline at end of file\n")
	}
	summary = fmt.Sprintf("+%d −%d lines", len(newLines), len(oldLines))
	if create {
		summary = fmt.Sprintf("a new file of %d lines", len(newLines))
	}
	return b.String(), summary
}

// changed is where two texts differ: from start to oldEnd in old, to newEnd
// in new (their common beginning and end left out, cut at rune
// boundaries). It compares a block at a time, so a small change in a
// large text costs a few milliseconds at most.
func changed(old, new string) (start, oldEnd, newEnd int) {
	start = commonPrefix(old, new)
	for start > 0 && start < len(old) && !utf8.RuneStart(old[start]) {
		start--
	}
	s := commonSuffix(old[start:], new[start:])
	for s > 0 && !utf8.RuneStart(old[len(old)-s]) {
		s--
	}
	return start, len(old) - s, len(new) - s
}

// block is how much commonPrefix and commonSuffix compare at once.
const block = 4096

// commonPrefix is the length of a's and b's common beginning.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	p := 0
	for p+block <= n && a[p:p+block] == b[p:p+block] {
		p += block
	}
	for p < n && a[p] == b[p] {
		p++
	}
	return p
}

// commonSuffix is the length of a's and b's common end.
func commonSuffix(a, b string) int {
	n := min(len(a), len(b))
	s := 0
	for s+block <= n && a[len(a)-s-block:len(a)-s] == b[len(b)-s-block:len(b)-s] {
		s += block
	}
	for s < n && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	return s
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
