package prompts

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"
)

// summaryInstructions is the system prompt of the request that summarises
// a session's earlier turns (compaction).
//
//go:embed templates/summary.md
var summaryInstructions string

// SummarySystem is the system prompt of a summary request: keep the goal,
// the decisions, the relevant files and why, the open questions and the
// exact next steps; fold a previous summary in; at most maxWords words.
func SummarySystem(maxWords int) string {
	return strings.ReplaceAll(summaryInstructions, "{{words}}", strconv.Itoa(maxWords))
}

// IsSummarySystem reports whether s is SummarySystem's prompt, for some
// number of words (a test's fake provider tells summary requests apart).
func IsSummarySystem(s string) bool {
	before, after, ok := strings.Cut(summaryInstructions, "{{words}}")
	if !ok || !strings.HasPrefix(s, before) || !strings.HasSuffix(s, after) || len(s) < len(before)+len(after)+1 {
		return false
	}
	_, err := strconv.Atoi(s[len(before) : len(s)-len(after)])
	return err == nil
}

// SummaryLine is one stored message of the turns being summarised.
type SummaryLine struct {
	ID   int64  // the message's id, shown so the summary can point at it
	Role string // user, assistant, tool or system
	Text string
	// Calls are an answer's tool calls, "name arguments" each.
	Calls []string
}

// MaxSummaryLine is how much of one message (in bytes) a summary request
// carries: a pasted log or a file a tool read says what it needs to in
// its first pages, and the request must fit the model's window.
const MaxSummaryLine = 6000

// SummaryInput is the user message of a summary request: the previous
// summary ("" when there is none) and the messages to fold in, each cut to
// MaxSummaryLine bytes. Pure: the same input gives the same bytes.
func SummaryInput(previous string, lines []SummaryLine) string {
	var b strings.Builder
	if previous != "" {
		b.WriteString("The previous summary (of the turns before these):\n\n<previous-summary>\n")
		b.WriteString(strings.TrimSpace(previous))
		b.WriteString("\n</previous-summary>\n\nThe turns since then:\n\n")
	} else {
		b.WriteString("The turns to summarise:\n\n")
	}
	b.WriteString("<conversation>\n")
	for _, l := range lines {
		fmt.Fprintf(&b, "[#%d %s]\n", l.ID, l.Role)
		if t := strings.TrimSpace(l.Text); t != "" {
			b.WriteString(cutText(t, MaxSummaryLine))
			b.WriteString("\n")
		}
		for _, c := range l.Calls {
			fmt.Fprintf(&b, "(called %s)\n", cutText(c, MaxSummaryLine/4))
		}
	}
	b.WriteString("</conversation>\n\nWrite the summary now.")
	return b.String()
}

// SummaryMessage is the summary as the model's input carries it, right
// after the system prompt: the marker (session.SummaryMarker), a line on
// what it is, and the summary.
func SummaryMessage(marker, summary string) string {
	return marker + "\nThe earlier turns of this session are summarised below; the turns after this message follow on from it. " +
		"(The user still sees the original messages.)\n\n" + strings.TrimSpace(summary) + "\n"
}

// CutOffNote ends an answer that was stopped before it ended (cancelled by
// the user, or its daemon gone) where the history gives it to the model.
const CutOffNote = "\n\n[This answer was cut off here: it was stopped before it ended.]"
